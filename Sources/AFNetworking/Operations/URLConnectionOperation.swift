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

    private var state = OperationState.ready
    private var _request: URLRequest
    /// The response head as received; `_response` is built from it on demand.
    var receivedResponse: ReceivedResponse?
    private var _response: URLResponse?
    private var _error: Error?
    private var _responseData: Data?
    private var _responseString: String?
    private var _outputStream: OutputStream?
    /// Body collected without an `OutputStream` when the caller never asked for one.
    private var memorySink: Data?
    /// The transfer currently running for this operation; a transfer that is no
    /// longer current (paused, cancelled) can still report, and is ignored.
    private var currentTransfer: Transfer?
    /// Set once the transfer has ended and completion work is under way.
    private(set) var isDelivering = false
    /// The request of the current hop: the operation's request, or where a
    /// redirect or an authentication retry led.
    var hopRequest: URLRequest
    /// Redirects followed and credentials tried since the operation (re)started.
    var redirectCount = 0
    var authenticationFailures = 0
    /// The body of a response that may be followed up (a redirect or an
    /// authentication challenge), held until the follow-up is decided.
    private var interimBody: Data?
    /// How the answer to a resumed request treats the output (see ResumeRules).
    private var resumeDecision: ResumeRules.Decision?
    /// The response that stands when a resumed request finds the body complete.
    private var responseBeforeResume: ReceivedResponse?
    /// Whether the current hop's response head reached `transferDidReceive`.
    private var hopResponseSeen = false
    /// The cached response a conditional request is revalidating.
    private var revalidating: CachedURLResponse?
    /// Whether the outcome came from `URLCache` (and so is not stored again).
    private(set) var servedFromCache = false
    /// Whether the operation was executing when it was paused (else it was
    /// paused while still waiting to start).
    private var pausedAfterStart = false
    /// The partial file and sidecar of a restart-proof download, if this is one.
    var resumableFile: ResumableFile?
    /// The challenge awaiting an answer from the challenge block, if any.
    var pendingChallenge: PendingChallenge?
    private(set) var totalBytesRead: Int64 = 0

    private var uploadProgress: ((Int, Int64, Int64) -> Void)?
    private var downloadProgress: ((Int, Int64, Int64) -> Void)?
    var authenticationChallenge: ((URLConnectionOperation, URLAuthenticationChallenge) -> Void)?
    var redirectResponse: ((URLConnectionOperation, URLRequest, URLResponse?) -> URLRequest?)?
    var cacheResponse: ((URLConnectionOperation, CachedURLResponse) -> CachedURLResponse?)?

    private var userCompletionBlock: (@Sendable () -> Void)?
    private var _completionQueue: DispatchQueue?
    private var _completionGroup: DispatchGroup?
    private var _userInfo: [AnyHashable: Any] = [:]
    private var _credential: URLCredential?
    private var _shouldUseCredentialStorage = true
    private var _securityPolicy = SecurityPolicy.default()

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
    public var error: Error? { locked { _error } }

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

    // MARK: - Transfer

    /// Starts a transfer: the operation's request from the beginning (start,
    /// resume), or a follow-up hop (a redirect, an authentication retry).
    func beginTransfer(_ hop: Hop? = nil) {
        var conditional: URLRequest?
        if hop == nil {
            // The cache answers for the operation's own request only.
            switch CacheRules.plan(for: request, cache: .shared, policy: securityPolicy) {
            case .load:
                locked { revalidating = nil }
            case .useCached(let cached):
                finishWithCachedResponse(cached)
                return
            case .fail(let error):
                transferDidEnd(response: nil, error: error)
                return
            case .revalidate(let cached, let request):
                locked { revalidating = cached }
                conditional = request
            }
        }
        lock.lock()
        prepareOutput()
        if let hop {
            hopRequest = hop.request
        } else {
            hopRequest = conditional ?? _request
            redirectCount = 0
            authenticationFailures = 0
        }
        var options = TransferOptions(request: CookieHandling.addingCookies(to: hopRequest))
        options.credentials = hop?.credentials
        options.reportsUploadProgress = uploadProgress != nil
        options.tls = _securityPolicy.transferVerification
        interimBody = nil
        hopResponseSeen = false
        resumeDecision = nil
        lock.unlock()

        let transfer: Transfer
        do {
            transfer = try Transfer(options: options, delegate: TransferSink(self))
        } catch {
            let code = (error as? CurlOptionError).map { TransportErrors.urlErrorCode(for: $0.code) } ?? NSURLErrorCannotLoadFromNetwork
            let failure = TransportErrors.make(code, url: options.request.url, underlying: error as NSError,
                                               description: "\(error)")
            transferDidEnd(response: nil, error: failure)
            return
        }
        let stillWanted: Bool = locked {
            guard state == .executing, !isCancelled, !isDelivering else { return false }
            currentTransfer = transfer
            return true
        }
        if stillWanted {
            NetworkEngine.shared.submit(.start(transfer))
        } else {
            // Cancelled or paused while the handle was being built: it never
            // reached curl, so it is freed here and never reported.
            transfer.releaseResources()
            if isCancelled { finishCancelled() }
        }
    }

    /// A follow-up request and the credentials to send with it.
    struct Hop {
        var request: URLRequest
        var credentials: TransferCredentials?
    }

    func isCurrent(_ transfer: Transfer) -> Bool { locked { currentTransfer === transfer } }

    func transferDidReceive(_ transfer: Transfer, response: ReceivedResponse) {
        locked {
            guard currentTransfer === transfer else { return }
            responseBeforeResume = receivedResponse
            hopResponseSeen = true
            receivedResponse = response
            _response = nil
            interimBody = mayFollowUp(response) ? Data() : nil
            applyResumeRules(to: response)
            resumableFile?.record(response)
        }
    }

    /// For a resumed request: start the output over, keep appending, or mark
    /// the answer as a failure or as "already complete". Call with `lock` held.
    private func applyResumeRules(to response: ReceivedResponse) {
        resumeDecision = nil
        guard let offset = ResumeRules.offset(of: hopRequest), offset > 0 else { return }
        let decision = ResumeRules.decide(statusCode: response.statusCode, contentRange: response.value(forField: "content-range"), offset: offset)
        resumeDecision = decision
        guard decision == .restart else { return }
        totalBytesRead = 0
        if memorySink != nil {
            memorySink = Data()
        } else if let partial = _outputStream as? PartialFileOutputStream {
            partial.startOver()
        } else if let stream = _outputStream {
            // A file stream goes back to its start; a caller's memory stream
            // cannot be emptied, so it is replaced by a fresh one.
            if stream.property(forKey: .fileCurrentOffsetKey) != nil {
                _ = stream.setProperty(NSNumber(value: 0), forKey: .fileCurrentOffsetKey)
            } else if stream.property(forKey: .dataWrittenToMemoryStreamKey) != nil {
                stream.close()
                let fresh = OutputStream(toMemory: ())
                fresh.open()
                _outputStream = fresh
            }
        }
    }

    /// The error a resumed request ends with when the server's answer does not fit.
    private func resumeFailure(_ reason: String) -> NSError {
        TransportErrors.make(NSURLErrorBadServerResponse, url: hopRequest.url, underlying: nil,
                             description: "The download could not be resumed: \(reason).")
    }

    /// Redirects and authentication challenges may lead to another request;
    /// their bodies wait aside instead of reaching the output stream.
    private func mayFollowUp(_ response: ReceivedResponse) -> Bool {
        switch response.statusCode {
        // curl resolves the target only once the transfer is done, so while
        // the body arrives the Location header is what tells.
        case 301, 302, 303, 307, 308: return response.redirectURL != nil || response.value(forField: "location") != nil
        case 401, 407: return true
        default: return false
        }
    }

    /// Bodies of responses that may be followed up are small in practice; past
    /// this they are cut rather than held without bound.
    static let interimBodyLimit = 1 << 20

    func transferDidReceive(_ transfer: Transfer, bytes: UnsafeRawBufferPointer) -> Error? {
        lock.lock()
        guard currentTransfer === transfer else {
            lock.unlock()
            return TransportErrors.make(NSURLErrorCancelled, url: nil, underlying: nil)
        }
        if case .fail(let reason)? = resumeDecision {
            lock.unlock()
            return resumeFailure(reason)
        }
        if resumeDecision == .alreadyComplete {
            lock.unlock()
            return nil   // the 416's own body is not part of the entity
        }
        if interimBody != nil {
            let room = URLConnectionOperation.interimBodyLimit - (interimBody?.count ?? 0)
            if room > 0 { interimBody?.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(room))) }
            lock.unlock()
            return nil
        } else if memorySink != nil {
            memorySink?.append(contentsOf: bytes)
        } else if let stream = _outputStream, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) {
            var written = 0
            while written < bytes.count {
                let count = stream.write(base + written, maxLength: bytes.count - written)
                if count <= 0 {
                    lock.unlock()
                    return stream.streamError ?? TransportErrors.make(NSURLErrorCannotWriteToFile, url: _request.url, underlying: nil,
                                                                       description: "The output stream refused the response body.")
                }
                written += count
            }
        }
        totalBytesRead += Int64(bytes.count)
        let total = totalBytesRead
        let progress = downloadProgress
        let expected = receivedResponse?.expectedContentLength ?? -1
        let count = bytes.count
        lock.unlock()
        if let progress {
            effectiveCompletionQueue.async(group: effectiveCompletionGroup) { progress(count, total, expected) }
        }
        return nil
    }

    func transferDidSend(_ transfer: Transfer, bytes: Int, total: Int64, expected: Int64) {
        guard let progress = locked({ currentTransfer === transfer ? uploadProgress : nil }) else { return }
        effectiveCompletionQueue.async(group: effectiveCompletionGroup) { progress(bytes, total, expected) }
    }

    /// A transfer ended. A redirect or a challenge is followed up off the
    /// network thread; anything else ends the operation.
    func transferDidComplete(_ transfer: Transfer, response: ReceivedResponse?, error: NSError?) {
        if error == nil, response?.statusCode == 304 {
            let cached: CachedURLResponse? = locked {
                guard currentTransfer === transfer, let cached = revalidating else { return nil }
                revalidating = nil
                return cached
            }
            if let cached {
                finishWithCachedResponse(cached)
                return
            }
        }
        let interim: Data? = locked {
            // A body-less response never passed through `transferDidReceive`.
            guard currentTransfer === transfer, error == nil, let response,
                  let body = interimBody ?? (mayFollowUp(response) ? Data() : nil) else { return nil }
            // Between hops no transfer is current: cancel() and pause() are
            // then honoured by the next beginTransfer.
            currentTransfer = nil
            interimBody = nil
            return body
        }
        guard let interim, let response else {
            guard isCurrent(transfer) else { return }
            var outcome = (response: response, error: error)
            if error == nil, let response {
                let (decision, earlier) = locked { () -> (ResumeRules.Decision?, ReceivedResponse?) in
                    // A body-less answer never went through transferDidReceive.
                    if !hopResponseSeen {
                        responseBeforeResume = receivedResponse
                        applyResumeRules(to: response)
                    }
                    return (resumeDecision, responseBeforeResume)
                }
                switch decision {
                case .fail(let reason)?: outcome.error = locked { resumeFailure(reason) }
                case .alreadyComplete?: outcome.response = earlier ?? response
                default: break
                }
            }
            transferDidEnd(response: outcome.response, error: outcome.error)
            return
        }
        CompletionDefaults.processingQueue.async { [self] in followUp(response, body: interim) }
    }

    /// Ends the operation with a response whose follow-up was declined: its
    /// body goes to the output after all.
    func finishWithInterimResponse(_ response: ReceivedResponse, body: Data) {
        locked { appendToOutput(body) }
        transferDidEnd(response: response, error: nil)
    }

    /// The memory sink when the caller never asked for an output stream, else
    /// the caller's stream, opened. Call with `lock` held.
    private func prepareOutput() {
        if _outputStream == nil && memorySink == nil { memorySink = Data() }
        _outputStream?.open()
    }

    /// Writes a whole body that did not come through the transfer's stream of
    /// bytes (a declined redirect's, a cached one). Call with `lock` held.
    func appendToOutput(_ body: Data) {
        if memorySink != nil {
            memorySink?.append(body)
        } else if let stream = _outputStream, !body.isEmpty {
            body.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                var written = 0
                while written < buffer.count {
                    let count = stream.write(base + written, maxLength: buffer.count - written)
                    if count <= 0 { break }
                    written += count
                }
            }
        }
        totalBytesRead += Int64(body.count)
    }

    /// Ends the operation with a response from `URLCache` (fresh, or
    /// confirmed by a 304), as if it had come over the network.
    func finishWithCachedResponse(_ cached: CachedURLResponse) {
        locked {
            prepareOutput()
            receivedResponse = nil
            _response = cached.response
            servedFromCache = true
            appendToOutput(cached.data)
        }
        transferDidEnd(response: nil, error: nil)
    }

    /// Whether a follow-up hop may still start (not cancelled, paused or over).
    var canContinueHops: Bool {
        locked { state == .executing && !isCancelled && !isDelivering && currentTransfer == nil }
    }

    /// The transfer is over (or never ran): record the outcome once, then hand
    /// over to `deliverCompletion`, which finishes the operation.
    func transferDidEnd(response: ReceivedResponse?, error: NSError?) {
        lock.lock()
        guard !isDelivering, state != .finished else {
            lock.unlock()
            return
        }
        isDelivering = true
        currentTransfer = nil
        if let response {
            receivedResponse = response
            _response = nil
            CookieHandling.store(from: response, for: hopRequest)
        }
        _error = error
        if let sink = memorySink {
            _responseData = sink
            memorySink = nil
        } else if let stream = _outputStream {
            stream.close()
            _responseData = stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data
        }
        if let file = resumableFile, let partial = _outputStream as? PartialFileOutputStream, _error == nil,
           let status = receivedResponse?.statusCode ?? (_response as? HTTPURLResponse)?.statusCode, status == 200 || status == 206 {
            do { try file.complete(partial) } catch { _error = error }
        }
        lock.unlock()
        deliverCompletion { [self] in finish() }
    }

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

/// Connects a transfer to its operation. A separate object so the operation's
/// public surface does not list the transport's protocol.
final class TransferSink: TransferDelegate {
    private let operation: URLConnectionOperation

    init(_ operation: URLConnectionOperation) { self.operation = operation }

    func transfer(_ transfer: Transfer, didReceiveResponse response: ReceivedResponse) {
        operation.transferDidReceive(transfer, response: response)
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> Error? {
        operation.transferDidReceive(transfer, bytes: bytes)
    }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {
        operation.transferDidSend(transfer, bytes: bytesSent, total: totalBytesSent, expected: totalBytesExpected)
    }

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        operation.transferDidComplete(transfer, response: response, error: error)
    }
}
