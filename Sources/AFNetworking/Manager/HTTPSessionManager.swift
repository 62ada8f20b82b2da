@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AFNetworking 2.7's `AFHTTPSessionManager` (with AFNetworking 3's progress
/// variants): a `URLSessionManager` with a base URL and a request serializer,
/// whose verb methods build a request, make a task, resume it and return it.
/// A new instance each time it is made (there is no shared one).
open class HTTPSessionManager: URLSessionManager, @unchecked Sendable {
    // @unchecked: the mutable properties live in `http` (LockedState).

    struct HTTPState {
        var baseURL: URL?
        var requestSerializer = HTTPRequestSerializer()
    }

    let http = LockedState(HTTPState())

    /// A manager for `url` (a path gets a trailing "/") and `configuration` (nil: `.default`).
    public init(baseURL url: URL?, sessionConfiguration configuration: URLSessionConfiguration?) {
        http.set(\.baseURL, to: BaseURL.normalized(url))
        super.init(sessionConfiguration: configuration)
    }

    /// A manager for `url` with the default configuration.
    public convenience init(baseURL url: URL?) {
        self.init(baseURL: url, sessionConfiguration: nil)
    }

    /// A manager without a base URL (URL strings must be absolute).
    public required convenience init(sessionConfiguration configuration: URLSessionConfiguration?) {
        self.init(baseURL: nil, sessionConfiguration: configuration)
    }

    /// A manager without a base URL, for the default configuration.
    public convenience init() {
        self.init(baseURL: nil, sessionConfiguration: nil)
    }

    /// Every relative URL string is resolved against it (as `URL(string:relativeTo:)`).
    public private(set) var baseURL: URL? {
        get { http[\.baseURL] } set { http.set(\.baseURL, to: newValue) }
    }

    /// Builds each request (default `HTTPRequestSerializer()`).
    public var requestSerializer: HTTPRequestSerializer {
        get { http[\.requestSerializer] } set { http.set(\.requestSerializer, to: newValue) }
    }

    // MARK: - Verbs

    /// GET: parameters go in the query string.
    @discardableResult @preconcurrency
    open func get(_ URLString: String, parameters: Any?,
                  success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                  failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        get(URLString, parameters: parameters, progress: nil, success: success, failure: failure)
    }

    /// GET with a download progress block (AFNetworking 3).
    @discardableResult @preconcurrency
    open func get(_ URLString: String, parameters: Any?,
                  progress: (@Sendable (Progress) -> Void)?,
                  success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                  failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "GET", URLString, .untyped(parameters), nil, downloadProgress: progress, success, failure)
    }

    /// HEAD: the success block gets the task only (there is no body).
    @discardableResult @preconcurrency
    open func head(_ URLString: String, parameters: Any?,
                   success: (@Sendable (URLSessionDataTask) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "HEAD", URLString, .untyped(parameters), nil,
                    success.map { block in { @Sendable task, _ in block(task) } }, failure)
    }

    /// POST: parameters go in the body (the serializer's encoding).
    @discardableResult @preconcurrency
    open func post(_ URLString: String, parameters: Any?,
                   success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        post(URLString, parameters: parameters, progress: nil, success: success, failure: failure)
    }

    /// POST with an upload progress block (AFNetworking 3).
    @discardableResult @preconcurrency
    open func post(_ URLString: String, parameters: Any?,
                   progress: (@Sendable (Progress) -> Void)?,
                   success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "POST", URLString, .untyped(parameters), nil, uploadProgress: progress, success, failure)
    }

    /// A multipart POST: `parameters` become form fields, `block` appends
    /// parts; the body streams from an upload task (returned as a data task, as
    /// in 2.7). An error `block` throws (a missing file) fails the request
    /// through `failure(nil, error)` before anything is sent.
    @discardableResult @preconcurrency
    open func post(_ URLString: String, parameters: Any?,
                   constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                   success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        post(URLString, parameters: parameters, constructingBodyWith: block, progress: nil, success: success, failure: failure)
    }

    /// A multipart POST with an upload progress block (AFNetworking 3).
    @discardableResult @preconcurrency
    open func post(_ URLString: String, parameters: Any?,
                   constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                   progress: (@Sendable (Progress) -> Void)?,
                   success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "POST", URLString, .multipart(fields: parameters, block: block), nil, uploadProgress: progress, success, failure)
    }

    /// PUT.
    @discardableResult @preconcurrency
    open func put(_ URLString: String, parameters: Any?,
                  success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                  failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "PUT", URLString, .untyped(parameters), nil, success, failure)
    }

    /// PATCH.
    @discardableResult @preconcurrency
    open func patch(_ URLString: String, parameters: Any?,
                    success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                    failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "PATCH", URLString, .untyped(parameters), nil, success, failure)
    }

    /// DELETE: parameters go in the query string.
    @discardableResult @preconcurrency
    open func delete(_ URLString: String, parameters: Any?,
                     success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        resumedTask(method: "DELETE", URLString, .untyped(parameters), nil, success, failure)
    }

    // MARK: - AFNetworking 2.x spellings

    // Deprecated with `renamed:` and forwarding to the methods above. Declared
    // here, in the class body, rather than in Compatibility+SessionManagers.swift:
    // Swift cannot override a member declared in an extension, and a 2.x
    // `APIClient` subclass overrides these.

    /// 2.7's `-GET:parameters:success:failure:`.
    @available(*, deprecated, renamed: "get(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func GET(_ URLString: String, parameters: Any?,
                  success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                  failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        get(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-HEAD:parameters:success:failure:`.
    @available(*, deprecated, renamed: "head(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func HEAD(_ URLString: String, parameters: Any?,
                   success: (@Sendable (URLSessionDataTask) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        head(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func POST(_ URLString: String, parameters: Any?,
                   success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        post(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:constructingBodyWithBlock:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:constructingBodyWith:success:failure:)")
    @discardableResult @preconcurrency
    open func POST(_ URLString: String, parameters: Any?,
                   constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?,
                   success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                   failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        post(URLString, parameters: parameters, constructingBodyWith: block, success: success, failure: failure)
    }

    /// 2.7's `-PUT:parameters:success:failure:`.
    @available(*, deprecated, renamed: "put(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func PUT(_ URLString: String, parameters: Any?,
                  success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                  failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        put(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-PATCH:parameters:success:failure:`.
    @available(*, deprecated, renamed: "patch(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func PATCH(_ URLString: String, parameters: Any?,
                    success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                    failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        patch(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-DELETE:parameters:success:failure:`.
    @available(*, deprecated, renamed: "delete(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func DELETE(_ URLString: String, parameters: Any?,
                     success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        delete(URLString, parameters: parameters, success: success, failure: failure)
    }

    // MARK: - Building tasks

    /// Makes the data task for a built `request`, resumes it and returns it.
    func resumedTask(_ request: URLRequest, uploadProgress: (@Sendable (Progress) -> Void)?,
                     downloadProgress: (@Sendable (Progress) -> Void)?,
                     success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask {
        let reply = TaskReply(success: success, failure: failure)
        let task = dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                            completionHandler: reply.handler)
        reply.attach(task)
        task.resume()
        return task
    }

    /// Makes the upload task streaming a built multipart `request`, resumes it and returns it.
    func resumedUploadTask(_ request: URLRequest, progress: (@Sendable (Progress) -> Void)?,
                           success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                           failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask {
        let reply = TaskReply(success: success, failure: failure)
        let task = uploadTask(withStreamedRequest: request, progress: progress, completionHandler: reply.handler)
        reply.attach(task)
        task.resume()
        return task
    }

    /// A request that cannot be built: `failure(nil, error)` on the completion
    /// queue (as in 2.7, outside the completion group).
    func reportUnbuildable(_ error: Error, to failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) {
        guard let failure else { return }
        (completionQueue ?? .main).async { failure(nil, error) }
    }

    // MARK: - NSSecureCoding, NSCopying

    /// Restores the base URL, configuration, serializers, security policy and retry policy.
    public required convenience init?(coder: NSCoder) {
        let archive = ManagerArchive(decodingFrom: coder)
        self.init(baseURL: archive.baseURL, sessionConfiguration: SessionConfigurationCoding.decode(from: coder))
        if let serializer = archive.requestSerializer { requestSerializer = serializer }
        if let serializer = archive.responseSerializer { responseSerializer = serializer }
        if let policy = archive.securityPolicy { securityPolicy = policy }
        retryPolicy = archive.retryPolicy
    }

    /// Archives the configuration, base URL, serializers and security policy.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        ManagerArchive(baseURL: baseURL, requestSerializer: requestSerializer, responseSerializer: responseSerializer,
                       securityPolicy: securityPolicy).encode(to: coder)
    }

    /// A new manager of the same class: same base URL and configuration,
    /// copies of the serializers and policy, no blocks, no tasks.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = super.copy(with: zone)
        if let http = copy as? HTTPSessionManager {
            http.baseURL = baseURL
            if let serializer = requestSerializer.copy() as? HTTPRequestSerializer { http.requestSerializer = serializer }
        }
        return copy
    }

    /// The class, address, base URL, session and operation queue (2.7's format).
    open override var description: String {
        "<\(Swift.type(of: self)): \(Unmanaged.passUnretained(self).toOpaque()), baseURL: \(baseURL?.absoluteString ?? "(null)"), "
            + "session: \(session), operationQueue: \(operationQueue)>"
    }
}

/// Maps a task's completion onto a verb's success and failure blocks, which
/// receive the task object the verb returned. The task is known only after
/// the completion handler was made, and the reference is dropped once used
/// (task → handler → this → task would otherwise never be freed).
private final class TaskReply: Sendable {
    private let success: (@Sendable (URLSessionDataTask, Any?) -> Void)?
    private let failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?
    private let task = LockedState<URLSessionDataTask?>(nil)

    init(success: (@Sendable (URLSessionDataTask, Any?) -> Void)?, failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) {
        self.success = success
        self.failure = failure
    }

    func attach(_ task: URLSessionDataTask) {
        self.task.withLock { $0 = task }
    }

    var handler: @Sendable (URLResponse, Any?, Error?) -> Void {
        { [self] _, object, error in
            let task = self.task.withLock { task -> URLSessionDataTask? in
                defer { task = nil }
                return task
            }
            if let error {
                failure?(task, error)
            } else if let task {
                let result = SerializedObject(value: object)
                success?(task, result.value)
            }
        }
    }
}
