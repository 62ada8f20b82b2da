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
        let request: URLRequest
        do {
            request = try multipartRequest(URLString, parameters: parameters, headers: headers, block: block)
        } catch {
            reportUnbuildable(error, to: failure)
            return nil
        }
        return resumedUploadTask(request, progress: progress, success: success, failure: failure)
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

    /// Builds the request (a failure goes to `failure(nil, error)`), makes its data task and resumes it.
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
        return resumedTask(request, uploadProgress: uploadProgress, downloadProgress: downloadProgress, success: success, failure: failure)
    }

    /// The request a verb with per-call headers or `Encodable` parameters sends.
    func verbRequest(_ method: String, _ URLString: String, _ parameters: VerbParameters,
                     _ headers: [String: String]?) throws -> URLRequest {
        try VerbRequest.build(requestSerializer, method: method, absoluteURL: BaseURL.absoluteString(for: URLString, relativeTo: baseURL),
                              parameters: parameters, headers: headers)
    }

    /// The multipart POST request with per-call headers over it.
    func multipartRequest(_ URLString: String, parameters: Any?, headers: [String: String]?,
                          block: (@Sendable (MultipartFormData) throws -> Void)?) throws -> URLRequest {
        let absolute = try BaseURL.absoluteString(for: URLString, relativeTo: baseURL)
        try HeaderFieldValidation.check(headers, url: URL(string: absolute))
        var request = try requestSerializer.multipartFormRequest(withMethod: "POST", urlString: absolute,
                                                                 parameters: requestSerializer.formFields(from: parameters),
                                                                 constructingBodyWith: block)
        VerbRequest.apply(headers, to: &request)
        return request
    }
}
