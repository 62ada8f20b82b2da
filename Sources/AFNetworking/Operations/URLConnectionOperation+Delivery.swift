@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// The operation as its driver's front-end: its settings, how it announces its
/// phase (KVO and 2.7's notifications), reports progress (blocks on the
/// completion queue) and finishes a restart-proof download. The end of an
/// operation runs in this order — output finished (stream closed, partial
/// file moved), completion work (cookies, cache, and in
/// `HTTPRequestOperation` the serializer and success/failure blocks), then
/// finished — so a dependent operation never starts before the blocks of
/// the one it depends on have returned.
extension URLConnectionOperation: RequestFrontend {
    func transferEnvironment(for url: URL?) -> TransferEnvironment {
        let (prepared, original) = settings.withLock { settings in
            var environment = TransferEnvironment(securityPolicy: settings.securityPolicy, reportsUploadProgress: settings.uploadProgress != nil,
                                                  clientCertificate: settings.clientCertificate,
                                                  proxies: settings.proxies?.parsed)
            // Arrays only for capped operations (most are not).
            if settings.downloadLimiter != nil || settings.graphDownloadLimiter != nil {
                environment.receiveLimiters = [settings.downloadLimiter, settings.graphDownloadLimiter].compactMap { $0 }
                environment.maximumReceiveBytesPerSecond = environment.receiveLimiters.map(\.bytesPerSecond).min() ?? 0
            }
            if settings.maximumUploadBytesPerSecond > 0 || settings.graphUploadShare > 0 {
                environment.maximumSendBytesPerSecond = [settings.maximumUploadBytesPerSecond, settings.graphUploadShare]
                    .filter { $0 > 0 }.min() ?? 0
            }
            environment.trace = settings.trace
            // 2.7's connectionShouldUseCredentialStorage: NO means the
            // storage is neither read nor written for this operation.
            if !settings.shouldUseCredentialStorage { environment.credentialStorage = nil }
            return (environment, settings.request.url)
        }
        // The client certificate goes to the original request's origin only,
        // never to another one a redirect leads to. (Compared only when there
        // is one: comparing two URLs' origins is a large part of a small
        // request's cost.)
        var environment = prepared
        if environment.clientCertificate != nil, !RedirectRules.sameOrigin(url, original) { environment.clientCertificate = nil }
        return environment
    }

    var activityLogger: Logger? { settings.withLock { $0.logger } ?? NetworkActivityLogger.shared.logger }

    /// 2.7 re-sent only streams it could copy: the multipart body can.
    func prepareRequest(_ request: URLRequest, consumedBodyStream: Bool,
                        ready: @escaping @Sendable (Result<URLRequest, NSError>) -> Void) {
        guard consumedBodyStream else { return ready(.success(request)) }
        ready(BodyStreams.resending(request, fresh: BodyStreams.copy(of: request.httpBodyStream)))
    }

    /// Tells Foundation's OperationQueue (outside the lock: its observers take
    /// their own locks and call back into `isReady`/`isFinished`), and posts
    /// the 2.7 start/finish notifications.
    func announce(_ change: PhaseChange) {
        // Leaving `ready` for a start is not announced: the queue that starts
        // an operation no longer looks at its isReady, so the observer's
        // re-read would be wasted on every start. A pause before the start is
        // (as 2.7 announced both keys of every change): swift-corelibs-foundation's
        // queue caches isReady and re-reads it only when told, so unannounced
        // it would start the paused operation, which would then hold one of
        // the queue's executing slots until resumed.
        let leaving = change.before == .ready && change.after != .paused ? nil : change.before.keyPath
        var dependents: [URLConnectionOperation] = []
        if change.after == .finished {
            dependents = settings.withLock { settings in
                settings.startingQueue = nil
                return settings.dependents.compactMap(\.operation)
            }
            // Cancelled before its dependencies finished: they still point at it.
            if isCancelled { DependencyLifetime.hold(untilDependenciesFinish: self) }
        }
        // Foundation reads each dependent's isReady inside this finish: no
        // queue takes them in by it (`result()` still starts one nobody queued).
        for dependent in dependents { dependent.dependencyEdits.wrappingAdd(1, ordering: .relaxed) }
        defer { for dependent in dependents { dependent.dependencyEdits.wrappingSubtract(1, ordering: .relaxed) } }
        // The observer of isReady reads it back; that read is not a queue
        // taking the operation in (see `result()`), as for a dependency edit.
        let touchesReady = change.after == .ready || (change.before == .ready && leaving != nil)
        if touchesReady { dependencyEdits.wrappingAdd(1, ordering: .relaxed) }
        willChangeValue(forKey: change.after.keyPath)
        if let leaving { willChangeValue(forKey: leaving) }
        if let leaving { didChangeValue(forKey: leaving) }
        didChangeValue(forKey: change.after.keyPath)
        if touchesReady { dependencyEdits.wrappingSubtract(1, ordering: .relaxed) }
        if change.after == .executing {
            MainQueueNotifier.shared.post(.AFNetworkingOperationDidStart, object: self, marks: .begins)
        } else if change.before == .executing {
            // A finished operation holds its body (a paused one, what it has so far).
            MainQueueNotifier.shared.post(.AFNetworkingOperationDidFinish, object: self, marks: .ends,
                                          cost: change.after == .finished ? responseData?.count ?? 0 : 0)
        }
        if change.after == .finished {
            let waiters = settings.withLock { settings -> [@Sendable () -> Void] in
                settings.finished = true
                defer { settings.finishWaiters = [] }
                return settings.finishWaiters
            }
            for waiter in waiters { waiter() }
        }
    }

    func didReceiveHead(_ response: ReceivedResponse, route: TransferStateMachine.BodyRoute, writer: ResponseBodyWriter?) {
        let (file, headBlock) = settings.withLock { ($0.resumableFile, $0.headReceived) }
        if let headBlock {
            // Off the network thread, ahead of the progress reports of the body that follows.
            MainQueueWork.async(on: effectiveCompletionQueue, group: effectiveCompletionGroup) { headBlock(response) }
        }
        guard let writer, route == .output, let file else { return }
        // The sidecar is written (and synced) on the writer's queue.
        writer.perform { file.record(response) }
    }

    func didReceiveBody(_ bytes: UnsafeRawBufferPointer, progress: TransferStateMachine.Progress, writer: ResponseBodyWriter?) {
        bodyBytesReceived.wrappingAdd(Int64(bytes.count), ordering: .relaxed)
        let (block, reporter) = settings.withLock { ($0.downloadProgress, $0.progressReporter) }
        // Only marks the `Progress` object's counts stale: they are set off this thread.
        reporter?.bodyReceived()
        guard let block else { return }
        let queue = effectiveCompletionQueue, group = effectiveCompletionGroup
        let report: @Sendable () -> Void = {
            MainQueueWork.async(on: queue, group: group) { block(progress.bytes, progress.total, progress.expected) }
        }
        // For a stream output, after the bytes are in the stream, as 2.7 reported it.
        if let writer { writer.perform(report) } else { report() }
    }

    func didSendBody(bytes: Int, total: Int64, expected: Int64) {
        bodyBytesSent.store(total, ordering: .relaxed)
        guard let block = settings.withLock({ $0.uploadProgress }) else { return }
        MainQueueWork.async(on: effectiveCompletionQueue, group: effectiveCompletionGroup) { block(bytes, total, expected) }
    }

    /// A restart-proof download's complete partial file becomes its destination.
    func outputDidClose(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome {
        guard let file = settings.withLock({ $0.resumableFile }) else { return outcome }
        if outcome.error != nil, case .received(let head)? = outcome.response { file.forgetIfChanged(head) }
        guard outcome.error == nil, let status = outcome.statusCode, status == 200 || status == 206 else { return outcome }
        var final = outcome
        do {
            try file.complete()
        } catch {
            final.error = error as NSError
        }
        return final
    }

    /// The cache-response block sees (and may replace or refuse) what is stored.
    func recordAndCacheResponse(_ outcome: TransferStateMachine.Outcome) {
        guard let pending = driver.recordResponse(outcome) else { return }
        guard let block = settings.withLock({ $0.cacheResponse }) else { return pending.commit(pending.proposal) }
        pending.commit(isCancelled ? nil : block(self, pending.proposal))
    }
}

extension TransferStateMachine.Outcome {
    /// The status code of the final response, if it is an HTTP one.
    var statusCode: Int? {
        switch response {
        case .received(let head)?: return head.statusCode
        case .cached(let cached)?: return (cached.response as? HTTPURLResponse)?.statusCode
        case nil: return nil
        }
    }
}
