@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Dispatch
import Foundation

/// The library's work for the main queue (operations' progress and
/// success/failure blocks, their completion block when no queue was set, and
/// — through `CompletionPipeline` — session tasks' completion handlers), kept
/// in one FIFO the library owns, with one main-queue hop per item.
///
/// Why not plain `DispatchQueue.main.async`: an operation is finished only
/// after its success or failure block returned, so `waitUntilFinished()`
/// called *on* the main queue — a main-actor task in a program that called
/// `dispatchMain()`, or top-level code after its first `await` (both run main
/// jobs on the main queue, often not on the main thread) — waits for a block
/// queued behind the very job that is waiting. No run loop can serve it: the
/// main queue is serial and busy. With the work in this list, the waiter runs
/// it itself, in order, on the main queue it occupies.
final class MainQueueWork: Sendable {
    static let shared = MainQueueWork()

    private struct Pending {
        var jobs: [@Sendable () -> Void] = []
        /// Index of the oldest job not yet taken (the array is compacted lazily).
        var head = 0
        /// Who waits on the main queue: woken when work arrives.
        var waiters: [UInt64: DispatchSemaphore] = [:]
        var nextWaiter: UInt64 = 0

        mutating func take() -> (@Sendable () -> Void)? {
            guard head < jobs.count else { return nil }
            let job = jobs[head]
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            return job
        }
    }

    private let pending = LockedState(Pending())

    /// Runs `block` on `queue` inside `group`: through this list when `queue`
    /// is the main queue, else directly.
    static func async(on queue: DispatchQueue, group: DispatchGroup, _ block: @escaping @Sendable () -> Void) {
        guard isMain(queue) else { return queue.async(group: group, execute: block) }
        shared.submit(group: group, block)
    }

    private func submit(group: DispatchGroup, _ block: @escaping @Sendable () -> Void) {
        group.enter()
        let waiters = pending.withLock { pending -> [DispatchSemaphore] in
            pending.jobs.append {
                block()
                group.leave()
            }
            return Array(pending.waiters.values)
        }
        for waiter in waiters { waiter.signal() }
        // Each hop runs the oldest job still here (a waiter may have run it).
        DispatchQueue.main.async { self.runOldest() }
    }

    private func runOldest() {
        pending.withLock { $0.take() }?()
    }

    /// Whether `queue` is the main queue. Not `queue === DispatchQueue.main`:
    /// on Linux each read of `DispatchQueue.main` makes a new wrapper object,
    /// so that comparison is always false (and sent all completion work,
    /// parsing included, to the main queue).
    static func isMain(_ queue: DispatchQueue) -> Bool {
        queue.getSpecific(key: MainQueueMark.key) == true
    }

    /// Whether the caller runs on the main queue (main-queue jobs run there
    /// even on other threads once `dispatchMain()` was called) or on the main thread.
    static var isOnMainQueue: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: MainQueueMark.key) == true
    }

    /// Blocks the calling main-queue job until `done()` holds, running this
    /// list's work meanwhile (on the main thread also the run loop, for
    /// other main-queue work when this is not inside a main-queue job).
    /// `register` hands out a wake-up for the event that makes `done()` true.
    func serve(until done: () -> Bool, register: (@escaping @Sendable () -> Void) -> Void) {
        let wake = DispatchSemaphore(value: 0)
        let identifier = pending.withLock { pending -> UInt64 in
            pending.nextWaiter += 1
            pending.waiters[pending.nextWaiter] = wake
            return pending.nextWaiter
        }
        defer { pending.withLock { _ = $0.waiters.removeValue(forKey: identifier) } }
        register { wake.signal() }
        while !done() {
            if let job = pending.withLock({ $0.take() }) {
                job()
                continue
            }
            if Thread.isMainThread {
                _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.002))
                _ = wake.wait(timeout: .now() + .milliseconds(2))
            } else {
                _ = wake.wait(timeout: .now() + .milliseconds(100))
            }
        }
    }
}

/// Marks the main queue so a job can tell it runs there from any thread.
private enum MainQueueMark {
    static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()
}
