@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import Tracing

/// Carrying out what the graph's state decided, after its lock: queueing,
/// building, cancelling, pausing, progress and the completion.
extension RequestGraph {
    func perform(_ actions: [RequestGraphState.Action]) {
        var pausesChanged = false
        defer { if pausesChanged { reconcilePauses() } }
        for action in actions {
            switch action {
            case .enqueue(let index, let operation):
                watch(operation, index: index)
                if let request = operation as? URLConnectionOperation {
                    let (download, upload, running, trace) = core.withLock { core in
                        (core.downloadLimiter, core.maximumUploadBytesPerSecond, core.state.runningOperations, core.nodeTrace)
                    }
                    // The upload cap is shared among the running requests that
                    // send a body (asked after the graph's lock: each
                    // operation's request has a lock of its own), never 0 (no cap).
                    var share: Int64 = 0
                    if upload > 0 {
                        let uploads = running.filter { ($0 as? URLConnectionOperation)?.sendsBody ?? false }.count
                        share = max(upload / Int64(max(uploads, 1)), 1)
                    }
                    request.shareGraphCaps(download: download, uploadShare: share)
                    if let trace { request.settings.withLock { $0.trace = trace } }
                }
                operationQueue.addOperation(operation)
            case .build(let index, let builder, let results):
                DispatchQueue.global().async { [self] in
                    let result = Result { try builder(results) }
                    let built = admit(result)
                    let host = (try? built.get()).flatMap { ($0 as? URLConnectionOperation)?.request.url?.host }
                    perform(core.withLock { $0.state.built(index, built, host: host) }
                        + registered(built, index: index))
                }
            case .cancelAndSettle(let index, let operation):
                watch(operation, index: index)
                operation.cancel()
                // Cancelled, it finishes as soon as the queue starts it, sending nothing.
                operationQueue.addOperation(operation)
            case .cancel(let operation):
                operation.cancel()
            case .pause, .resume:
                // Not carried out one by one: a pause decided on one thread
                // and a resume decided after it on another could reach an
                // operation in the other order and leave it paused in a
                // running graph (seen as a graph that never finished).
                pausesChanged = true
            case .nodeDone:
                let done = core.withLock { core in core.state.nodes.lazy.filter(\.isDone).count }
                // Synchronously: the count is right when the completion runs
                // or `run()` returns (no lock is held here).
                progressQueue.sync { nodeProgress.completedUnitCount = max(nodeProgress.completedUnitCount, Int64(done)) }
            case .complete(let report):
                complete(with: report)
            }
        }
    }

    /// Brings every queued request to the graph's current paused state,
    /// outside the lock. One thread reconciles at a time; one that finds
    /// another at it leaves it a note and returns, and the reconciler goes
    /// round again, reading the state afresh: whatever the interleaving of
    /// `pause()` and `resume()` calls, the last state decided is the one the
    /// operations end in.
    func reconcilePauses() {
        let mine = core.withLock { core -> Bool in
            core.pausesPending = true
            guard !core.reconcilingPauses else { return false }
            core.reconcilingPauses = true
            return true
        }
        guard mine else { return }
        while true {
            let next = core.withLock { core -> (paused: Bool, operations: [Operation])? in
                guard core.pausesPending else {
                    core.reconcilingPauses = false
                    return nil
                }
                core.pausesPending = false
                return (core.state.isPaused, core.state.queuedOperations)
            }
            guard let next else { return }
            for case let request as URLConnectionOperation in next.operations {
                if next.paused { request.pause() } else { request.resume() }
            }
        }
    }

    /// A built operation may join the graph only if it is fresh and in no other graph.
    private func admit(_ result: Result<Operation, Error>) -> Result<Operation, Error> {
        guard case .success(let operation) = result else { return result }
        guard !operation.isExecuting, !operation.isFinished,
              RequestGraph.enroll(operation) else { return .failure(RequestGraphError.alreadyEnqueued) }
        return result
    }

    /// Records which node a built operation belongs to (no actions of its own).
    private func registered(_ result: Result<Operation, Error>, index: Int) -> [RequestGraphState.Action] {
        // The state keeps the operation for the graph's life (its node's
        // `built`): `indexOfOperation` and `enrolled` go by address, and a
        // freed one's address, handed to the next built operation, would read
        // as "already in a graph".
        if case .success(let operation) = result { core.withLock { $0.indexOfOperation[ObjectIdentifier(operation)] = index } }
        return []
    }

    /// Reports the operation's outcome to the state when it has finished:
    /// a request's after its completion work, any other operation's from its
    /// completion block (the caller's own block runs first).
    private func watch(_ operation: Operation, index: Int) {
        let report: @Sendable () -> Void = { [weak self, unowned operation] in
            guard let self else { return }
            let outcome = RequestGraph.outcome(of: operation)
            perform(core.withLock { $0.state.operationFinished(index, outcome: outcome) })
        }
        if let request = operation as? URLConnectionOperation {
            request.whenFinished(report)
        } else {
            let original = operation.completionBlock
            operation.completionBlock = {
                original?()
                report()
            }
        }
    }

    /// What a finished operation did.
    static func outcome(of operation: Operation) -> RequestGraphNodeOutcome {
        // A request says what its transfer did: one cancelled after its
        // answer was complete (while its completion work ran) succeeded.
        if let request = operation as? URLConnectionOperation {
            guard let error = request.error as NSError? else { return .succeeded }
            return error.domain == NSURLErrorDomain && error.code == NSURLErrorCancelled ? .cancelled : .failed(error)
        }
        return operation.isCancelled ? .cancelled : .succeeded
    }

    private func complete(with report: RequestGraphReport) {
        let (completion, waiters, span) = core.withLock { core -> ((queue: DispatchQueue, block: @Sendable (RequestGraphReport) -> Void)?,
                                                              [CheckedContinuation<RequestGraphReport, Never>], (any Span)?) in
            core.report = report
            defer { core.completion = nil; core.waiters = []; core.span = nil; core.nodeTrace = nil }
            return (core.completion, core.waiters, core.span)
        }
        // Ended before anyone hears of the report, so they see it ended.
        if let span {
            if !report.allSucceeded { span.setStatus(SpanStatus(code: .error)) }
            span.end()
        }
        if let completion { completion.queue.async { completion.block(report) } }
        for waiter in waiters { waiter.resume(returning: report) }
    }
}
