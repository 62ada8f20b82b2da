@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// The convenience facade of AFNetworking 2.x (`AFHTTPRequestOperationManager`):
/// builds requests relative to a base URL with its request serializer, wraps
/// them in `HTTPRequestOperation`s carrying its settings, and runs them on its
/// operation queue.
open class HTTPRequestOperationManager: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    // @unchecked: every mutable property lives in `state` (LockedState).

    /// A failure block of the verb methods: the operation is nil when the
    /// request could not even be built.
    public typealias FailureBlock = @Sendable (HTTPRequestOperation?, Error) -> Void

    private struct State {
        var requestSerializer = HTTPRequestSerializer()
        var responseSerializer: HTTPResponseSerializer = JSONResponseSerializer()
        var operationQueue: OperationQueue = DependencySafeOperationQueue()
        var shouldUseCredentialStorage = true
        var credential: URLCredential?
        var securityPolicy = SecurityPolicy.default()
        var reachabilityManager = NetworkReachabilityManager.shared()
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var clientCertificate: ClientCertificate?
        var timeoutIntervalForResource: TimeInterval = 0
        var retryPolicy: RetryPolicy?
        var requestInterceptor: (any RequestInterceptor)?
        var logger: Logger?
        var proxies: [AnyHashable: Any]?
    }
    private let state = LockedState(State())

    /// Every relative URL string is resolved against it. A path gets a
    /// trailing "/" so that "users" under "http://h/api" means "/api/users".
    /// (Written only by the initializers, so reading it needs no lock.)
    public private(set) var baseURL: URL?

    /// Builds each request (default `HTTPRequestSerializer()`).
    public var requestSerializer: HTTPRequestSerializer {
        get { state[\.requestSerializer] } set { state.set(\.requestSerializer, to: newValue) }
    }
    /// Given to each operation (default `JSONResponseSerializer()`). Shared,
    /// as in 2.7: serializers are thread-safe, so changing its settings while
    /// operations run is safe and affects those that have not serialized yet.
    public var responseSerializer: HTTPResponseSerializer {
        get { state[\.responseSerializer] } set { state.set(\.responseSerializer, to: newValue) }
    }
    /// Where the verb methods enqueue their operations.
    public var operationQueue: OperationQueue {
        get { state[\.operationQueue] } set { state.set(\.operationQueue, to: newValue) }
    }
    /// Copied onto each operation (default true).
    public var shouldUseCredentialStorage: Bool {
        get { state[\.shouldUseCredentialStorage] } set { state.set(\.shouldUseCredentialStorage, to: newValue) }
    }
    /// Copied onto each operation.
    public var credential: URLCredential? {
        get { state[\.credential] } set { state.set(\.credential, to: newValue) }
    }
    /// Given to each operation (default `SecurityPolicy.default()`). Shared, as
    /// in 2.7; each hop of each operation takes a snapshot when it starts.
    public var securityPolicy: SecurityPolicy {
        get { state[\.securityPolicy] } set { state.set(\.securityPolicy, to: newValue) }
    }
    /// Watches the network (`NetworkReachabilityManager.shared()`, as in 2.6+); not started by the manager.
    public var reachabilityManager: NetworkReachabilityManager {
        get { state[\.reachabilityManager] } set { state.set(\.reachabilityManager, to: newValue) }
    }
    /// Copied onto each operation (nil = main queue).
    public var completionQueue: DispatchQueue? {
        get { state[\.completionQueue] } set { state.set(\.completionQueue, to: newValue) }
    }
    /// Copied onto each operation (nil = a shared group).
    public var completionGroup: DispatchGroup? {
        get { state[\.completionGroup] } set { state.set(\.completionGroup, to: newValue) }
    }

    /// The proxies of every operation the manager makes (copied to each, as
    /// `URLConnectionOperation.connectionProxyDictionary`; same keys and
    /// rules). nil (the default): the environment decides; empty: direct.
    public var connectionProxyDictionary: [AnyHashable: Any]? {
        get { state[\.proxies] } set { state.set(\.proxies, to: newValue) }
    }

    /// Copied onto each operation: presented in TLS handshakes (mutual TLS).
    public var clientCertificate: ClientCertificate? {
        get { state[\.clientCertificate] } set { state.set(\.clientCertificate, to: newValue) }
    }

    /// Copied onto each operation: its total time budget (0: none).
    public var timeoutIntervalForResource: TimeInterval {
        get { state[\.timeoutIntervalForResource] } set { state.set(\.timeoutIntervalForResource, to: newValue) }
    }

    /// Copied onto each operation: when failures are retried (nil: never).
    public var retryPolicy: RetryPolicy? {
        get { state[\.retryPolicy] } set { state.set(\.retryPolicy, to: newValue) }
    }

    /// Copied onto each operation: adapts each attempt and decides about
    /// failed ones (nil: neither); see `RequestInterceptor`. Not archived.
    public var requestInterceptor: (any RequestInterceptor)? {
        get { state[\.requestInterceptor] } set { state.set(\.requestInterceptor, to: newValue) }
    }

    /// Copied onto each operation: where its activity is logged (nil: the shared logger's).
    public var logger: Logger? {
        get { state[\.logger] } set { state.set(\.logger, to: newValue) }
    }

    /// A manager for `baseURL` (nil: URL strings must be absolute).
    public init(baseURL: URL? = nil) {
        self.baseURL = BaseURL.normalized(baseURL)
        super.init()
    }

    // MARK: - Operations

    /// An operation for `request` with the manager's serializer, credentials,
    /// security policy, completion queue and group, and these blocks. Not enqueued.
    @preconcurrency
    open func httpRequestOperation(with request: URLRequest,
                                   success: HTTPRequestOperation.SuccessBlock?,
                                   failure: HTTPRequestOperation.FailureBlock?) -> HTTPRequestOperation {
        // One consistent snapshot of the settings (one lock, not one per property).
        let settings = state.withLock { $0 }
        let operation = HTTPRequestOperation(request: request)
        operation.responseSerializer = settings.responseSerializer
        operation.securityPolicy = settings.securityPolicy
        operation.setCompletionBlockWithSuccess(success, failure: failure)
        operation.completionQueue = settings.completionQueue
        operation.completionGroup = settings.completionGroup
        // The settings few managers change are set only when changed: each
        // is kept in the operation's shared box of rare settings, which a
        // write replaces (seven writes of defaults made seven boxes per request).
        if !settings.shouldUseCredentialStorage { operation.shouldUseCredentialStorage = false }
        if let credential = settings.credential { operation.credential = credential }
        if let certificate = settings.clientCertificate { operation.clientCertificate = certificate }
        if settings.timeoutIntervalForResource != 0 { operation.timeoutIntervalForResource = settings.timeoutIntervalForResource }
        if let policy = settings.retryPolicy { operation.retryPolicy = policy }
        if let interceptor = settings.requestInterceptor { operation.requestInterceptor = interceptor }
        if let logger = settings.logger { operation.logger = logger }
        if let proxies = settings.proxies { operation.connectionProxyDictionary = proxies }
        return operation
    }

    // MARK: - Verbs

    /// GET: parameters go in the query string (the serializer's rule).
    @discardableResult @preconcurrency
    open func get(_ URLString: String, parameters: Any?,
                  success: HTTPRequestOperation.SuccessBlock?,
                  failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "GET", URLString, .untyped(parameters), nil, success, failure)
    }

    /// HEAD: the success block gets the operation only (there is no body).
    @discardableResult @preconcurrency
    open func head(_ URLString: String, parameters: Any?,
                   success: (@Sendable (HTTPRequestOperation) -> Void)?,
                   failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "HEAD", URLString, .untyped(parameters), nil,
                success.map { block in { @Sendable operation, _ in block(operation) } }, failure)
    }

    /// POST: parameters go in the body (the serializer's encoding).
    @discardableResult @preconcurrency
    open func post(_ URLString: String, parameters: Any?,
                   success: HTTPRequestOperation.SuccessBlock?,
                   failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "POST", URLString, .untyped(parameters), nil, success, failure)
    }

    /// A multipart POST: `parameters` become form fields, `block` appends parts.
    /// An error `block` throws (a missing file) fails the request through
    /// `failure(nil, error)` before anything is sent.
    @discardableResult @preconcurrency
    open func post(_ URLString: String, parameters: Any?,
                   constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                   success: HTTPRequestOperation.SuccessBlock?,
                   failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "POST", URLString, .multipart(fields: parameters, block: block), nil, success, failure)
    }

    /// PUT.
    @discardableResult @preconcurrency
    open func put(_ URLString: String, parameters: Any?,
                  success: HTTPRequestOperation.SuccessBlock?,
                  failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "PUT", URLString, .untyped(parameters), nil, success, failure)
    }

    /// PATCH.
    @discardableResult @preconcurrency
    open func patch(_ URLString: String, parameters: Any?,
                    success: HTTPRequestOperation.SuccessBlock?,
                    failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "PATCH", URLString, .untyped(parameters), nil, success, failure)
    }

    /// DELETE: parameters go in the query string (the serializer's rule).
    @discardableResult @preconcurrency
    open func delete(_ URLString: String, parameters: Any?,
                     success: HTTPRequestOperation.SuccessBlock?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        enqueue(method: "DELETE", URLString, .untyped(parameters), nil, success, failure)
    }

    // MARK: - AFNetworking 2.x spellings

    // Deprecated with `renamed:` and forwarding to the methods above. Declared
    // here, in the class body, rather than in Compatibility+OperationManager.swift:
    // Swift cannot override a member declared in an extension, and a 2.x
    // `APIClient` subclass overrides these.

    /// 2.7's `-HTTPRequestOperationWithRequest:success:failure:`.
    @available(*, deprecated, renamed: "httpRequestOperation(with:success:failure:)")
    @preconcurrency
    open func HTTPRequestOperationWithRequest(_ request: URLRequest,
                                              success: HTTPRequestOperation.SuccessBlock?,
                                              failure: HTTPRequestOperation.FailureBlock?) -> HTTPRequestOperation {
        httpRequestOperation(with: request, success: success, failure: failure)
    }

    /// 2.7's `-GET:parameters:success:failure:`.
    @available(*, deprecated, renamed: "get(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func GET(_ URLString: String, parameters: Any?,
                  success: HTTPRequestOperation.SuccessBlock?,
                  failure: FailureBlock?) -> HTTPRequestOperation? {
        get(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-HEAD:parameters:success:failure:`.
    @available(*, deprecated, renamed: "head(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func HEAD(_ URLString: String, parameters: Any?,
                   success: (@Sendable (HTTPRequestOperation) -> Void)?,
                   failure: FailureBlock?) -> HTTPRequestOperation? {
        head(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func POST(_ URLString: String, parameters: Any?,
                   success: HTTPRequestOperation.SuccessBlock?,
                   failure: FailureBlock?) -> HTTPRequestOperation? {
        post(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:constructingBodyWithBlock:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:constructingBodyWith:success:failure:)")
    @discardableResult @preconcurrency
    open func POST(_ URLString: String, parameters: Any?,
                   constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?,
                   success: HTTPRequestOperation.SuccessBlock?,
                   failure: FailureBlock?) -> HTTPRequestOperation? {
        post(URLString, parameters: parameters, constructingBodyWith: block, success: success, failure: failure)
    }

    /// 2.7's `-PUT:parameters:success:failure:`.
    @available(*, deprecated, renamed: "put(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func PUT(_ URLString: String, parameters: Any?,
                  success: HTTPRequestOperation.SuccessBlock?,
                  failure: FailureBlock?) -> HTTPRequestOperation? {
        put(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-PATCH:parameters:success:failure:`.
    @available(*, deprecated, renamed: "patch(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func PATCH(_ URLString: String, parameters: Any?,
                    success: HTTPRequestOperation.SuccessBlock?,
                    failure: FailureBlock?) -> HTTPRequestOperation? {
        patch(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-DELETE:parameters:success:failure:`.
    @available(*, deprecated, renamed: "delete(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    open func DELETE(_ URLString: String, parameters: Any?,
                     success: HTTPRequestOperation.SuccessBlock?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        delete(URLString, parameters: parameters, success: success, failure: failure)
    }

    // MARK: - Helpers

    /// The one way a verb's request is sent: its operation, made by the
    /// overridable `httpRequestOperation(with:success:failure:)`, `prepare`d
    /// (a waiting task's hook, a streamed body), then added to `operationQueue`.
    func enqueue(_ request: URLRequest, success: HTTPRequestOperation.SuccessBlock?, failure: FailureBlock?,
                 prepare: (HTTPRequestOperation) -> Void = { _ in }) -> HTTPRequestOperation {
        let operation = httpRequestOperation(with: request, success: success,
                                             failure: failure.map { block in { @Sendable operation, error in block(operation, error) } })
        prepare(operation)
        operationQueue.addOperation(operation)
        return operation
    }

    /// A request that cannot be built fails through `failure(nil, error)` on the completion queue.
    func reportFailure(_ error: Error, to failure: FailureBlock?) {
        guard let failure else { return }
        (completionQueue ?? .main).async(group: completionGroup) { failure(nil, error) }
    }

    // MARK: - NSSecureCoding, NSCopying

    /// Managers archive securely, as in 2.7.
    public static var supportsSecureCoding: Bool { true }

    /// Restores the base URL, serializers, security policy, retry policy and
    /// `timeoutIntervalForResource` (not `clientCertificate` or `logger`: see `encode(with:)`).
    public required init?(coder: NSCoder) {
        let archive = ManagerArchive(decodingFrom: coder)
        baseURL = BaseURL.normalized(archive.baseURL)
        super.init()
        if let serializer = archive.requestSerializer { requestSerializer = serializer }
        if let serializer = archive.responseSerializer { responseSerializer = serializer }
        if let policy = archive.securityPolicy { securityPolicy = policy }
        retryPolicy = archive.retryPolicy
        if let timeout = archive.timeoutIntervalForResource { timeoutIntervalForResource = timeout }
    }

    /// A new manager of this class (a subclass's included) for `baseURL`,
    /// with everything else as a new manager has it; nil when the class's
    /// `init?(coder:)` refuses an archive that holds only the base URL.
    static func fresh(baseURL: URL?) -> Self? {
        FreshInstance.make(self) { archive in
            if let baseURL { archive.encode(baseURL.absoluteString as NSString, forKey: ManagerArchive.baseURLKey) }
        }
    }

    /// Archives the base URL, serializers, security policy, retry policy and
    /// `timeoutIntervalForResource`. Never `clientCertificate` (its private
    /// key is not written into an archive) or `logger` (a handler of this process).
    open func encode(with coder: NSCoder) {
        var archive = ManagerArchive(baseURL: baseURL, requestSerializer: requestSerializer, responseSerializer: responseSerializer,
                                     securityPolicy: securityPolicy)
        archive.retryPolicy = retryPolicy
        archive.timeoutIntervalForResource = timeoutIntervalForResource
        archive.encode(to: coder)
    }

    /// A manager with the same base URL, copies of the serializers and
    /// policy, and the same client certificate, `timeoutIntervalForResource`,
    /// retry policy, request interceptor and logger (what its operations are given).
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = Self.fresh(baseURL: baseURL) ?? HTTPRequestOperationManager(baseURL: baseURL)
        if let serializer = requestSerializer.copy() as? HTTPRequestSerializer { copy.requestSerializer = serializer }
        if let serializer = responseSerializer.copy() as? HTTPResponseSerializer { copy.responseSerializer = serializer }
        if let policy = securityPolicy.copy() as? SecurityPolicy { copy.securityPolicy = policy }
        let mine = state.withLock { $0 }
        copy.state.withLock { theirs in
            theirs.clientCertificate = mine.clientCertificate
            theirs.timeoutIntervalForResource = mine.timeoutIntervalForResource
            theirs.retryPolicy = mine.retryPolicy
            theirs.requestInterceptor = mine.requestInterceptor
            theirs.logger = mine.logger
        }
        return copy
    }
}
