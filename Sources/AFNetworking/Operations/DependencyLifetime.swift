@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Keeps operations alive while an unfinished dependency still points at them.
///
/// swift-corelibs-foundation (6.3) records every dependent in each of its
/// dependencies as an *unretained* pointer and takes it out only when the
/// dependency finishes or the dependent calls `removeDependency(_:)`; an
/// `Operation` has no `deinit` that takes it out. A cancelled dependent is
/// ready at once, so its queue runs it, it finishes and the queue lets it
/// go — and when the dependency finishes later it walks its dependents and
/// reads the freed one (SIGSEGV). `cancelAllOperations()` on a queue holding
/// a batch, or any dependency graph, hits it whenever the caller does not
/// hold the dependents itself.
///
/// The library holds what it can see: an operation of its own (a request or
/// a batch's final operation) that finishes before its dependencies; every
/// operation of a queue it made (a manager's `operationQueue`) when that queue
/// is cancelled; and a running request's dependents still in its queue when
/// it is cancelled — all that `cancelAllOperations()` on any queue needs, as
/// long as the request is cancelled before its dependents have left the
/// queue (the queue cancels in the order operations were added).
/// What it holds is let go once the dependencies have finished, from the
/// dependency's own announcement — no polling, no thread.
enum DependencyLifetime {
    /// The watchers waiting for their dependencies (each holds its operations).
    private static let waiting = LockedState<[ObjectIdentifier: DependencyWatcher]>([:])

    /// Holds `operation` until each of its dependencies has finished. Only a
    /// cancelled operation can finish first (any other starts once they all
    /// have). Every dependency is watched, not just those whose `isFinished`
    /// is false: one may say finished before Foundation has walked its
    /// dependents; Foundation itself skips those it has finished, under its lock.
    static func hold(untilDependenciesFinish operation: Operation) {
        let dependencies = operation.dependencies
        guard !dependencies.isEmpty else { return }
        watch(dependencies, holding: [operation])
    }

    /// Holds every operation of `queue` that has dependencies until they have
    /// finished: what a queue the library made does before it cancels them all.
    static func holdDependents(in queue: OperationQueue) {
        for operation in queue.operations where !operation.isFinished { hold(untilDependenciesFinish: operation) }
    }

    /// Holds the unfinished operations of `queue` that depend on `dependency`
    /// until `dependency` has finished. A running operation calls it when it is
    /// cancelled: `cancelAllOperations()` keeps every operation of the queue
    /// alive while it cancels them, so they are all still there.
    static func hold(dependentsOf dependency: Operation, in queue: OperationQueue) {
        let dependents = queue.operations.filter { candidate in
            candidate !== dependency && !candidate.isFinished && candidate.dependencies.contains { $0 === dependency }
        }
        guard !dependents.isEmpty else { return }
        watch([dependency], holding: dependents)
    }

    /// A watcher depends on `dependencies` (outside any queue, so it never
    /// runs); Foundation asks it `isReady` when the last of them finishes.
    private static func watch(_ dependencies: [Operation], holding held: [Operation]) {
        let watcher = DependencyWatcher(holding: held)
        waiting.withLock { $0[ObjectIdentifier(watcher)] = watcher }
        for dependency in dependencies { watcher.addDependency(dependency) }
        watcher.arm()
    }

    /// Lets a watcher, and so what it holds, go.
    fileprivate static func finished(_ watcher: DependencyWatcher) {
        let removed = waiting.withLock { $0.removeValue(forKey: ObjectIdentifier(watcher)) }
        assert(removed != nil, "a watcher is let go once")
    }
}

/// Depends on the operations that must finish first; when Foundation finds it
/// ready (every dependency finished), it lets its held operations go.
private final class DependencyWatcher: Operation, @unchecked Sendable {
    // @unchecked: `state` is a LockedState; Operation's own state is Foundation's.
    private let state: LockedState<(held: [Operation], armed: Bool)>

    init(holding held: [Operation]) {
        state = LockedState((held, false))
        super.init()
    }

    /// Every dependency has been added: from now on, ready means done.
    func arm() {
        state.withLock { $0.armed = true }
        _ = isReady
    }

    /// Foundation asks after each dependency change and when the last
    /// dependency finishes (with no lock of its own held).
    override var isReady: Bool {
        let ready = super.isReady
        if ready { release() }
        return ready
    }

    private func release() {
        let held = state.withLock { state -> [Operation]? in
            guard state.armed, !state.held.isEmpty else { return nil }
            defer { state.held = [] }
            return state.held
        }
        guard let held else { return }
        DependencyLifetime.finished(self)
        // The last reference may go here: a deinit can release user blocks,
        // which must not run on whichever thread finished the dependency.
        DispatchQueue.global().async { withExtendedLifetime(held) {} }
    }
}
