import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `Operation` that runs one URL request on the shared `AFNetworking`
/// network thread (AFNetworking 2.7's `AFURLConnectionOperation`).
///
/// Add it to an `OperationQueue` or call `start()`. Its `isReady`,
/// `isExecuting` and `isFinished` changes are announced through
/// `willChangeValue(forKey:)` / `didChangeValue(forKey:)`, which is how
/// Foundation's queue learns of them, so dependencies, concurrency limits,
/// priorities and `waitUntilFinished()` behave as on Darwin.
open class URLConnectionOperation: Operation, NSCopying, @unchecked Sendable {
    /// Guards every mutable property below. Recursive because subclasses and
    /// user blocks may read properties while a locked section calls out.
    let lock = NSRecursiveLock()

    var state = OperationState.ready
    var _request: URLRequest
    /// The response head as received; `_response` is built from it on demand.
    var receivedResponse: ReceivedResponse?
    var _response: URLResponse?
    var _error: Error?
    var _responseData: Data?
    var _responseString: String?
    var _outputStream: OutputStream?
    /// Body collected without an `OutputStream` when the caller never asked for one.
    var memorySink: Data?
    /// The transfer currently running for this operation; a transfer that is no
    /// longer current (paused, cancelled) can still report, and is ignored.
    var currentTransfer: Transfer?
    /// Set once the transfer has ended and completion work is under way.
    var isDelivering = false
    /// The request of the current hop: the operation's request, or where a
    /// redirect or an authentication retry led.
    var hopRequest: URLRequest
    /// Redirects followed and credentials tried since the operation (re)started.
    var redirectCount = 0
    var authenticationFailures = 0
    /// The body of a response that may be followed up (a redirect or an
    /// authentication challenge), held until the follow-up is decided.
    var interimBody: Data?
    /// How the answer to a resumed request treats the output (see ResumeRules).
    var resumeDecision: ResumeRules.Decision?
    /// The response that stands when a resumed request finds the body complete.
    var responseBeforeResume: ReceivedResponse?
    /// Whether the current hop's response head reached `transferDidReceive`.
    var hopResponseSeen = false
    /// The cached response a conditional request is revalidating.
    var revalidating: CachedURLResponse?
    /// Whether the outcome came from `URLCache` (and so is not stored again).
    var servedFromCache = false
    /// Whether the operation was executing when it was paused (else it was
    /// paused while still waiting to start).
    var pausedAfterStart = false
    /// The byte offset the current hop asks to resume from (its `Range`), if any.
    var hopResumeOffset: Int64?
    /// The partial file and sidecar of a restart-proof download, if this is one.
    var resumableFile: ResumableFile?
    /// The challenge awaiting an answer from the challenge block, if any.
    var pendingChallenge: PendingChallenge?
    var totalBytesRead: Int64 = 0

    var uploadProgress: ((Int, Int64, Int64) -> Void)?
    var downloadProgress: ((Int, Int64, Int64) -> Void)?
    var authenticationChallenge: ((URLConnectionOperation, URLAuthenticationChallenge) -> Void)?
    var redirectResponse: ((URLConnectionOperation, URLRequest, URLResponse?) -> URLRequest?)?
    var cacheResponse: ((URLConnectionOperation, CachedURLResponse) -> CachedURLResponse?)?

    var userCompletionBlock: (@Sendable () -> Void)?
    var _completionQueue: DispatchQueue?
    var _completionGroup: DispatchGroup?
    var _userInfo: [AnyHashable: Any] = [:]
    var _credential: URLCredential?
    var _shouldUseCredentialStorage = true
    var _securityPolicy = SecurityPolicy.default()

    /// Creates an operation for `request`; nothing is sent until it starts.
    public required init(request: URLRequest) {
        _request = request
        hopRequest = request
        super.init()
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

    /// The request to send. `pause()` rewrites it with `Range` / `If-Range`.
    public internal(set) var request: URLRequest {
        get { locked { _request } }
        set { locked { _request = newValue } }
    }

    /// The last response received, set once the response head has arrived.
    public var response: URLResponse? { locked { materializedResponse() } }

    /// Builds the `HTTPURLResponse` on first use. Call with `lock` held.
    func materializedResponse() -> URLResponse? {
        if _response == nil, let received = receivedResponse {
            _response = received.makeHTTPURLResponse()
        }
        return _response
    }

    /// The transport's outcome alone, before any response serialization.
    var transportError: Error? { locked { _error } }

    /// Why the operation failed: transport errors are `NSError`s in
    /// `NSURLErrorDomain` with `NSURLErrorFailingURLErrorKey`.
    public var error: Error? { transportError }

    /// What was written to a memory output stream (the default one or a
    /// caller's); nil while running or when the body went to a file stream.
    public var responseData: Data? { locked { _responseData } }

    /// `responseData` decoded with `responseStringEncoding`.
    public var responseString: String? {
        locked {
            if _responseString == nil, materializedResponse() != nil, let data = _responseData {
                _responseString = String(data: data, encoding: responseStringEncoding)
            }
            return _responseString
        }
    }

    /// The encoding named by the response's Content-Type charset, else UTF-8.
    public var responseStringEncoding: String.Encoding {
        let name = locked { materializedResponse()?.textEncodingName }
        return TextEncoding.encoding(forCharset: name) ?? .utf8
    }

    // MARK: - Settings

    /// Whether `URLCredentialStorage` is consulted for authentication (default true).
    public var shouldUseCredentialStorage: Bool {
        get { locked { _shouldUseCredentialStorage } }
        set { locked { _shouldUseCredentialStorage = newValue } }
    }

    /// The credential offered on the first authentication challenge.
    public var credential: URLCredential? {
        get { locked { _credential } }
        set { locked { _credential = newValue } }
    }

    /// How the server's certificate is judged (default `SecurityPolicy.default()`).
    public var securityPolicy: SecurityPolicy {
        get { locked { _securityPolicy } }
        set { locked { _securityPolicy = newValue } }
    }

    /// The request body stream; setting it replaces the request's body.
    public var inputStream: InputStream? {
        get { locked { _request.httpBodyStream } }
        set { locked { _request.httpBodyStream = newValue } }
    }

    /// Where the response body goes. Defaults to a memory stream; a file stream
    /// receives the body as it arrives and the body is not kept in memory.
    public var outputStream: OutputStream? {
        get {
            locked {
                if _outputStream == nil && memorySink == nil {
                    _outputStream = OutputStream(toMemory: ())
                }
                return _outputStream
            }
        }
        set {
            locked {
                if let old = _outputStream, old !== newValue { old.close() }
                _outputStream = newValue
            }
        }
    }

    /// The queue for success, failure, progress and completion blocks (nil = main queue).
    public var completionQueue: DispatchQueue? {
        get { locked { _completionQueue } }
        set { locked { _completionQueue = newValue } }
    }

    /// The group completion work joins (nil = a group shared by all operations).
    public var completionGroup: DispatchGroup? {
        get { locked { _completionGroup } }
        set { locked { _completionGroup = newValue } }
    }

    /// Free-form values for the caller.
    public var userInfo: [AnyHashable: Any] {
        get { locked { _userInfo } }
        set { locked { _userInfo = newValue } }
    }

    var effectiveCompletionQueue: DispatchQueue { completionQueue ?? .main }
    var effectiveCompletionGroup: DispatchGroup { completionGroup ?? CompletionDefaults.group }

    // MARK: - Blocks

    /// Called on `completionQueue` as the request body is sent.
    public func setUploadProgressBlock(_ block: ((_ bytesWritten: Int, _ totalBytesWritten: Int64, _ totalBytesExpectedToWrite: Int64) -> Void)?) {
        locked { uploadProgress = block }
    }

    /// Called on `completionQueue` as the response body arrives.
    public func setDownloadProgressBlock(_ block: ((_ bytesRead: Int, _ totalBytesRead: Int64, _ totalBytesExpectedToRead: Int64) -> Void)?) {
        locked { downloadProgress = block }
    }

    /// Decides HTTP authentication challenges (401/407) for this operation.
    public func setWillSendRequestForAuthenticationChallengeBlock(_ block: ((URLConnectionOperation, URLAuthenticationChallenge) -> Void)?) {
        locked { authenticationChallenge = block }
    }

    /// Called for each redirect with the proposed request and the 3xx response;
    /// return the request to send, or nil to stop at the redirect.
    public func setRedirectResponseBlock(_ block: ((URLConnectionOperation, URLRequest, URLResponse?) -> URLRequest?)?) {
        locked { redirectResponse = block }
    }

    /// Can change or refuse (nil) the response about to be cached.
    public func setCacheResponseBlock(_ block: ((URLConnectionOperation, CachedURLResponse) -> CachedURLResponse?)?) {
        locked { cacheResponse = block }
    }

    // MARK: - Operation

    open override var isReady: Bool {
        locked { state == .ready } && super.isReady
    }

    open override var isExecuting: Bool { locked { state == .executing } }

    open override var isFinished: Bool { locked { state == .finished } }

    /// Whether the transfer is paused; `resume()` continues it.
    public var isPaused: Bool { locked { state == .paused } }

    open override var isAsynchronous: Bool { true }

    /// The operation's own completion block runs on `completionQueue` inside
    /// `completionGroup`, after the success or failure block, as in 2.7. It is
    /// released once it has run, so a block that captures the operation does
    /// not keep it alive.
    open override var completionBlock: (@Sendable () -> Void)? {
        get { locked { userCompletionBlock } }
        set {
            locked { userCompletionBlock = newValue }
            guard newValue != nil else {
                super.completionBlock = nil
                return
            }
            super.completionBlock = { [weak self] in
                guard let self, let block = self.locked({ self.userCompletionBlock }) else { return }
                self.effectiveCompletionQueue.async(group: self.effectiveCompletionGroup) { block() }
                self.completionBlock = nil
            }
        }
    }

    open override func start() {
        lock.lock()
        if isCancelled {
            lock.unlock()
            finishCancelled()
            return
        }
        if state == .paused {
            // Started (by its queue) while paused before it ran: it runs on resume().
            pausedAfterStart = true
            lock.unlock()
            return
        }
        guard state == .ready, super.isReady else {
            lock.unlock()
            return
        }
        let transition = transition(to: .executing)
        lock.unlock()
        announce(transition)
        postOnMain(.AFNetworkingOperationDidStart)
        beginTransfer()
    }

    open override func cancel() {
        lock.lock()
        guard state != .finished, !isCancelled else {
            lock.unlock()
            return
        }
        super.cancel()
        let wasPaused = state == .paused
        let startedBefore = pausedAfterStart
        // Paused before it started: ready again, so that its queue starts it
        // and `start()` ends it as cancelled.
        let backToReady = wasPaused && !startedBefore ? transition(to: .ready) : nil
        let transfer = currentTransfer
        currentTransfer = nil
        lock.unlock()
        if let transfer {
            NetworkEngine.shared.submit(.abort(transfer, .cancelled))
            transferDidEnd(response: nil, error: cancellationError())
        } else if wasPaused && startedBefore {
            finishCancelled()
        } else {
            announce(backToReady)
        }
    }

    /// On the main thread, waiting must not block the completion blocks that
    /// were queued there (the default completion queue), or it would never
    /// return: the main run loop keeps serving the main queue meanwhile.
    open override func waitUntilFinished() {
        guard Thread.isMainThread else {
            super.waitUntilFinished()
            return
        }
        while !isFinished {
            _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.01))
        }
    }

    // MARK: - Pause and resume

    /// Stops the transfer and keeps what arrived; `resume()` continues it.
    public func pause() {
        lock.lock()
        guard state == .ready || state == .executing, !isCancelled, !isDelivering else {
            lock.unlock()
            return
        }
        let wasExecuting = state == .executing
        let transfer = currentTransfer
        currentTransfer = nil
        let transition = transition(to: .paused)
        pausedAfterStart = wasExecuting
        lock.unlock()
        if let transfer { NetworkEngine.shared.submit(.abort(transfer, .cancelled)) }
        announce(transition)
        if wasExecuting { postOnMain(.AFNetworkingOperationDidFinish) }
        didPause()
    }

    /// Continues a paused operation.
    public func resume() {
        lock.lock()
        guard state == .paused else {
            lock.unlock()
            return
        }
        let transition = transition(to: .ready)
        let restart = pausedAfterStart
        lock.unlock()
        announce(transition)
        // An operation paused before it ever started goes back to waiting for
        // its queue (or its caller) to start it; starting it here would run it
        // behind its queue's back.
        if restart { start() }
    }

    /// Bytes already in the output: what a resumed transfer asks the server to skip.
    var bytesWrittenToOutput: Int64 {
        locked {
            if let sink = memorySink { return Int64(sink.count) }
            if let stream = _outputStream {
                if let offset = stream.property(forKey: .fileCurrentOffsetKey) as? NSNumber { return offset.int64Value }
                if let data = stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data { return Int64(data.count) }
            }
            return totalBytesRead
        }
    }

    /// Hook for subclasses: runs after `pause()` stopped the transfer.
    func didPause() {}

    // MARK: - State machine

    /// A state change decided under the lock and announced after it.
    struct StateTransition {
        let from: OperationState
        let to: OperationState
    }

    /// Moves to `next` if the table allows it. Call with `lock` held.
    func transition(to next: OperationState) -> StateTransition? {
        guard state.canTransition(to: next, isCancelled: isCancelled) else { return nil }
        let change = StateTransition(from: state, to: next)
        state = next
        return change
    }

    /// Tells Foundation's OperationQueue (outside the lock: its observers take
    /// their own locks and call back into `isReady`/`isFinished`).
    func announce(_ change: StateTransition?) {
        guard let change else { return }
        willChangeValue(forKey: change.to.keyPath)
        willChangeValue(forKey: change.from.keyPath)
        didChangeValue(forKey: change.from.keyPath)
        didChangeValue(forKey: change.to.keyPath)
    }

    func finish() {
        let change = locked { transition(to: .finished) }
        announce(change)
        if change != nil { postOnMain(.AFNetworkingOperationDidFinish) }
    }

    func finishCancelled() {
        let shouldDeliver: Bool = locked {
            guard state != .finished, !isDelivering else { return false }
            return true
        }
        if shouldDeliver {
            transferDidEnd(response: nil, error: cancellationError())
        }
    }

    func cancellationError() -> NSError {
        TransportErrors.make(NSURLErrorCancelled, url: request.url, underlying: nil)
    }

    /// Overridden by HTTPRequestOperation; declared here, in the class, so it can be.
    /// Runs completion work, then calls `done` exactly once. Subclasses deliver
    /// success and failure blocks here so that dependents start only after them.
    func deliverCompletion(_ done: @escaping () -> Void) {
        guard mayStoreInCache else {
            done()
            return
        }
        CompletionDefaults.processingQueue.async { [self] in
            storeInCache()
            done()
        }
    }

    // MARK: - Helpers

    @inline(__always)
    func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    func postOnMain(_ name: Notification.Name) {
        MainQueueNotifier.shared.post(name, object: self)
    }

    open override var description: String {
        locked {
            "<\(type(of: self)): \(Unmanaged.passUnretained(self).toOpaque()), state: \(state.keyPath), cancelled: \(isCancelled ? "YES" : "NO") request: \(_request), response: \(String(describing: materializedResponse()))>"
        }
    }

    // MARK: - Copying support

    /// A fresh, ready operation for the same request with the same progress,
    /// redirect, cache and challenge blocks, completion queue and group, as
    /// 2.7 copies (not the success/failure blocks, not the outcome).
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init(request: request)
        copySettings(to: copy)
        return copy
    }

    /// Carries the blocks and settings 2.7 copies to a fresh operation.
    func copySettings(to operation: URLConnectionOperation) {
        locked {
            operation.uploadProgress = uploadProgress
            operation.downloadProgress = downloadProgress
            operation.authenticationChallenge = authenticationChallenge
            operation.cacheResponse = cacheResponse
            operation.redirectResponse = redirectResponse
            operation._completionQueue = _completionQueue
            operation._completionGroup = _completionGroup
            operation._credential = _credential
            operation._shouldUseCredentialStorage = _shouldUseCredentialStorage
            operation._securityPolicy = _securityPolicy
            operation._userInfo = _userInfo
        }
    }

    /// Restores archived state (NSSecureCoding).
    func restore(response: URLResponse?, error: Error?, responseData: Data?, totalBytesRead: Int64, finished: Bool) {
        locked {
            _response = response
            receivedResponse = nil
            _error = error
            _responseData = responseData
            self.totalBytesRead = totalBytesRead
            if finished { state = .finished }
        }
    }

    var stateForArchiving: OperationState { locked { state == .finished ? .finished : .ready } }
}
