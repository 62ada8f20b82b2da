@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Carrying out what the graph's state decided, after its lock: queueing,
/// building, cancelling, pausing, progress and the completion.
extension RequestGraph {
    func perform(_ actions: [RequestGraphState.Action]) {
        for action in actions {
            switch action {
            case .enqueue(let index, let operation):
                watch(operation, index: index)
                if let request = operation as? URLConnectionOperation {
                    let (download, upload, running) = core.withLock { core in
                        (core.downloadLimiter, core.maximumUploadBytesPerSecond, core.state.runningCount)
                    }
                    request.shareGraphCaps(download: download, uploadShare: upload / Int64(max(running, 1)))
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
            case .pause(let operation):
                (operation as? URLConnectionOperation)?.pause()
            case .resume(let operation):
                (operation as? URLConnectionOperation)?.resume()
            case .nodeDone:
                let done = core.withLock { core in core.state.nodes.lazy.filter(\.isDone).count }
                progressQueue.async { [nodeProgress] in nodeProgress.completedUnitCount = max(nodeProgress.completedUnitCount, Int64(done)) }
            case .complete(let report):
                complete(with: report)
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
        if case .success(let operation) = result {
            core.withLock { core in
                core.indexOfOperation[ObjectIdentifier(operation)] = index
                core.builtOperations.append(operation)
            }
        }
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
        if operation.isCancelled { return .cancelled }
        if let request = operation as? URLConnectionOperation, let error = request.error { return .failed(error) }
        return .succeeded
    }

    private func complete(with report: RequestGraphReport) {
        let (completion, waiters) = core.withLock { core -> ((queue: DispatchQueue, block: @Sendable (RequestGraphReport) -> Void)?,
                                                        [CheckedContinuation<RequestGraphReport, Never>]) in
            core.report = report
            defer { core.completion = nil; core.waiters = [] }
            return (core.completion, core.waiters)
        }
        if let completion { completion.queue.async { completion.block(report) } }
        for waiter in waiters { waiter.resume(returning: report) }
    }
}
