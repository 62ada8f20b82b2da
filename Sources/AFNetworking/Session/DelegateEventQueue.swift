@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Runs a manager's delegate calls on its `operationQueue`, serially and in
/// the order they were submitted. Events wait in one list that a single
/// queued operation drains, so a burst of events (body chunks, progress,
/// several tasks finishing) costs one operation instead of one each.
final class DelegateEventQueue: @unchecked Sendable {
    // @unchecked: `queue` is only used to add operations (thread-safe); the list is behind a lock.

    private struct Pending {
        var events: [@Sendable () -> Void] = []
        /// A drain operation is queued or running.
        var draining = false
    }

    let queue: OperationQueue
    private let pending = LockedState(Pending())

    init(queue: OperationQueue) {
        self.queue = queue
    }

    /// Runs `event` on the queue after every event submitted before it.
    func submit(_ event: @escaping @Sendable () -> Void) {
        let schedule = pending.withLock { pending -> Bool in
            pending.events.append(event)
            defer { pending.draining = true }
            return !pending.draining
        }
        if schedule { queue.addOperation(DrainOperation(events: self)) }
    }

    fileprivate func drain() {
        while true {
            let batch = pending.withLock { pending -> [@Sendable () -> Void] in
                let batch = pending.events
                pending.events.removeAll(keepingCapacity: true)
                if batch.isEmpty { pending.draining = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            for event in batch { event() }
        }
    }
}

/// The operation that drains the events. It ignores `cancel()`: a caller's
/// `operationQueue.cancelAllOperations()` must not drop delegate calls and
/// completions (nothing would schedule them again).
private final class DrainOperation: Operation, @unchecked Sendable {
    // @unchecked: immutable.
    private let events: DelegateEventQueue

    init(events: DelegateEventQueue) {
        self.events = events
        super.init()
    }

    override func cancel() {}

    override func main() {
        events.drain()
    }
}
