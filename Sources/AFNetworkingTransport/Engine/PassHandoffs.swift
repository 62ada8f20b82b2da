import Dispatch

/// Work the network thread hands to other queues during one pass of its
/// loop, sent with one dispatch per queue when the pass ends. Dispatching to
/// an idle queue wakes a worker thread (a futex wake, a context switch):
/// transfers that finish in the same pass then wake their completion queue
/// once instead of once each.
///
/// Off the network thread a hand-off is a plain `async`: nothing would flush it.
package enum PassHandoffs {
    /// At most this many blocks ride in one dispatch: a concurrent queue still
    /// spreads a large batch over several workers.
    static let maximumBatch = 8

    /// Network thread only, so no lock: the thread appends and flushes.
    nonisolated(unsafe) private static var pending: [(queue: DispatchQueue, blocks: [@Sendable () -> Void])] = []

    /// Runs `block` on `queue` — after the network thread's current pass
    /// when called there, at once otherwise.
    package static func async(on queue: DispatchQueue, _ block: @escaping @Sendable () -> Void) {
        guard NetworkThread.isCurrent else {
            queue.async(execute: block)
            return
        }
        if let index = pending.lastIndex(where: { $0.queue === queue }), pending[index].blocks.count < maximumBatch {
            pending[index].blocks.append(block)
        } else {
            pending.append((queue, [block]))
        }
    }

    /// Sends what the pass collected, in the order it was handed over per queue.
    static func flush() {
        NetworkThread.assertCurrent()
        guard !pending.isEmpty else { return }
        let batches = pending
        pending.removeAll(keepingCapacity: true)
        for (queue, blocks) in batches {
            if blocks.count == 1 {
                queue.async(execute: blocks[0])
            } else {
                queue.async { for block in blocks { block() } }
            }
        }
    }
}
