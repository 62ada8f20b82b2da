import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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

    init(machine: TransferStateMachine) { self.machine = machine }
}

/// The phases around one event, for callers that react to the change.
struct PhaseChange {
    let before: TransferStateMachine.Phase
    let after: TransferStateMachine.Phase
}

/// What a hop about to start needs from its adapter's settings.
struct TransferEnvironment {
    /// nil: OpenSSL's standard verification (the default policy).
    var securityPolicy: SecurityPolicy?
    /// Where cookies come from and go to (nil: nowhere).
    var cookieStorage: HTTPCookieStorage? = CookieHandling.sharedStorage
    /// The cache answers and stores are made with (nil: none).
    var cache: URLCache? = .shared
    var reportsUploadProgress = false
    /// A shorter idle timeout than the request's own, if any.
    var idleTimeout: TimeInterval?
    /// At most this many transfers at once per host (nil: no limit).
    var hostLimit: HostLimit?
}

/// A request's adapter: an `Operation` (`URLConnectionOperation`) or a
/// `URLSessionTask` of a session manager. The shared half — feeding the
/// machine under the lock and carrying out its actions after it, starting
/// hops, taking the transfer's reports, the cache and cookies, closing the
/// output — is written once, below; an adapter supplies its settings and
/// says how questions are asked and outcomes delivered.
protocol TransferAdapter: AnyObject, Sendable {
    var core: LockedState<TransferCore> { get }

    /// Settings for a hop about to start (off the network thread).
    func transferEnvironment() -> TransferEnvironment
    /// A fresh copy of a body stream an earlier hop consumed (307/308, a
    /// retry after 401/407), or nil to fail the hop.
    func freshBodyStream(for request: URLRequest) -> InputStream?
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
}

extension TransferAdapter {
    // MARK: - The machine

    /// Runs `event` against the machine under the lock, then performs the
    /// action it returned and announces any phase change, after unlocking.
    @discardableResult
    func handle(_ event: (inout TransferCore) -> TransferStateMachine.Action) -> PhaseChange {
        let (action, change, target) = core.withLock { core -> (TransferStateMachine.Action, PhaseChange, Transfer?) in
            let before = core.machine.phase
            let action = event(&core)
            // The registry keeps the transfer of the current hop only.
            var target: Transfer?
            switch action {
            case .abort(let tag), .abortAndDeliver(let tag, _):
                if core.transfer?.tag == tag { target = core.transfer }
                core.transfer = nil
            case .suspendTransfer(let tag, _):
                if core.transfer?.tag == tag { target = core.transfer }
            default:
                if let transfer = core.transfer, !core.machine.isCurrent(transfer.tag) { core.transfer = nil }
            }
            return (action, PhaseChange(before: before, after: core.machine.phase), target)
        }
        if change.before != change.after { announce(change) }
        switch action {
        case .abort, .abortAndDeliver:
            if let target { NetworkEngine.shared.abort(target, reason: .cancelled) }
        case .suspendTransfer(_, let suspended):
            if let target { NetworkEngine.shared.setSuspended(target, suspended) }
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
            askRedirect(question)
        case .askChallenge(let question):
            askChallenge(question)
        }
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
        let environment = transferEnvironment()
        if let (response, request) = hop.effects.storeCookies {
            CookieHandling.store(from: response, for: request, in: environment.cookieStorage)
        }
        if let (credential, space) = hop.effects.storeCredential {
            storeCredential(credential, for: space)
        }
        var request = hop.request
        if hop.needsFreshBodyStream, request.httpBodyStream != nil {
            // An earlier hop consumed the body: send a fresh one, or fail.
            guard let fresh = freshBodyStream(for: request) else {
                let error = TransportErrors.make(NSURLErrorRequestBodyStreamExhausted, url: request.url, underlying: nil,
                                                 description: "The request body stream was consumed and cannot be sent again.")
                handle { $0.machine.transferCouldNotStart(hop.tag, error: error) }
                return
            }
            request.httpBodyStream = fresh
        }
        var options = TransferOptions(request: CookieHandling.addingCookies(to: request, from: environment.cookieStorage))
        options.tag = hop.tag
        options.credentials = hop.credentials
        options.reportsUploadProgress = environment.reportsUploadProgress
        options.tls = environment.securityPolicy?.transferVerification ?? TLSVerification()
        if let idle = environment.idleTimeout { options.idleTimeout = min(options.idleTimeout, idle) }
        options.hostLimit = environment.hostLimit
        let writer = core.withLock { $0.writer }
        let transfer: Transfer
        do {
            transfer = try Transfer(options: options, delegate: TransferSink(adapter: self, writer: writer))
        } catch {
            let failure = TransportErrors.error(forUnbuildableTransfer: error, url: request.url)
            handle { $0.machine.transferCouldNotStart(hop.tag, error: failure) }
            return
        }
        let wanted = core.withLock { core -> Bool in
            guard core.machine.isCurrent(hop.tag) else { return false }
            core.transfer = transfer
            return true
        }
        guard wanted else {
            // Cancelled or paused while the handle was being built: it never
            // reached the engine, so it is freed here and never reported.
            transfer.releaseResources()
            return
        }
        #if DEBUG
        TestHooks.beforeSubmittingTransfer.withLock { $0 }?()
        #endif
        // A cancel from here on aborts `transfer` (taken from the registry);
        // the abort is sticky, so the engine never sends it even if the abort
        // reaches the network thread before this start does.
        NetworkEngine.shared.start(transfer)
        if hop.startsSuspended { NetworkEngine.shared.setSuspended(transfer, true) }
    }

    /// Where an answered challenge's credential is remembered (overridden by
    /// session tasks, whose configuration names the storage).
    func storeCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        URLCredentialStorage.shared.set(credential, for: space)
    }

    // MARK: - Cache

    /// Asks the cache about the request (off the network thread: the first
    /// question about a URL may read the disk) and tells the machine.
    func lookUpCache(for request: URLRequest) {
        NetworkThread.assertNotCurrent()
        let environment = transferEnvironment()
        guard let cache = environment.cache else {
            handle { $0.machine.cacheLookupFinished(.load) }
            return
        }
        let tag = environment.securityPolicy.map(CacheRules.policyTag) ?? CacheRules.standardTag
        let plan = CacheRules.plan(for: request, cache: cache, policyTag: tag)
        handle { $0.machine.cacheLookupFinished(plan) }
    }

    /// Stores the final response's cookies and updates the cache: stores a
    /// storable answer (through `proposeCaching`), refreshes an entry a 304
    /// confirmed, drops an entry a newer answer made obsolete. Off the network
    /// thread, before the request finishes, so one started after it sees all of it.
    func recordResponse(_ outcome: TransferStateMachine.Outcome, propose: (CachedURLResponse) -> CachedURLResponse? = { $0 }) {
        NetworkThread.assertNotCurrent()
        let environment = transferEnvironment()
        if let confirmation = outcome.revalidatedBy, let request = outcome.finalRequest {
            CookieHandling.store(from: confirmation, for: request, in: environment.cookieStorage)
            if let cache = environment.cache, let key = outcome.originalRequest?.url?.absoluteString {
                CacheIndex.index(for: cache).refresh(key: key, with: confirmation, receivedAt: Date())
            }
            return
        }
        guard !outcome.servedFromCache, case .received(let head)? = outcome.response else { return }
        if let request = outcome.finalRequest {
            CookieHandling.store(from: head, for: request, in: environment.cookieStorage)
        }
        guard outcome.error == nil, let original = outcome.originalRequest, let cache = environment.cache else { return }
        let key = head.url.absoluteString
        switch CacheRules.effect(of: head, for: original) {
        case .none:
            return
        case .invalidate:
            CacheIndex.index(for: cache).invalidate(original, key: key)
        case .store:
            guard let data = outcome.memoryBody, let response = head.httpURLResponse else { return }
            // Stored under the URL that produced it (after any redirect), and
            // tagged with the security policy it was fetched under.
            var keyRequest = original
            keyRequest.url = response.url ?? original.url
            let tag = environment.securityPolicy.map(CacheRules.policyTag) ?? CacheRules.standardTag
            let proposal = CachedURLResponse(response: response, data: data, userInfo: [CacheRules.policyKey: tag], storagePolicy: .allowed)
            guard let cached = propose(proposal) else { return }
            CacheIndex.index(for: cache).store(cached, for: keyRequest, key: key, policyTag: tag, receivedAt: Date())
        }
    }

    // MARK: - Finishing

    /// Closes the output and records the final outcome. For a stream this
    /// happens on the writer's queue, after every byte queued before it.
    func finishOutput(_ outcome: TransferStateMachine.Outcome) {
        guard let writer = core.withLock({ $0.writer }) else {
            outputFinished(outcome)
            return
        }
        if let error = outcome.error, error.domain == NSURLErrorDomain, error.code == NSURLErrorCancelled {
            writer.discardPending()
        }
        writer.close(writing: outcome.bodyToWrite) { [self] failure, memory in
            var final = outcome
            if final.error == nil, let failure { final.error = failure }
            final.memoryBody = memory
            outputFinished(outputDidClose(final))
        }
    }

    /// The output is final: `response`, `error` and the body now hold their
    /// last values. Completion work follows.
    private func outputFinished(_ outcome: TransferStateMachine.Outcome) {
        core.withLock { $0.machine.outputFinished(outcome) }
        runCompletion(outcome)
    }
}

/// Connects a transfer to its adapter. Its methods run on the network
/// thread: they update the machine under the adapter's lock and hand
/// everything else (the output stream, user callbacks, completion) to other
/// queues.
final class TransferSink<Adapter: TransferAdapter>: TransferDelegate {
    private let adapter: Adapter
    private let writer: ResponseBodyWriter?

    init(adapter: Adapter, writer: ResponseBodyWriter?) {
        self.adapter = adapter
        self.writer = writer
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
        if let writer, !writer.admit(transfer) {
            // Full: curl keeps these bytes until the writer has drained.
            return .pause
        }
        switch adapter.core.withLock({ $0.machine.bodyReceived(transfer.tag, bytes) }) {
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
        guard let writer else {
            adapter.handle { $0.machine.transferCompleted(tag, response: response, error: error) }
            return
        }
        // After every byte of this transfer is in the stream.
        writer.perform {
            adapter.handle { $0.machine.transferCompleted(tag, response: response, error: error) }
        }
    }
}

#if DEBUG
/// Seams for tests that need to widen a race window. Debug builds only.
enum TestHooks {
    /// Runs after a transfer is registered as current and before it is handed
    /// to the engine (the window in which a cancel used to overtake the start).
    static let beforeSubmittingTransfer = LockedState<(@Sendable () -> Void)?>(nil)
}
#endif
