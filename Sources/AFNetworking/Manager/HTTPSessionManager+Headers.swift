import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs with per-call header fields (AFNetworking 4.x's
/// `GET:parameters:headers:progress:success:failure:` and its siblings): each
/// field is set over the request serializer's default headers for this
/// request only (the shared serializer is not changed). A field whose name is
/// not a token or whose value holds a CR, LF or NUL fails the call through
/// `failure(nil, error)` (`NSURLErrorBadURL`) on the completion queue, and no
/// task is made.
extension HTTPSessionManager {
    /// The verbs' success and failure blocks.
    typealias DataTaskSuccess = @Sendable (URLSessionDataTask, Any?) -> Void
    typealias DataTaskFailure = @Sendable (URLSessionDataTask?, Error) -> Void

    /// GET with per-call header fields and an optional download progress block.
    @discardableResult @preconcurrency
    public func get(_ URLString: String, parameters: Any?, headers: [String: String]?,
                    progress: (@Sendable (Progress) -> Void)? = nil,
                    success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                    failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "GET", URLString, .untyped(parameters), headers, downloadProgress: progress, success, failure)
    }

    /// HEAD with per-call header fields; the success block gets the task only.
    @discardableResult @preconcurrency
    public func head(_ URLString: String, parameters: Any?, headers: [String: String]?,
                     success: (@Sendable (URLSessionDataTask) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "HEAD", URLString, .untyped(parameters), headers,
                    success.map { block in { @Sendable task, _ in block(task) } }, failure)
    }

    /// POST with per-call header fields and an optional upload progress block.
    @discardableResult @preconcurrency
    public func post(_ URLString: String, parameters: Any?, headers: [String: String]?,
                     progress: (@Sendable (Progress) -> Void)? = nil,
                     success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "POST", URLString, .untyped(parameters), headers, uploadProgress: progress, success, failure)
    }

    /// A multipart POST with per-call header fields (a `Content-Type` among
    /// them replaces the multipart one, boundary included: leave it out).
    @discardableResult @preconcurrency
    public func post(_ URLString: String, parameters: Any?, headers: [String: String]?,
                     constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                     progress: (@Sendable (Progress) -> Void)? = nil,
                     success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "POST", URLString, .multipart(fields: parameters, block: block), headers, uploadProgress: progress, success, failure)
    }

    /// PUT with per-call header fields.
    @discardableResult @preconcurrency
    public func put(_ URLString: String, parameters: Any?, headers: [String: String]?,
                    success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                    failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "PUT", URLString, .untyped(parameters), headers, success, failure)
    }

    /// PATCH with per-call header fields.
    @discardableResult @preconcurrency
    public func patch(_ URLString: String, parameters: Any?, headers: [String: String]?,
                      success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "PATCH", URLString, .untyped(parameters), headers, success, failure)
    }

    /// DELETE with per-call header fields.
    @discardableResult @preconcurrency
    public func delete(_ URLString: String, parameters: Any?, headers: [String: String]?,
                       success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "DELETE", URLString, .untyped(parameters), headers, success, failure)
    }

    /// The one way a callback verb is sent: builds the request (a failure goes
    /// to `failure(nil, error)`), makes its task and resumes it.
    func resumedTask(method: String, _ URLString: String, _ parameters: VerbParameters, _ headers: [String: String]?,
                     uploadProgress: (@Sendable (Progress) -> Void)? = nil, downloadProgress: (@Sendable (Progress) -> Void)? = nil,
                     _ success: DataTaskSuccess?, _ failure: DataTaskFailure?) -> URLSessionDataTask? {
        let request: URLRequest
        do {
            request = try verbRequest(method, URLString, parameters, headers)
        } catch {
            reportUnbuildable(error, to: failure)
            return nil
        }
        if case .multipart = parameters {
            // The multipart body streams from an upload task (returned as a data task, as in 2.7).
            return resumedUploadTask(request, progress: uploadProgress, success: success, failure: failure)
        }
        return resumedTask(request, uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure)
    }
}
