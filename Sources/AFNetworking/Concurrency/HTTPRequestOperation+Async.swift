@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPRequestOperation {
    /// Starts the operation unless it is already enqueued, started or
    /// finished, waits until it has finished, and returns its final response
    /// and `responseObject`, or throws its `error` (`CancellationError` when
    /// the awaiting task is cancelled, which cancels the operation; that
    /// throws at once, without waiting for the operation's queue or its
    /// completion queue, and the operation finishes right after).
    ///
    /// Never waits for the main queue: when success or failure blocks were
    /// set and are queued on the main queue (no `completionQueue`), it returns
    /// once their outcome is final, before they have run (the operation then
    /// finishes after them). An explicit `completionQueue` is where the
    /// response is serialized, so it is waited for.
    ///
    /// "Enqueued" is known by the queue having asked `isReady`, which is what
    /// swift-corelibs-foundation's `OperationQueue` does when an operation is
    /// added; add the operation to its queue before awaiting it. `result()`
    /// does not wait for dependencies itself: add an operation that has any
    /// to a queue, which starts it when they have finished.
    public func result() async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        let handover: Handover<(HTTPURLResponse, Any?)> = try await AsyncBridge.run { finish in
            whenResolved { [self] in finish(finishedResult()) }
            // Decided once: an operation no queue holds is this call's to start.
            let ours = !readinessAsked.load(ordering: .relaxed)
            if ours, !isExecuting, !isFinished { start() }
            return { [weak self] in
                guard let self else { return }
                self.cancel()
                // No queue will start it (it may wait for a dependency that
                // never runs): a cancelled operation finishes when started.
                if ours { self.start() }
            }
        }
        return (handover.value.0, handover.value.1)
    }

    /// Runs `body` once, when the operation has finished or its outcome is
    /// final while its blocks wait for the main queue (whichever is first).
    func whenResolved(_ body: @escaping @Sendable () -> Void) {
        let once = Once()
        let run: @Sendable () -> Void = { if once.claim() { body() } }
        whenSettled(run)
        whenFinished(run)
    }

    /// The finished operation's outcome, as `result()` returns or throws it.
    func finishedResult() -> Result<Handover<(HTTPURLResponse, Any?)>, Error> {
        if let error { return .failure(error) }
        guard let response else {
            return .failure(TransportErrors.make(NSURLErrorBadServerResponse, url: request.url, underlying: nil))
        }
        return .success(Handover(value: (response, responseObject)))
    }
}
