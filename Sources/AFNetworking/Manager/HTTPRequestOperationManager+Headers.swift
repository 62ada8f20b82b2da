import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs with per-call header fields (AFNetworking 4.x's `headers:`):
/// each field is set over the request serializer's default headers for this
/// request only (the shared serializer is not changed). A field whose name is
/// not a token or whose value holds a CR, LF or NUL fails the call through
/// `failure(nil, error)` (`NSURLErrorBadURL`), and nothing is sent.
extension HTTPRequestOperationManager {
    /// GET with per-call header fields.
    @discardableResult @preconcurrency
    public func get(_ URLString: String, parameters: Any?, headers: [String: String]?,
                    success: HTTPRequestOperation.SuccessBlock?,
                    failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "GET", URLString, .untyped(parameters), headers, success, failure)
    }

    /// HEAD with per-call header fields; the success block gets the operation only.
    @discardableResult @preconcurrency
    public func head(_ URLString: String, parameters: Any?, headers: [String: String]?,
                     success: (@Sendable (HTTPRequestOperation) -> Void)?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "HEAD", URLString, .untyped(parameters), headers,
                success.map { block in { @Sendable operation, _ in block(operation) } }, failure)
    }

    /// POST with per-call header fields.
    @discardableResult @preconcurrency
    public func post(_ URLString: String, parameters: Any?, headers: [String: String]?,
                     success: HTTPRequestOperation.SuccessBlock?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "POST", URLString, .untyped(parameters), headers, success, failure)
    }

    /// A multipart POST with per-call header fields (a `Content-Type` among
    /// them replaces the multipart one, boundary included: leave it out).
    @discardableResult @preconcurrency
    public func post(_ URLString: String, parameters: Any?, headers: [String: String]?,
                     constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                     success: HTTPRequestOperation.SuccessBlock?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "POST", URLString, .multipart(fields: parameters, block: block), headers, success, failure)
    }

    /// PUT with per-call header fields.
    @discardableResult @preconcurrency
    public func put(_ URLString: String, parameters: Any?, headers: [String: String]?,
                    success: HTTPRequestOperation.SuccessBlock?,
                    failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "PUT", URLString, .untyped(parameters), headers, success, failure)
    }

    /// PATCH with per-call header fields.
    @discardableResult @preconcurrency
    public func patch(_ URLString: String, parameters: Any?, headers: [String: String]?,
                      success: HTTPRequestOperation.SuccessBlock?,
                      failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "PATCH", URLString, .untyped(parameters), headers, success, failure)
    }

    /// DELETE with per-call header fields.
    @discardableResult @preconcurrency
    public func delete(_ URLString: String, parameters: Any?, headers: [String: String]?,
                       success: HTTPRequestOperation.SuccessBlock?,
                       failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "DELETE", URLString, .untyped(parameters), headers, success, failure)
    }

    /// Builds the request (a failure goes to `failure(nil, error)`) and enqueues its operation.
    func enqueue(method: String, _ URLString: String, _ parameters: VerbParameters, _ headers: [String: String]?,
                 _ success: HTTPRequestOperation.SuccessBlock?, _ failure: FailureBlock?) -> HTTPRequestOperation? {
        guard let request = verbRequest(method, URLString, parameters, headers, reportingTo: failure) else { return nil }
        return enqueue(request, success: success, failure: failure)
    }
}
