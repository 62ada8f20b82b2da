@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPRequestOperationManager {
    /// GET whose body is handed out as it arrives (see `ResponseBytes`):
    /// the operation is made by `httpRequestOperation(with:success:failure:)`
    /// and enqueued on `operationQueue` like any other, with its body going to
    /// the sequence (`makeResponseBytes()`); returns once the final response
    /// head is in. An HTTP error status is not thrown: check `statusCode`
    /// (the response serializer's validation is not applied to a stream).
    public func bytes(_ URLString: String, parameters: Any? = nil, headers: [String: String]? = nil)
        async throws -> (ResponseBytes, HTTPURLResponse) {
        let request = try verbRequest("GET", URLString, .untyped(parameters), headers)
        let handover = try await AsyncBridge.request {
            (finish: @escaping @Sendable (Result<Handover<(ResponseBytes, URLResponse)>, Error>) -> Void) -> (@Sendable () -> Void)? in
            let operation = enqueue(request, success: nil, failure: nil) { operation in
                let bytes = operation.makeResponseBytes()
                bytes.whenHeadArrives { head in finish(head.map { Handover(value: (bytes, $0)) }.mapError { $0 }) }
            }
            return { operation.cancel() }
        }
        let (bytes, response) = handover.value
        return (bytes, try StreamedHead.http(response, url: request.url))
    }
}
