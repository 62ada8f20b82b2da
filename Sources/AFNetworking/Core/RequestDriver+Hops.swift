@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Starting a hop's transfer and waiting to retry one.
extension RequestDriver {
    /// Builds the transfer for `hop` and hands it to the engine. Never on the
    /// network thread: it touches the cookie and credential storages and may
    /// get a fresh copy of a caller's body stream.
    func startTransfer(_ hop: TransferStateMachine.HopStart) {
        assert(!engine.isReportingThread, "storages, streams and files stay off the engine's thread")
        guard let frontend else { return }
        // The attempt before this one (a redirect, a retry) ended on the network thread.
        endSpansOfEndedAttempts()
        let environment = frontend.transferEnvironment(for: hop.request.url)
        if let (response, request) = hop.effects.storeCookies, environment.acceptsCookies {
            CookieHandling.store(from: response, for: request, in: environment.cookieStorage)
        }
        frontend.prepareRequest(hop.request, consumedBodyStream: hop.needsFreshBodyStream && hop.request.httpBodyStream != nil) { [self] prepared in
            switch prepared {
            case .success(let request):
                submitTransfer(hop, request: request, environment: environment)
            case .failure(let error):
                handle(.transferCouldNotStart(tag: hop.tag, error))
            }
        }
    }

    /// The second half of starting a hop, once its request body is ready.
    private func submitTransfer(_ hop: TransferStateMachine.HopStart, request: URLRequest, environment: TransferEnvironment) {
        assert(!engine.isReportingThread, "storages, streams and files stay off the engine's thread")
        guard let frontend else { return }
        var sent = environment.sendsCookies ? CookieHandling.addingCookies(to: request, from: environment.cookieStorage) : request
        if let origin = environment.trace { openSpan(for: &sent, tag: hop.tag, origin: origin) }
        RequestLog.sending(sent, hop: hop.tag, to: frontend.activityLogger)
        var options = TransferOptions(request: sent)
        options.tag = hop.tag
        options.credentials = hop.credentials
        options.reportsUploadProgress = environment.reportsUploadProgress
        options.tls = environment.securityPolicy?.transferVerification ?? TLSVerification()
        if let idle = environment.idleTimeout { options.idleTimeout = min(options.idleTimeout, idle) }
        options.hostLimit = frontend.hostLimit(for: hop.request.url)
        options.clientIdentity = environment.clientCertificate?.identity
        options.maximumReceiveBytesPerSecond = environment.maximumReceiveBytesPerSecond
        options.maximumSendBytesPerSecond = environment.maximumSendBytesPerSecond
        switch environment.proxies {
        case .success(let proxies)?:
            options.proxies = proxies
        case .failure(let error)?:
            handle(.transferCouldNotStart(tag: hop.tag, error))
            return
        case nil:
            break
        }
        let writer = self.writer
        let transfer: Transfer
        do {
            let sink = TransferSink(driver: self, frontend: frontend, writer: writer,
                                    divertible: writer == nil && frontend.outputMayBeDiverted, limiters: environment.receiveLimiters)
            transfer = try Transfer(options: options, delegate: sink)
        } catch {
            let failure = TransportErrors.error(forUnbuildableTransfer: error, url: request.url)
            handle(.transferCouldNotStart(tag: hop.tag, failure))
            return
        }
        #if DEBUG
        TestHooks.beforeSubmittingTransfer.withLock { $0 }?()
        #endif
        if !register(transfer, for: hop.tag) {
            // Cancelled or paused while the handle was being built: it never
            // reached the engine, so it is freed here and never reported.
            transfer.releaseResources()
        }
    }

    /// Waits before sending the request again: the server's Retry-After, or
    /// the policy's backoff with jitter. The timer holds the driver weakly and
    /// is cancelled when the request stops waiting (see `handle`); one that
    /// fires anyway finds a stale token, which the machine ignores.
    func scheduleRetry(_ wait: TransferStateMachine.RetryWait) {
        let delay = wait.exact ? wait.backoff : wait.retryAfter ?? (retryPolicy?.jittered(wait.backoff) ?? wait.backoff)
        RequestLog.retrying(after: delay, serverAsked: wait.retryAfter != nil, to: frontend?.activityLogger)
        let timer = Deadlines.shared.add(at: .now() + delay) { [weak self] in
            // Not on the timers' serial queue: starting the hop may touch the
            // disk (cookies, a file body) and would hold up every other deadline.
            guard let driver = self else { return }
            CompletionDefaults.processingQueue.async { driver.handle(.retryDue(token: wait.token)) }
        }
        // The wait already ended (cancelled while the timer was being set).
        if !keepRetryTimer(timer, token: wait.token) { Deadlines.shared.cancel(timer) }
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
