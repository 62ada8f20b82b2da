import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// What belongs to one request's lifecycle, behind one lock: the machine,
/// the transfer of its current hop, and the writer of a stream output.
struct TransferCore {
    var machine: TransferStateMachine
    /// The transfer of the machine's current hop, once built and registered.
    var transfer: Transfer?
    /// Writes the body off the network thread (nil when it stays in memory).
    var writer: ResponseBodyWriter?
    /// A challenge object handed out and the machine's token for it.
    var challenge: (challenge: URLAuthenticationChallenge, token: UInt64)?
    /// What curl measured for the last hop that ended.
    var timings: TransferTimings?
    /// Counts the machine's phase changes, so effects applied after unlocking
    /// (a deadline's clock) can tell a late, older change from a newer one.
    var phaseChanges: UInt64 = 0
    /// The timer of a retry being waited for, with the machine's token for it:
    /// cancelled as soon as the machine stops waiting (cancel, pause, fail).
    var retryTimer: (token: UInt64, timer: Deadlines.Token)?

    init(machine: TransferStateMachine) { self.machine = machine }
}

/// The phases around one event, for callers that react to the change.
struct PhaseChange {
    let before: TransferStateMachine.Phase
    let after: TransferStateMachine.Phase
    /// The change's place in the machine's order (see `TransferCore.phaseChanges`).
    var sequence: UInt64 = 0
}

/// What a hop about to start needs from its adapter's settings.
struct TransferEnvironment {
    /// `request` with the fields the library adds from its environment (its
    /// cookies), as a stored response's `Vary` compares it.
    func requestAsSent(_ request: URLRequest) -> URLRequest {
        sendsCookies ? CookieHandling.addingCookies(to: request, from: cookieStorage) : request
    }

    /// nil: OpenSSL's standard verification (the default policy).
    var securityPolicy: SecurityPolicy?
    /// Where cookies come from and go to (nil: nowhere).
    var cookieStorage: HTTPCookieStorage? = CookieHandling.sharedStorage
    /// Whether stored cookies go out with requests (a session configuration's
    /// `httpShouldSetCookies`).
    var sendsCookies = true
    /// Whether `Set-Cookie` is stored (false for a configuration's
    /// `httpCookieAcceptPolicy` of `.never`).
    var acceptsCookies = true
    /// Where answered challenges' credentials are remembered.
    var credentialStorage: URLCredentialStorage? = .shared
    /// The cache answers and stores are made with (nil: none).
    var cache: URLCache? = .shared
    var reportsUploadProgress = false
    /// A shorter idle timeout than the request's own, if any.
    var idleTimeout: TimeInterval?
    /// At most this many transfers at once per host (nil: no limit).
    var hostLimit: HostLimit?
    /// Presented in TLS handshakes (mutual TLS).
    var clientCertificate: ClientCertificate?
    /// A parsed `connectionProxyDictionary` (nil: the environment decides).
    var proxies: Result<ProxyConfiguration, NSError>?
}

/// A request's adapter: an `Operation` (`URLConnectionOperation`) or a
/// `URLSessionTask` of a session manager. The shared half — feeding the
/// machine under the lock and carrying out its actions after it, starting
/// hops, taking the transfer's reports, the cache and cookies, closing the
/// output — is written once, below; an adapter supplies its settings and
/// says how questions are asked and outcomes delivered.
protocol TransferAdapter: AnyObject, Sendable {
    var core: LockedState<TransferCore> { get }

    /// Settings for a hop to `url` about to start (off the network thread).
    func transferEnvironment(for url: URL?) -> TransferEnvironment
    /// The request a hop sends, its body ready: `consumedBodyStream` says an
    /// earlier hop already read the request's body stream (307/308, a retry
    /// after 401/407), so a fresh copy must be found or the hop fails. Calls
    /// `ready` once, on any thread but the network thread, possibly later
    /// (a session asks its delegate for a new stream).
    func prepareRequest(_ request: URLRequest, consumedBodyStream: Bool,
                        ready: @escaping @Sendable (Result<URLRequest, NSError>) -> Void)
    /// The lifecycle's phase changed (KVO for operations, `state` for tasks).
    func announce(_ change: PhaseChange)
    func askRedirect(_ question: TransferStateMachine.RedirectQuestion)
    func askChallenge(_ question: TransferStateMachine.ChallengeQuestion)
    /// Completion work once the output is final; must end with `completionFinished()`.
    func runCompletion(_ outcome: TransferStateMachine.Outcome)

    // Reports on the network thread (they must not block):
    /// A head the machine let through to `route` (after the adapter's writer
    /// was told to start over if needed).
    func didReceiveHead(_ response: ReceivedResponse, route: TransferStateMachine.BodyRoute, writer: ResponseBodyWriter?)
    /// A piece of entity body was kept in memory or forwarded to the writer.
    func didReceiveBody(_ bytes: UnsafeRawBufferPointer, progress: TransferStateMachine.Progress, writer: ResponseBodyWriter?)
    func didSendBody(bytes: Int, total: Int64, expected: Int64)
    /// After the writer closed the output, on its queue: the adapter may turn
    /// success into failure (a partial file that cannot be moved into place).
    func outputDidClose(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome
    /// Whether a body kept in memory may move to a writer mid-transfer
    /// (`TransferStateMachine.divertOutput()`, a data task becoming a download).
    var outputMayBeDiverted: Bool { get }
    /// Whether bytes still queued for the writer are dropped when the request
    /// is cancelled (true by default: a cancel ends quickly). A download keeps
    /// them: they are part of the file its resume data continues.
    var dropsQueuedBodyOnCancel: Bool { get }
    /// Where this request's activity is logged (nil: nowhere).
    var activityLogger: Logger? { get }
    /// The output is final; the adapter calls `outputFinished(_:)` when it
    /// is ready for completion work (at once by default; a session task on
    /// its delegate queue, so its `state` shows `.canceling` until then).
    func outputIsFinal(_ outcome: TransferStateMachine.Outcome)
}

extension TransferAdapter {
    var outputMayBeDiverted: Bool { false }
    var dropsQueuedBodyOnCancel: Bool { true }

    func outputIsFinal(_ outcome: TransferStateMachine.Outcome) {
        outputFinished(outcome)
    }

    // MARK: - The machine

    /// Runs `event` against the machine under the lock, then performs the
    /// action it returned and announces any phase change, after unlocking.
    @discardableResult
    func handle(_ event: (inout TransferCore) -> TransferStateMachine.Action) -> PhaseChange {
        let (action, change, target, staleTimer) = core.withLock { core -> (TransferStateMachine.Action, PhaseChange, Transfer?, Deadlines.Token?) in
            let before = core.machine.phase
            let action = event(&core)
            var staleTimer: Deadlines.Token?
            if let retry = core.retryTimer, !core.machine.isWaitingToRetry(token: retry.token) {
                staleTimer = retry.timer
                core.retryTimer = nil
            }
            // The registry keeps the transfer of the current hop only.
            var target: Transfer?
            switch action {
            case .abort(let tag), .abortAndDeliver(let tag, _):
                if core.transfer?.tag == tag { target = core.transfer }
                core.transfer = nil
            case .suspendTransfer(let tag, let suspended):
                // Submitted under the lock so that racing suspend/resume calls
                // reach the engine in the machine's order.
                if let transfer = core.transfer, transfer.tag == tag { NetworkEngine.shared.setSuspended(transfer, suspended) }
            default:
                if let transfer = core.transfer, !core.machine.isCurrent(transfer.tag) { core.transfer = nil }
            }
            if core.machine.phase != before { core.phaseChanges &+= 1 }
            return (action, PhaseChange(before: before, after: core.machine.phase, sequence: core.phaseChanges), target, staleTimer)
        }
        if let staleTimer { Deadlines.shared.cancel(staleTimer) }
        if change.before != change.after { announce(change) }
        switch action {
        case .abort, .abortAndDeliver:
            if let target { NetworkEngine.shared.abort(target, reason: .cancelled) }
        default:
            break
        }
        perform(action)
        return change
    }

    /// Carries out one action of the machine. Never called with the lock held.
    func perform(_ action: TransferStateMachine.Action) {
        switch action {
        case .none, .abort, .suspendTransfer:
            break
        case .lookUpCache(let request):
            lookUpCache(for: request)
        case .startTransfer(let hop):
            startTransfer(hop)
        case .abortAndDeliver(_, let outcome), .deliver(let outcome):
            finishOutput(outcome)
        case .askRedirect(let question):
            RequestLog.redirect(question, to: activityLogger)
            askRedirect(question)
        case .askChallenge(let question):
            RequestLog.challenge(question, to: activityLogger)
            askChallenge(question)
        case .scheduleRetry(let wait):
            scheduleRetry(wait)
        }
    }

    /// Waits before sending the request again: the server's Retry-After, or
    /// the policy's backoff with jitter. The timer holds the adapter weakly and
    /// is cancelled when the request stops waiting (see `handle`); one that
    /// fires anyway finds a stale token, which the machine ignores.
    func scheduleRetry(_ wait: TransferStateMachine.RetryWait) {
        let policy = core.withLock { core -> RetryPolicy? in
            if case .waitingToRetry(let journey, _) = core.machine.state { return journey.retry?.policy }
            return nil
        }
        let delay = wait.retryAfter ?? (policy?.jittered(wait.backoff) ?? wait.backoff)
        RequestLog.retrying(after: delay, serverAsked: wait.retryAfter != nil, to: activityLogger)
        let timer = Deadlines.shared.add(at: .now() + delay) { [weak self] in
            self?.handle { $0.machine.retryDue(token: wait.token) }
        }
        let kept = core.withLock { core -> Bool in
            guard core.machine.isWaitingToRetry(token: wait.token) else { return false }
            core.retryTimer = (wait.token, timer)
            return true
        }
        // The wait already ended (cancelled while the timer was being set).
        if !kept { Deadlines.shared.cancel(timer) }
    }

    /// The output stream refused bytes: the request fails with that error.
    func outputDidFail(_ error: NSError) {
        handle { $0.machine.fail(error) }
    }

    /// The request is over: its phase becomes finished.
    func completionFinished() {
        handle { core in
            core.machine.completionFinished()
            return .none
        }
    }

    // MARK: - Starting hops

    /// Builds the transfer for `hop` and hands it to the engine. Never on the
    /// network thread: it touches the cookie and credential storages and may
    /// get a fresh copy of a caller's body stream.
    func startTransfer(_ hop: TransferStateMachine.HopStart) {
        NetworkThread.assertNotCurrent()
        let environment = transferEnvironment(for: hop.request.url)
        if let (response, request) = hop.effects.storeCookies, environment.acceptsCookies {
            CookieHandling.store(from: response, for: request, in: environment.cookieStorage)
        }
        if let (credential, space) = hop.effects.storeCredential {
            environment.credentialStorage?.set(credential, for: space)
        }
        prepareRequest(hop.request, consumedBodyStream: hop.needsFreshBodyStream && hop.request.httpBodyStream != nil) { [self] prepared in
            switch prepared {
            case .success(let request):
                submitTransfer(hop, request: request, environment: environment)
            case .failure(let error):
                handle { $0.machine.transferCouldNotStart(hop.tag, error: error) }
            }
        }
    }

    /// The second half of starting a hop, once its request body is ready.
    private func submitTransfer(_ hop: TransferStateMachine.HopStart, request: URLRequest, environment: TransferEnvironment) {
        NetworkThread.assertNotCurrent()
        let sent = environment.sendsCookies ? CookieHandling.addingCookies(to: request, from: environment.cookieStorage) : request
        RequestLog.sending(sent, hop: hop.tag, to: activityLogger)
        var options = TransferOptions(request: sent)
        options.tag = hop.tag
        options.credentials = hop.credentials
        options.reportsUploadProgress = environment.reportsUploadProgress
        options.tls = environment.securityPolicy?.transferVerification ?? TLSVerification()
        if let idle = environment.idleTimeout { options.idleTimeout = min(options.idleTimeout, idle) }
        options.hostLimit = environment.hostLimit
        options.clientIdentity = environment.clientCertificate?.identity
        switch environment.proxies {
        case .success(let proxies)?:
            options.proxies = proxies
        case .failure(let error)?:
            handle { $0.machine.transferCouldNotStart(hop.tag, error: error) }
            return
        case nil:
            break
        }
        let writer = core.withLock { $0.writer }
        let transfer: Transfer
        do {
            let sink = TransferSink(adapter: self, writer: writer, divertible: writer == nil && outputMayBeDiverted)
            transfer = try Transfer(options: options, delegate: sink)
        } catch {
            let failure = TransportErrors.error(forUnbuildableTransfer: error, url: request.url)
            handle { $0.machine.transferCouldNotStart(hop.tag, error: failure) }
            return
        }
        #if DEBUG
        TestHooks.beforeSubmittingTransfer.withLock { $0 }?()
        #endif
        // Registered and handed to the engine in one step, with its suspension:
        // engine commands for this transfer (a cancel's abort, a suspend) are
        // then always submitted after its start, in the machine's order. A
        // cancel that came first leaves the hop no longer current.
        let submitted = core.withLock { core -> Bool in
            guard core.machine.isCurrent(hop.tag) else { return false }
            core.transfer = transfer
            // Suspension first: a transfer suspended before it starts is held
            // out of curl, so not even its request head is sent.
            if core.machine.isSuspended { NetworkEngine.shared.setSuspended(transfer, true) }
            NetworkEngine.shared.start(transfer)
            return true
        }
        if !submitted {
            // Cancelled or paused while the handle was being built: it never
            // reached the engine, so it is freed here and never reported.
            transfer.releaseResources()
        }
    }

    // MARK: - Cache

    /// Asks the cache about the request (off the network thread: the first
    /// question about a URL may read the disk) and tells the machine.
    func lookUpCache(for request: URLRequest) {
        NetworkThread.assertNotCurrent()
        let environment = transferEnvironment(for: request.url)
        guard let cache = environment.cache else {
            handle { $0.machine.cacheLookupFinished(.load) }
            return
        }
        let tag = CacheRules.partitionTag(policy: environment.securityPolicy, clientCertificate: environment.clientCertificate)
        let plan = CacheRules.plan(for: request, sent: { environment.requestAsSent(request) }, cache: cache, policyTag: tag,
                                   revalidatingWith: environment)
        handle { $0.machine.cacheLookupFinished(plan) }
    }

    /// Stores the final response's cookies and updates the cache: refreshes
    /// an entry a 304 confirmed, drops an entry a newer answer made obsolete,
    /// and returns a storable answer as a proposal for the adapter to pass
    /// through its will-cache hook and commit. Off the network thread, before
    /// the request finishes, so one started after it sees all of it.
    func recordResponse(_ outcome: TransferStateMachine.Outcome) -> CacheProposal? {
        NetworkThread.assertNotCurrent()
        let environment = transferEnvironment(for: outcome.finalRequest?.url)
        if let confirmation = outcome.revalidatedBy, let request = outcome.finalRequest {
            if environment.acceptsCookies { CookieHandling.store(from: confirmation, for: request, in: environment.cookieStorage) }
            if let cache = environment.cache, let original = outcome.originalRequest, let key = original.url?.absoluteString,
               case .cached(let merged)? = outcome.response {
                CacheIndex.index(for: cache).refresh(key: key, with: merged, for: original, receivedAt: Date())
            }
            return nil
        }
        guard !outcome.servedFromCache, case .received(let head)? = outcome.response else { return nil }
        if let request = outcome.finalRequest, environment.acceptsCookies {
            CookieHandling.store(from: head, for: request, in: environment.cookieStorage)
        }
        guard outcome.error == nil, let original = outcome.originalRequest, let cache = environment.cache else { return nil }
        let key = head.url.absoluteString
        switch CacheRules.effect(of: head, for: original) {
        case .none:
            return nil
        case .invalidate:
            CacheIndex.index(for: cache).invalidate(original, key: key)
            return nil
        case .store:
            guard let data = outcome.memoryBody, let received = head.httpURLResponse else {
                // The body went to a stream: this newer answer cannot be
                // stored, so no older one may answer in its place.
                CacheIndex.index(for: cache).invalidate(original, key: key)
                return nil
            }
            // Stored under the URL that produced it (after any redirect), and
            // tagged with the security policy and client identity it was
            // fetched under and the request fields it varies on.
            var keyRequest = original
            keyRequest.url = received.url ?? original.url
            let response = CacheRules.storable(received)
            let tag = CacheRules.partitionTag(policy: environment.securityPolicy, clientCertificate: environment.clientCertificate)
            var userInfo: [AnyHashable: Any] = [CacheRules.policyKey: tag]
            let varied = CacheRules.varyNames(of: response)
            if !varied.isEmpty {
                userInfo[CacheRules.varyValuesKey] = CacheRules.varyValues(for: varied, of: environment.requestAsSent(outcome.finalRequest ?? original))
            }
            let proposal = CachedURLResponse(response: response, data: data, userInfo: userInfo, storagePolicy: .allowed)
            return CacheProposal(proposal: proposal, cache: cache, keyRequest: keyRequest, key: key, policyTag: tag)
        }
    }

    // MARK: - Finishing

    /// Closes the output and records the final outcome. For a stream this
    /// happens on the writer's queue, after every byte queued before it.
    func finishOutput(_ outcome: TransferStateMachine.Outcome) {
        guard let writer = core.withLock({ $0.writer }) else {
            outputIsFinal(outcome)
            return
        }
        if let error = outcome.error, error.domain == NSURLErrorDomain, error.code == NSURLErrorCancelled, dropsQueuedBodyOnCancel {
            writer.discardPending()
        }
        writer.close(writing: outcome.bodyToWrite) { [self] failure, memory in
            var final = outcome
            if final.error == nil, let failure { final.error = failure }
            final.memoryBody = memory
            outputIsFinal(outputDidClose(final))
        }
    }

    /// The output is final: `response`, `error` and the body now hold their
    /// last values. Completion work follows.
    func outputFinished(_ outcome: TransferStateMachine.Outcome) {
        let timings = core.withLock { core -> TransferTimings? in
            core.machine.outputFinished(outcome)
            return core.timings
        }
        // Built only when someone logs (the request's logger, or a started instance's).
        RequestLog.finished(outcome, metrics: timings.map { TransferMetrics($0, redirects: outcome.redirects) }, to: activityLogger)
        runCompletion(outcome)
    }
}

/// A response the cache may store, waiting for the adapter's will-cache
/// decision (a block, a delegate method that answers later).
struct CacheProposal: @unchecked Sendable {
    // @unchecked: CachedURLResponse is immutable once made.
    let proposal: CachedURLResponse
    let cache: URLCache
    let keyRequest: URLRequest
    let key: String
    let policyTag: String

    /// Stores `answer` (the proposal, or what the hook replaced it with); nil stores nothing.
    func commit(_ answer: CachedURLResponse?) {
        guard let answer else { return }
        CacheIndex.index(for: cache).store(answer, for: keyRequest, key: key, policyTag: policyTag, receivedAt: Date())
    }
}

/// Connects a transfer to its adapter. Its methods run on the network
/// thread: they update the machine under the adapter's lock and hand
/// everything else (the output stream, user callbacks, completion) to other
/// queues.
final class TransferSink<Adapter: TransferAdapter>: TransferDelegate {
    private let adapter: Adapter
    private let fixedWriter: ResponseBodyWriter?
    /// The adapter may install a writer later (`divertOutput()`): look it up.
    private let divertible: Bool

    init(adapter: Adapter, writer: ResponseBodyWriter?, divertible: Bool = false) {
        self.adapter = adapter
        fixedWriter = writer
        self.divertible = divertible
    }

    /// The writer of the output, if the body goes to one.
    private var writer: ResponseBodyWriter? {
        if let fixedWriter { return fixedWriter }
        return divertible ? adapter.core.withLock { $0.writer } : nil
    }

    func transfer(_ transfer: Transfer, didReceiveHead response: ReceivedResponse) -> NSError? {
        NetworkThread.assertCurrent()
        let action = adapter.core.withLock { $0.machine.headReceived(transfer.tag, response) }
        switch action {
        case .ignore:
            return TransferStateMachine.cancellationError(for: transfer.options.request)
        case .refuse(let error, let outcome):
            adapter.finishOutput(outcome)
            return error
        case .proceed(let route, let restartOutput):
            if restartOutput { writer?.restart() }
            adapter.didReceiveHead(response, route: route, writer: writer)
            return nil
        }
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        NetworkThread.assertCurrent()
        let writer: ResponseBodyWriter?
        let action: TransferStateMachine.BodyAction
        if divertible {
            // The writer may be installed (and the memory body handed to it)
            // at any moment: look it up and count the bytes in one step, so a
            // piece never goes to memory that was already handed over.
            guard let (current, decided) = adapter.core.withLock({ core -> (ResponseBodyWriter?, TransferStateMachine.BodyAction)? in
                if let writer = core.writer, !writer.admit(transfer) { return nil }
                return (core.writer, core.machine.bodyReceived(transfer.tag, bytes))
            }) else { return .pause }
            (writer, action) = (current, decided)
        } else {
            writer = fixedWriter
            // Full: curl keeps these bytes until the writer has drained.
            if let writer, !writer.admit(transfer) { return .pause }
            action = adapter.core.withLock { $0.machine.bodyReceived(transfer.tag, bytes) }
        }
        switch action {
        case .kept:
            return .accepted
        case .keptWithProgress(let progress):
            adapter.didReceiveBody(bytes, progress: progress, writer: nil)
            return .accepted
        case .forward(let progress):
            writer?.enqueue(bytes)
            adapter.didReceiveBody(bytes, progress: progress, writer: writer)
            return .accepted
        case .refuse:
            return .abort(TransferStateMachine.cancellationError(for: transfer.options.request))
        }
    }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {
        guard adapter.core.withLock({ $0.machine.isCurrent(transfer.tag) }) else { return }
        adapter.didSendBody(bytes: bytesSent, total: totalBytesSent, expected: totalBytesExpected)
    }

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        let tag = transfer.tag
        let adapter = self.adapter
        let timings = transfer.timings
        let completed: @Sendable (inout TransferCore) -> TransferStateMachine.Action = { core in
            if core.machine.isCurrent(tag) { core.timings = timings }
            return core.machine.transferCompleted(tag, response: response, error: error)
        }
        guard let writer = self.writer else {
            adapter.handle(completed)
            return
        }
        // After every byte of this transfer is in the stream.
        writer.perform { adapter.handle(completed) }
    }
}

#if DEBUG
/// Seams for tests that need to widen a race window. Debug builds only.
enum TestHooks {
    /// Runs after a transfer is built and before it is registered and handed
    /// to the engine (a cancel in this window leaves the hop no longer current).
    static let beforeSubmittingTransfer = LockedState<(@Sendable () -> Void)?>(nil)
}
#endif
