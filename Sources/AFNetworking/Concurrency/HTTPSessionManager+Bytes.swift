@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPSessionManager {
    /// GET whose body is handed out as it arrives (see `ResponseBytes`);
    /// returns once the final response head is in. The request is built as
    /// the other verbs build it (base URL, request serializer, per-call
    /// `headers` over the defaults); as `bytes(for:)`, an HTTP error status
    /// is not thrown: check `statusCode`.
    public func bytes(_ URLString: String, parameters: Any? = nil, headers: [String: String]? = nil)
        async throws -> (ResponseBytes, HTTPURLResponse) {
        let request = try verbRequest("GET", URLString, .untyped(parameters), headers)
        let (bytes, response) = try await streamedTask(request).value
        return (bytes, try StreamedHead.http(response, url: request.url))
    }
}

/// The head of a streamed HTTP response, as the verbs return it.
enum StreamedHead {
    /// `response` as an `HTTPURLResponse` (anything else is a bad server response).
    static func http(_ response: URLResponse, url: URL?) throws -> HTTPURLResponse {
        guard let http = response as? HTTPURLResponse else {
            throw TransportErrors.make(NSURLErrorBadServerResponse, url: url, underlying: nil)
        }
        return http
    }
}
