@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sending a request body again after an earlier hop consumed its stream.
enum BodyStreams {
    /// A fresh copy of `stream` when it can make one (the multipart body can,
    /// as in 2.7, which re-sent only streams conforming to NSCopying).
    static func copy(of stream: InputStream?) -> InputStream? {
        guard let copyable = stream as? NSCopying else { return nil }
        return copyable.copy(with: nil) as? InputStream
    }

    /// Whether `request`'s body can be sent a second time (a retry): no
    /// stream, or one that copies itself.
    static func canResend(_ request: URLRequest) -> Bool {
        guard let stream = request.httpBodyStream else { return true }
        return stream is NSCopying
    }

    /// `request` with `fresh` as its body stream, or the error that fails the
    /// hop when there is none.
    static func resending(_ request: URLRequest, fresh: InputStream?) -> Result<URLRequest, NSError> {
        guard let fresh else {
            return .failure(TransportErrors.make(NSURLErrorRequestBodyStreamExhausted, url: request.url, underlying: nil,
                                                 description: "The request body stream was consumed and cannot be sent again."))
        }
        var resent = request
        resent.httpBodyStream = fresh
        return .success(resent)
    }
}
