@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs' operations without the enqueue: for a batch
/// (`batchOfRequestOperations`), a dependency graph (`addDependency` before
/// adding them to a queue) or a queue of the caller's own.
extension HTTPRequestOperationManager {
    /// The operation a verb would enqueue — `method` on `URLString` (relative
    /// to `baseURL`), `parameters` encoded by the request serializer,
    /// `headers` over its defaults for this request only, and the manager's
    /// settings — but not enqueued: add it to a queue (or `start()` it) yourself.
    ///
    /// A request that cannot be built (a bad URL, parameters the serializer
    /// refuses, a bad header field) returns nil and calls `failure(nil, error)`
    /// on the completion queue, as a verb does; nothing is sent.
    @preconcurrency
    public func httpRequestOperation(withHTTPMethod method: String, urlString URLString: String, parameters: Any?,
                                     headers: [String: String]? = nil,
                                     success: HTTPRequestOperation.SuccessBlock?,
                                     failure: FailureBlock?) -> HTTPRequestOperation? {
        unenqueuedOperation(method, URLString, .untyped(parameters), headers, success, failure)
    }

    /// A verb's operation, not enqueued (nil, after `failure(nil, error)`, when its request cannot be built).
    func unenqueuedOperation(_ method: String, _ URLString: String, _ parameters: VerbParameters, _ headers: [String: String]?,
                             _ success: HTTPRequestOperation.SuccessBlock?, _ failure: FailureBlock?) -> HTTPRequestOperation? {
        guard let request = verbRequest(method, URLString, parameters, headers, reportingTo: failure) else { return nil }
        return httpRequestOperation(with: request, success: success,
                                    failure: failure.map { block in { @Sendable operation, error in block(operation, error) } })
    }
}
