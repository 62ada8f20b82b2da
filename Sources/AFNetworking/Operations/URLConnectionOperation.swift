@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization

/// An `Operation` that runs one URL request on the shared `AFNetworking`
/// network thread (AFNetworking 2.7's `AFURLConnectionOperation`).
///
/// Add it to an `OperationQueue` or call `start()`. Its `isReady`,
/// `isExecuting` and `isFinished` changes are announced through
/// `willChangeValue(forKey:)` / `didChangeValue(forKey:)`, which is how
/// Foundation's queue learns of them, so dependencies, concurrency limits,
/// priorities and `waitUntilFinished()` behave as on Darwin.
///
/// Inside, the operation is a thin front-end: its lifecycle is run by a
/// `RequestDriver` (shared with the session manager's tasks), which owns the
/// `TransferStateMachine` and its lock. Settings and blocks live in a lock of
/// their own (`settings`), never held while the driver's is.
open class URLConnectionOperation: Operation, NSCopying, @unchecked Sendable {
    // @unchecked: every mutable field is inside `settings` (LockedState) or the driver.

    /// What the caller configures. What every request reads is stored
    /// inline; what most requests never set (`Rare`) sits in one immutable
    /// box, shared until written, so a queued operation carries one reference
    /// instead of some 450 bytes of empty blocks and caps. (Spelled out field
    /// by field: a generic key-path accessor copied the whole box's value on
    /// every read, +2k instructions per request.)
    struct Settings {
        var request: URLRequest
        /// nil until set or read: the default policy is OpenSSL's own
        /// verification, which needs no object (most requests never make one).
        var securityPolicy: SecurityPolicy?
        var outputStream: OutputStream?
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var completionBlock: (@Sendable () -> Void)?
        /// The queue that started the operation, if any, until it finishes:
        /// where its dependents are looked for when it is cancelled (see
        /// `DependencyLifetime`). Strong, not weak: a weak reference would move
        /// the queue's reference counts to a side table, which makes every
        /// retain the queue gets from Foundation slower (see 81943b7).
        var startingQueue: OperationQueue?
        /// `progress` and what keeps it current; nil until it is first read
        /// (an operation nobody asks makes no `Progress`).
        var progressReporter: OperationProgress?
        /// The tracer and parent context current when the operation was made
        /// (a graph puts its own span's context here); nil: no tracer.
        var trace: TraceOrigin?
        /// The challenge object handed to the challenge block, with the
        /// machine's token for it: the first answer through it counts.
        var handedOutChallenge: (challenge: URLAuthenticationChallenge, token: UInt64)?
        /// Whether the operation has finished, and who waits for that
        /// (`result()`, a graph); kept here rather than behind a lock of their
        /// own: a queued operation carries one lock less.
        var finished = false
        /// `start()` took `outputStream` (decided with it, under this lock):
        /// a stream installed later is not the output.
        var outputTaken = false
        var finishWaiters: [@Sendable () -> Void] = []
        private var rareBox = RareBox.unset

        init(request: URLRequest) {
            self.request = request
        }

        /// The settings few requests set.
        struct Rare {
            var credential: URLCredential?
            var shouldUseCredentialStorage = true
            var userInfo: [AnyHashable: Any] = [:]
            var uploadProgress: (@Sendable (Int, Int64, Int64) -> Void)?
            var downloadProgress: (@Sendable (Int, Int64, Int64) -> Void)?
            var authenticationChallenge: (@Sendable (URLConnectionOperation, URLAuthenticationChallenge) -> Void)?
            var redirectResponse: (@Sendable (URLConnectionOperation, URLRequest, URLResponse?) -> URLRequest?)?
            var cacheResponse: (@Sendable (URLConnectionOperation, CachedURLResponse) -> CachedURLResponse?)?
            /// The partial file and sidecar of a restart-proof download, if this is one.
            var resumableFile: ResumableFile?
            var clientCertificate: ClientCertificate?
            var timeoutIntervalForResource: TimeInterval = 0
            var retryPolicy: RetryPolicy?
            var requestInterceptor: (any RequestInterceptor)?
            var logger: Logger?
            /// Sees each response head as it arrives (`setHeadReceivedBlock`, for `afn -v`).
            var headReceived: (@Sendable (ReceivedResponse) -> Void)?
            /// `connectionProxyDictionary` (nil: the environment decides).
            var proxies: ProxySetting?
            /// Rate caps (0: none) and the download cap's budget, kept across hops.
            var maximumDownloadBytesPerSecond: Int64 = 0
            var maximumUploadBytesPerSecond: Int64 = 0
            var downloadLimiter: TransferRateLimiter?
            /// The caps of the `RequestGraph` running the operation: its shared
            /// download budget and this operation's share of its upload cap.
            var graphDownloadLimiter: TransferRateLimiter?
            var graphUploadShare: Int64 = 0
            /// Operations of this library that depend on this one: Foundation
            /// reads their `isReady` when this one finishes, which is no queue
            /// taking them in (see `result()`).
            var dependents: [WeakDependent] = []
        }

        /// A dependent, not kept alive by its dependency.
        struct WeakDependent {
            weak var operation: URLConnectionOperation?
        }

        /// The box of `Rare` settings: immutable, so reading a field costs no
        /// exclusivity check; a write puts a changed copy in a new box (the
        /// shared `unset` box stands for "nothing set").
        // @unchecked: immutable; like `Settings`, it is only read under the operation's settings lock or from a snapshot.
        final class RareBox: @unchecked Sendable {
            let value: Rare
            init(_ value: Rare) { self.value = value }
            static let unset = RareBox(Rare())
        }

        private mutating func changeRare(_ change: (inout Rare) -> Void) {
            var value = rareBox.value
            change(&value)
            rareBox = RareBox(value)
        }

        var credential: URLCredential? {
            get { rareBox.value.credential } set { changeRare { $0.credential = newValue } }
        }
        var shouldUseCredentialStorage: Bool {
            get { rareBox.value.shouldUseCredentialStorage } set { changeRare { $0.shouldUseCredentialStorage = newValue } }
        }
        var userInfo: [AnyHashable: Any] {
            get { rareBox.value.userInfo } set { changeRare { $0.userInfo = newValue } }
        }
        var uploadProgress: (@Sendable (Int, Int64, Int64) -> Void)? {
            get { rareBox.value.uploadProgress } set { changeRare { $0.uploadProgress = newValue } }
        }
        var downloadProgress: (@Sendable (Int, Int64, Int64) -> Void)? {
            get { rareBox.value.downloadProgress } set { changeRare { $0.downloadProgress = newValue } }
        }
        var authenticationChallenge: (@Sendable (URLConnectionOperation, URLAuthenticationChallenge) -> Void)? {
            get { rareBox.value.authenticationChallenge } set { changeRare { $0.authenticationChallenge = newValue } }
        }
        var redirectResponse: (@Sendable (URLConnectionOperation, URLRequest, URLResponse?) -> URLRequest?)? {
            get { rareBox.value.redirectResponse } set { changeRare { $0.redirectResponse = newValue } }
        }
        var cacheResponse: (@Sendable (URLConnectionOperation, CachedURLResponse) -> CachedURLResponse?)? {
            get { rareBox.value.cacheResponse } set { changeRare { $0.cacheResponse = newValue } }
        }
        var resumableFile: ResumableFile? {
            get { rareBox.value.resumableFile } set { changeRare { $0.resumableFile = newValue } }
        }
        var clientCertificate: ClientCertificate? {
            get { rareBox.value.clientCertificate } set { changeRare { $0.clientCertificate = newValue } }
        }
        var timeoutIntervalForResource: TimeInterval {
            get { rareBox.value.timeoutIntervalForResource } set { changeRare { $0.timeoutIntervalForResource = newValue } }
        }
        var retryPolicy: RetryPolicy? {
            get { rareBox.value.retryPolicy } set { changeRare { $0.retryPolicy = newValue } }
        }
        var requestInterceptor: (any RequestInterceptor)? {
            get { rareBox.value.requestInterceptor } set { changeRare { $0.requestInterceptor = newValue } }
        }
        var logger: Logger? {
            get { rareBox.value.logger } set { changeRare { $0.logger = newValue } }
        }
        var headReceived: (@Sendable (ReceivedResponse) -> Void)? {
            get { rareBox.value.headReceived } set { changeRare { $0.headReceived = newValue } }
        }
        var dependents: [WeakDependent] {
            get { rareBox.value.dependents } set { changeRare { $0.dependents = newValue } }
        }
        var proxies: ProxySetting? {
            get { rareBox.value.proxies } set { changeRare { $0.proxies = newValue } }
        }
        var maximumDownloadBytesPerSecond: Int64 {
            get { rareBox.value.maximumDownloadBytesPerSecond } set { changeRare { $0.maximumDownloadBytesPerSecond = newValue } }
        }
        var maximumUploadBytesPerSecond: Int64 {
            get { rareBox.value.maximumUploadBytesPerSecond } set { changeRare { $0.maximumUploadBytesPerSecond = newValue } }
        }
        var downloadLimiter: TransferRateLimiter? {
            get { rareBox.value.downloadLimiter } set { changeRare { $0.downloadLimiter = newValue } }
        }
        var graphDownloadLimiter: TransferRateLimiter? {
            get { rareBox.value.graphDownloadLimiter } set { changeRare { $0.graphDownloadLimiter = newValue } }
        }
        var graphUploadShare: Int64 {
            get { rareBox.value.graphUploadShare } set { changeRare { $0.graphUploadShare = newValue } }
        }
    }

    /// Runs the request's lifecycle.
    let driver: RequestDriver
    let settings: LockedState<Settings>
    /// Set once anything asked `isReady`: in swift-corelibs-foundation that is
    /// what an `OperationQueue` does when the operation is added to it, so
    /// `result()` leaves starting it to the queue.
    let readinessAsked = Atomic<Bool>(false)
    /// Dependency changes and cancels in progress (their `isReady` reads are not a queue's).
    let dependencyEdits = Atomic<Int>(0)
    /// Response body bytes delivered and request body bytes sent (the current
    /// hop's), as `URLSessionTask` counts them; a `RequestGraph` sums them.
    let bodyBytesReceived = Atomic<Int64>(0)
    let bodyBytesSent = Atomic<Int64>(0)
    var countOfBodyBytesReceived: Int64 { bodyBytesReceived.load(ordering: .relaxed) }
    var countOfBodyBytesSent: Int64 { bodyBytesSent.load(ordering: .relaxed) }

    /// Creates an operation for `request`; nothing is sent until it starts.
    public init(request: URLRequest) {
        driver = RequestDriver()
        var initial = Settings(request: request)
        initial.trace = TraceOrigin.current
        settings = LockedState(initial)
        super.init()
        driver.attach(self)
    }

    /// Restores an archived operation, ready to run unless it had finished.
    public required convenience init?(coder: NSCoder) {
        guard let request = URLConnectionOperation.decodeRequest(from: coder) else { return nil }
        self.init(request: request)
        decodeOutcome(from: coder)
        if let http = self as? HTTPRequestOperation, coder.containsValue(forKey: OperationCodingKey.responseSerializer),
           let serializer = coder.decodeObject(of: HTTPResponseSerializer.self, forKey: OperationCodingKey.responseSerializer) {
            http.responseSerializer = serializer
        }
    }

    // MARK: - Request and response

    /// The request to send. An `HTTPRequestOperation`'s `pause()` rewrites it
    /// with `Range` / `If-Range` once the entity's head has arrived (paused
    /// before that, it stays as it was).
    public internal(set) var request: URLRequest {
        get { settings[\.request] } set { settings.set(\.request, to: newValue) }
    }

    /// The last response received, set once the response head has arrived.
    public var response: URLResponse? { driver.currentResponse?.urlResponse }

    /// The transport's outcome alone, before any response serialization.
    var transportError: NSError? { driver.outcome?.error }

    /// Why the operation failed: transport errors are `NSError`s in
    /// `NSURLErrorDomain` with `NSURLErrorFailingURLErrorKey`.
    public var error: Error? { transportError }

    /// What was written to a memory output stream (the default one or a
    /// caller's); nil while running or when the body went to a file stream.
    public var responseData: Data? {
        driver.finalOutcome?.memoryBody
    }

    /// `responseData` decoded with `responseStringEncoding`.
    public var responseString: String? {
        guard let data = responseData, response != nil else { return nil }
        return String(data: data, encoding: responseStringEncoding)
    }

    /// The encoding named by the response's Content-Type charset, else UTF-8.
    public var responseStringEncoding: String.Encoding {
        TextEncoding.encoding(forCharset: ContentType.of(response).charset) ?? .utf8
    }

    // MARK: - Settings

    /// Whether `URLCredentialStorage` is consulted for authentication (default true).
    public var shouldUseCredentialStorage: Bool {
        get { settings[\.shouldUseCredentialStorage] } set { settings.set(\.shouldUseCredentialStorage, to: newValue) }
    }

    /// The credential offered on the first authentication challenge.
    public var credential: URLCredential? {
        get { settings[\.credential] } set { settings.set(\.credential, to: newValue) }
    }

    /// How the server's certificate is judged (default `SecurityPolicy.default()`).
    /// Each hop takes a snapshot when it starts.
    public var securityPolicy: SecurityPolicy {
        get {
            settings.withLock { settings in
                if let policy = settings.securityPolicy { return policy }
                let policy = SecurityPolicy.default()
                settings.securityPolicy = policy
                return policy
            }
        }
        set { settings.set(\.securityPolicy, to: newValue) }
    }

    /// Presented in the TLS handshake of every connection the operation opens
    /// (mutual TLS); nil: none. Beyond 2.7, which used the challenge block.
    public var clientCertificate: ClientCertificate? {
        get { settings[\.clientCertificate] } set { settings.set(\.clientCertificate, to: newValue) }
    }

    /// The operation's total time budget, beyond 2.7 (0, the default: none).
    /// The request's `timeoutInterval` is an idle timeout (no byte for that
    /// long); this bounds the whole operation — redirects, challenges, retries
    /// and a server dripping bytes included, pauses excluded — which then fails
    /// with `NSURLErrorTimedOut`. Read when the operation starts. Longer than a
    /// year (`.infinity`, `.greatestFiniteMagnitude`): no budget.
    public var timeoutIntervalForResource: TimeInterval {
        get { settings[\.timeoutIntervalForResource] } set { settings.set(\.timeoutIntervalForResource, to: newValue) }
    }

    /// Where this operation's activity is logged; nil (the default) uses
    /// `NetworkActivityLogger.shared`, which logs nothing unless set.
    public var logger: Logger? {
        get { settings[\.logger] } set { settings.set(\.logger, to: newValue) }
    }

    /// When failures are retried (nil, the default: never); see `RetryPolicy`.
    /// Read when the operation starts.
    public var retryPolicy: RetryPolicy? {
        get { settings[\.retryPolicy] } set { settings.set(\.retryPolicy, to: newValue) }
    }

    /// Adapts each attempt's request and decides whether a failed attempt is
    /// sent again (nil, the default: neither); see `RequestInterceptor`. A
    /// `retryPolicy` is consulted before its retrier. Read when the operation starts.
    public var requestInterceptor: (any RequestInterceptor)? {
        get { settings[\.requestInterceptor] } set { settings.set(\.requestInterceptor, to: newValue) }
    }

    /// The statuses the operation's response serializer accepts (nil: any),
    /// which narrow those the interceptor's retrier is not asked about.
    var serializerAcceptableStatusCodes: IndexSet? { nil }

    /// The request body stream; setting it replaces the request's body.
    public var inputStream: InputStream? {
        get { settings[\.request.httpBodyStream] } set { settings.set(\.request.httpBodyStream, to: newValue) }
    }

    /// Where the response body goes. Defaults to a memory stream; a file stream
    /// receives the body as it arrives and the body is not kept in memory.
    /// The stream is opened, written and closed on a queue of its own, never
    /// on the network thread.
    public var outputStream: OutputStream? {
        get {
            settings.withLock { settings in
                if settings.outputStream == nil { settings.outputStream = OutputStream(toMemory: ()) }
                return settings.outputStream
            }
        }
        set {
            let old = settings.withLock { settings -> OutputStream? in
                defer { settings.outputStream = newValue }
                return settings.outputStream
            }
            if let old, old !== newValue { old.close() }
        }
    }

    /// The queue for success, failure, progress and completion blocks (nil = main queue).
    public var completionQueue: DispatchQueue? {
        get { settings[\.completionQueue] } set { settings.set(\.completionQueue, to: newValue) }
    }

    /// The group completion work joins (nil = a group shared by all operations).
    /// It is entered when completion work is scheduled, not when the operation
    /// starts: `notify` on it means "everything delivered so far has run".
    public var completionGroup: DispatchGroup? {
        get { settings[\.completionGroup] } set { settings.set(\.completionGroup, to: newValue) }
    }

    /// Free-form values for the caller.
    public var userInfo: [AnyHashable: Any] {
        get { settings[\.userInfo] } set { settings.set(\.userInfo, to: newValue) }
    }

    var effectiveCompletionQueue: DispatchQueue { completionQueue ?? .main }
    var effectiveCompletionGroup: DispatchGroup { completionGroup ?? CompletionDefaults.group }

    // MARK: - Blocks

    /// Called on `completionQueue` as the request body is sent.
    @preconcurrency
    public func setUploadProgressBlock(_ block: (@Sendable (_ bytesWritten: Int, _ totalBytesWritten: Int64, _ totalBytesExpectedToWrite: Int64) -> Void)?) {
        settings.withLock { $0.uploadProgress = block }
    }

    /// Called on `completionQueue` as the response body arrives. Totals are
    /// absolute: after a resume they count from the entity's first byte, and
    /// the expected total is the entity's full length.
    @preconcurrency
    public func setDownloadProgressBlock(_ block: (@Sendable (_ bytesRead: Int, _ totalBytesRead: Int64, _ totalBytesExpectedToRead: Int64) -> Void)?) {
        settings.withLock { $0.downloadProgress = block }
    }

    /// Decides HTTP authentication challenges (401/407) for this operation.
    /// Runs off the network and main threads; answer through the challenge's
    /// `sender` (this operation), from any thread, once.
    @preconcurrency
    public func setWillSendRequestForAuthenticationChallengeBlock(_ block: (@Sendable (URLConnectionOperation, URLAuthenticationChallenge) -> Void)?) {
        settings.withLock { $0.authenticationChallenge = block }
    }

    /// Called for each redirect with the proposed request and the 3xx response;
    /// return the request to send, or nil to stop at the redirect.
    @preconcurrency
    public func setRedirectResponseBlock(_ block: (@Sendable (URLConnectionOperation, URLRequest, URLResponse?) -> URLRequest?)?) {
        settings.withLock { $0.redirectResponse = block }
    }

    /// Can change or refuse (nil) the response about to be cached.
    @preconcurrency
    public func setCacheResponseBlock(_ block: (@Sendable (URLConnectionOperation, CachedURLResponse) -> CachedURLResponse?)?) {
        settings.withLock { $0.cacheResponse = block }
    }

    // MARK: - Operation

    open override var isReady: Bool {
        if dependencyEdits.load(ordering: .relaxed) == 0 { readinessAsked.store(true, ordering: .relaxed) }
        return driver.phase == .ready && super.isReady
    }

    /// Foundation reads `isReady` while a dependency is added or removed;
    /// that read does not mean a queue holds the operation (see `result()`).
    open override func addDependency(_ operation: Operation) {
        dependencyEdits.wrappingAdd(1, ordering: .relaxed)
        defer { dependencyEdits.wrappingSubtract(1, ordering: .relaxed) }
        if let dependency = operation as? URLConnectionOperation {
            dependency.settings.withLock { settings in
                settings.dependents = settings.dependents.filter { $0.operation != nil } + [Settings.WeakDependent(operation: self)]
            }
        }
        super.addDependency(operation)
    }

    /// As `addDependency(_:)`.
    open override func removeDependency(_ operation: Operation) {
        dependencyEdits.wrappingAdd(1, ordering: .relaxed)
        defer { dependencyEdits.wrappingSubtract(1, ordering: .relaxed) }
        super.removeDependency(operation)
    }

    /// Runs `body` once the operation has finished (at once if it has).
    func whenFinished(_ body: @escaping @Sendable () -> Void) {
        let now = settings.withLock { settings -> Bool in
            if settings.finished { return true }
            settings.finishWaiters.append(body)
            return false
        }
        if now { body() }
    }

    open override var isExecuting: Bool { driver.phase == .executing }

    open override var isFinished: Bool { driver.phase == .finished }

    /// Whether the transfer is paused; `resume()` continues it.
    public var isPaused: Bool { driver.phase == .paused }

    open override var isAsynchronous: Bool { true }

    /// The operation's own completion block runs on `completionQueue` inside
    /// `completionGroup`, after the success or failure block, as in 2.7. It is
    /// released once it has run, so a block that captures the operation does
    /// not keep it alive.
    open override var completionBlock: (@Sendable () -> Void)? {
        get { settings[\.completionBlock] }
        set {
            settings.withLock { $0.completionBlock = newValue }
            guard newValue != nil else {
                super.completionBlock = nil
                return
            }
            super.completionBlock = { [weak self] in
                guard let self else { return }
                let (block, queue, group) = self.settings.withLock { settings in
                    defer { settings.completionBlock = nil }
                    return (settings.completionBlock, settings.completionQueue ?? .main, settings.completionGroup ?? CompletionDefaults.group)
                }
                guard let block else { return }
                MainQueueWork.async(on: queue, group: group) { block() }
            }
        }
    }

    /// Takes the operation's own completion block over (nil when there is
    /// none, or it has already been handed to its queue): Foundation's call
    /// then finds nothing to run, and the taker runs it (a batch, before its
    /// progress report). Taken under the lock Foundation's call takes it
    /// under, so it runs once either way.
    func takeCompletionBlock() -> (@Sendable () -> Void)? {
        settings.withLock { settings in
            defer { settings.completionBlock = nil }
            return settings.completionBlock
        }
    }

    /// Starts the transfer (a second call, or a call while dependencies are
    /// pending, does nothing). An operation cancelled before it started
    /// finishes at once with `NSURLErrorCancelled`.
    open override func start() {
        let cancelled = isCancelled
        guard cancelled || super.isReady else { return }
        // Foundation's queue starts an operation with itself as the current queue.
        let queue = OperationQueue.current
        let (request, stream, retry, limit, interceptor) = settings.withLock { settings in
            settings.startingQueue = queue
            settings.outputTaken = true
            return (settings.request, settings.outputStream, settings.retryPolicy, settings.timeoutIntervalForResource, settings.requestInterceptor)
        }
        let interception = interceptor.map { InterceptionPlan(interceptor: $0, serializerAcceptableStatusCodes: serializerAcceptableStatusCodes) }
        let plan = retry.map { TransferStateMachine.RetryPlan(policy: $0, bodyCanBeResent: BodyStreams.canResend(request)) }
        // The clock runs while the operation executes (paused before it ever
        // ran, it starts when resumed); longer than a year means none.
        let budget = ResourceBudget(limit: limit, url: request.url, description: "its timeoutIntervalForResource")
        driver.handle(.start(request, output: stream, retry: plan, budget: budget, cancelled: cancelled, interception: interception))
    }

    /// Ends the operation with `NSURLErrorCancelled` and calls `failure`:
    /// before it started (when its queue starts it), while it runs, waits for
    /// a redirect or challenge decision, or is paused.
    open override func cancel() {
        guard !isFinished, !isCancelled else { return }
        // Foundation's cancel() reads isReady; that read does not mean a
        // queue holds the operation (see `result()`).
        dependencyEdits.wrappingAdd(1, ordering: .relaxed)
        super.cancel()
        dependencyEdits.wrappingSubtract(1, ordering: .relaxed)
        let (request, queue) = settings.withLock { ($0.request, $0.startingQueue) }
        // Running: the dependents still in its queue are held until it has
        // finished, whoever else holds them (swift-corelibs-foundation's
        // unretained back-pointers, see `DependencyLifetime`).
        if let queue, driver.phase != .ready { DependencyLifetime.hold(dependentsOf: self, in: queue) }
        driver.handle(.cancel(request))
    }

    /// On the main queue or thread, waiting must not block the blocks queued
    /// there (the default completion queue), or it would never return: the
    /// waiter runs them itself (see `MainQueueWork`), and on the main thread
    /// the run loop keeps serving the rest of the main queue.
    open override func waitUntilFinished() {
        guard MainQueueWork.isOnMainQueue else {
            super.waitUntilFinished()
            return
        }
        MainQueueWork.shared.serve(until: { isFinished }, register: { whenFinished($0) })
    }

    // MARK: - Pause and resume

    /// Stops the transfer and keeps what arrived; `resume()` continues it.
    open func pause() {
        guard !isCancelled else { return }
        let paused = driver.handle(.pause)
        if paused.after == .paused && paused.before != .paused { didPause() }
    }

    /// Continues a paused operation: from the bytes already received when the
    /// request carries `Range` (as `HTTPRequestOperation.pause()` writes it).
    open func resume() {
        let (request, stream) = settings.withLock { ($0.request, $0.outputStream) }
        // The continuing request is worked out here as well as in `didPause()`:
        // a resume from another thread can come between the pause taking
        // effect and `didPause()` rewriting `request`.
        driver.handle(.resume(isPaused ? continuing(request) : request, output: stream))
    }

    /// Hook for subclasses: runs after `pause()` stopped the transfer.
    func didPause() {}

    /// Hook for subclasses: the request that continues a paused transfer
    /// (`HTTPRequestOperation` asks for the rest with `Range`); as it is here.
    func continuing(_ request: URLRequest) -> URLRequest { request }

    /// Completion work, once the output is final; `HTTPRequestOperation`
    /// overrides it to serialize the response and call success or failure.
    /// Must end with the driver's `.completionFinished`. Never on the network thread.
    func runCompletion(_ outcome: TransferStateMachine.Outcome) {
        CompletionDefaults.processingQueue.async { [self] in
            recordAndCacheResponse(outcome)
            driver.handle(.completionFinished)
        }
    }

    /// Bytes of the current entity already in the output: what a resumed
    /// transfer asks the server to skip.
    var bytesWrittenToOutput: Int64 {
        driver.entityBytesInOutput
    }

    // MARK: - Description

    open override var description: String {
        let (phase, request) = (driver.phase, self.request)
        return "<\(type(of: self)): \(Unmanaged.passUnretained(self).toOpaque()), state: \(phase.keyPath), cancelled: \(isCancelled ? "YES" : "NO") request: \(request), response: \(String(describing: response))>"
    }

    // MARK: - Copying

    /// A fresh, ready operation for the same request with the same progress,
    /// redirect, cache and challenge blocks, completion queue and group, as
    /// 2.7 copies (not the success/failure blocks, not the outcome).
    open func copy(with zone: NSZone? = nil) -> Any {
        let request = self.request
        // Of this operation's own class (a subclass's included); the request
        // whole, not only what an archive keeps of it.
        let made = FreshInstance.make(Self.self) { archive in
            archive.encode((request.url?.absoluteString ?? "about:blank") as NSString, forKey: OperationCodingKey.url)
        }
        let copy = made ?? (self is HTTPRequestOperation ? HTTPRequestOperation(request: request) : URLConnectionOperation(request: request))
        copy.settings.withLock { $0.request = request }
        copySettings(to: copy)
        return copy
    }

    /// Carries the blocks and settings 2.7 copies to a fresh operation.
    func copySettings(to operation: URLConnectionOperation) {
        let mine = settings.withLock { $0 }
        operation.settings.withLock { theirs in
            theirs.uploadProgress = mine.uploadProgress
            theirs.downloadProgress = mine.downloadProgress
            theirs.authenticationChallenge = mine.authenticationChallenge
            theirs.cacheResponse = mine.cacheResponse
            theirs.redirectResponse = mine.redirectResponse
            theirs.completionQueue = mine.completionQueue
            theirs.completionGroup = mine.completionGroup
            theirs.credential = mine.credential
            theirs.shouldUseCredentialStorage = mine.shouldUseCredentialStorage
            theirs.securityPolicy = mine.securityPolicy
            theirs.userInfo = mine.userInfo
            theirs.clientCertificate = mine.clientCertificate
            theirs.timeoutIntervalForResource = mine.timeoutIntervalForResource
            theirs.retryPolicy = mine.retryPolicy
            theirs.requestInterceptor = mine.requestInterceptor
            theirs.logger = mine.logger
        }
    }

    /// Restores archived state (NSSecureCoding): a finished operation keeps
    /// its outcome; an unfinished one is ready to run.
    func restore(response: URLResponse?, error: NSError?, responseData: Data?, finished: Bool) {
        guard finished else { return }
        let outcome = TransferStateMachine.Outcome(restoredResponse: response, error: error, body: responseData)
        driver.handle(.restoreFinished(outcome))
        // Restored as finished: `result()` and other waiters return at once.
        settings.withLock { $0.finished = true }
    }

    /// Whether the operation archives as finished (an executing or paused one archives as ready).
    var archivesAsFinished: Bool { driver.phase == .finished }
}

extension TransferStateMachine.Phase {
    /// The key Foundation's `OperationQueue` observes for this phase.
    var keyPath: String {
        switch self {
        case .ready: return "isReady"
        case .executing: return "isExecuting"
        case .paused: return "isPaused"
        case .finished: return "isFinished"
        }
    }
}
