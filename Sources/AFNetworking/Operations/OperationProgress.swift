@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An operation's `Progress` (`URLConnectionOperation.progress`) and what
/// keeps its counts current.
///
/// The counts are never set on the network thread: a piece of body only
/// marks them stale (one lock; at most one refresh queued at a time), and the
/// refresh, on `queue`, reads the driver's counts — always the latest, so
/// refreshes that merge lose nothing and never go back in time. When the
/// operation finishes, the next refresh sets the final counts and is the
/// last.
///
/// `queue` is one serial queue for every operation: swift-corelibs-
/// foundation's `Progress` has no lock, and setting a child's counts updates
/// its parent, so the children of one parent must be updated one at a time.
final class OperationProgress: @unchecked Sendable {
    // @unchecked: `progress` is set up before it is published and then only
    // changed on `queue`, as is `settled`; the rest is in `pending`.

    /// Where the counts of every operation's `Progress` change, in order.
    static let queue = DispatchQueue(label: "com.alamofire.networking.operation.progress")

    let progress: Progress
    private let driver: RequestDriver
    private let pending = LockedState(Pending())
    /// The final counts are set: nothing changes them again. Only on `queue`.
    private var settled = false

    private struct Pending {
        /// A refresh is queued and has not yet read what to show.
        var refreshQueued = false
        /// The operation finished: the next refresh sets the final counts.
        var operationFinished = false
    }

    /// A progress for `operation`, showing what its driver counted so far.
    init(driver: RequestDriver, operation: URLConnectionOperation) {
        self.driver = driver
        // Not `Progress(totalUnitCount:)`, which makes it a child of
        // `Progress.current()`: it is made whenever `progress` is first read,
        // and whatever is current then is nothing the operation belongs to
        // (it could even be the parent the caller is about to add it to,
        // which would then add it twice). Callers add it to a parent.
        progress = Progress(parent: nil, userInfo: nil)
        progress.isCancellable = true
        progress.isPausable = true
        // Weak: a parent may keep the progress after the operation is gone.
        // Foundation calls these on a global queue, never under our locks.
        progress.cancellationHandler = { [weak operation] in operation?.cancel() }
        progress.pausingHandler = { [weak operation] in operation?.pause() }
        progress.resumingHandler = { [weak operation] in operation?.resume() }
        show(Self.running(bytes: driver.entityBytesInOutput, expected: driver.expectedEntityLength))
    }

    // MARK: - Reports (any thread)

    /// A piece of body arrived (on the network thread): the counts are stale.
    func bodyReceived() {
        schedule { _ in }
    }

    /// The operation finished: the next refresh sets the final counts.
    func operationFinished() {
        schedule { $0.operationFinished = true }
    }

    private func schedule(_ note: (inout Pending) -> Void) {
        let mustQueue = pending.withLock { pending -> Bool in
            note(&pending)
            guard !pending.refreshQueued else { return false }
            pending.refreshQueued = true
            return true
        }
        if mustQueue { Self.queue.async { self.refresh() } }
    }

    // MARK: - On `queue`

    /// Shows the counts the driver has now, or the final ones once the operation finished.
    private func refresh() {
        let finished = pending.withLock { pending -> Bool in
            pending.refreshQueued = false
            return pending.operationFinished
        }
        guard !settled else { return }
        guard finished, let outcome = driver.finalOutcome else {
            return show(Self.running(bytes: driver.entityBytesInOutput, expected: driver.expectedEntityLength))
        }
        settled = true
        guard let error = outcome.error else {
            // Complete: total and completed are the bytes received, also when
            // the announced length was unknown or wrong (a content-coded
            // body). An empty body counts 1 of 1: corelibs' `Progress` takes
            // 0 of 0 as indeterminate, which would hold a parent below 1.
            let received = max(outcome.entityBytes, 1)
            return show((completed: received, total: received))
        }
        show(Self.running(bytes: outcome.entityBytes, expected: outcome.expectedLength))
        if error.domain == NSURLErrorDomain, error.code == NSURLErrorCancelled, !progress.isCancelled {
            // As a cancelled URLSessionTask's progress; the handler it calls
            // finds the operation finished and does nothing.
            progress.cancel()
        }
    }

    /// The counts to show while the body arrives: the bytes received and the
    /// expected length, -1 while unknown. Never complete before the operation
    /// finishes: Foundation adds a child's share to its parent each time the
    /// child's counts change while completed ≥ total, and before the end
    /// more bytes may come than were announced (a wrong or content-coded
    /// length) or a retry may start over. Never a total of 0 either (an empty
    /// body announced): corelibs traps when a total that was positive becomes 0.
    static func running(bytes: Int64, expected: Int64) -> (completed: Int64, total: Int64) {
        guard expected > 0 else { return (bytes, -1) }
        return (min(bytes, expected - 1), expected)
    }

    /// Moves the counts to `target` without passing through a complete state
    /// on the way (completed is lowered first, then the total set), so that a
    /// parent counts this child complete once, with the final counts.
    private func show(_ target: (completed: Int64, total: Int64)) {
        let belowTotal = target.total > 0 ? target.total - 1 : Int64.max
        let step = min(progress.completedUnitCount, target.completed, belowTotal)
        if progress.completedUnitCount != step { progress.completedUnitCount = step }
        if progress.totalUnitCount != target.total { progress.totalUnitCount = target.total }
        if progress.completedUnitCount != target.completed { progress.completedUnitCount = target.completed }
    }
}
