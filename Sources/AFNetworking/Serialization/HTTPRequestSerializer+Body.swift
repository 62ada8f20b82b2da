import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPRequestSerializer {
    /// What the body serializers (JSON, property list) share: default headers,
    /// the parameters checked (`invalid` says why they cannot be written, or
    /// nil) and encoded as the body, and a Content-Type unless the caller set one.
    /// Bad parameters throw in `AFURLRequestSerializationErrorDomain`; a default header
    /// that cannot be sent throws `NSURLErrorBadURL` in `NSURLErrorDomain`.
    func requestWithBody(_ request: URLRequest, parameters: Any?, contentType: String, format: String,
                         invalid: (Any) -> String?, encode: (Any) throws -> Data) throws -> URLRequest {
        var mutableRequest = request
        try applyDefaultHeaders(to: &mutableRequest)
        guard let parameters else { return mutableRequest }
        if let reason = invalid(parameters) {
            throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                            description: "The parameters cannot be written as \(format): \(reason)", request: request)
        }
        do {
            mutableRequest.httpBody = try encode(parameters)
        } catch {
            throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                            description: "The parameters cannot be written as \(format)", request: request, underlying: error)
        }
        if mutableRequest.value(forHTTPHeaderField: "Content-Type") == nil {
            mutableRequest.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        return mutableRequest
    }
}
