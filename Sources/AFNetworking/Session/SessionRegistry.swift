import Foundation

/// The tasks of one session and its invalidation, as a value: events go in,
/// what to do comes out. `ManagedSession` keeps it behind a lock.
///
/// A session is active until `invalidate` is called; then it is invalidating
/// until its last task has completed, then invalidated. Tasks created once it
/// is no longer active are not registered (they complete with
/// `NSURLErrorCancelled` when resumed).
struct SessionRegistry<Entry> {
    enum Phase: Equatable {
        case active
        /// `invalidateSessionCancelingTasks` was called; waiting for the tasks to end.
        case invalidating
        /// No task left; the session-did-become-invalid callbacks were scheduled.
        case invalidated
    }

    /// What the session does after an event.
    enum Action {
        case none
        /// Cancel these tasks (`invalidateAndCancel`).
        case cancel([Entry])
        /// Deliver the session-did-become-invalid callbacks, once.
        case becameInvalid
    }

    private(set) var phase = Phase.active
    /// Unfinished tasks by identifier (identifiers increase in creation order).
    private var entries: [Int: Entry] = [:]

    /// Registers a new task; false when the session no longer takes tasks.
    mutating func add(_ entry: Entry, identifier: Int) -> Bool {
        guard phase == .active else { return false }
        entries[identifier] = entry
        return true
    }

    /// Replaces a task's entry (a data task that became a download task).
    mutating func replace(identifier: Int, with entry: Entry, newIdentifier: Int) {
        guard entries.removeValue(forKey: identifier) != nil else { return }
        entries[newIdentifier] = entry
    }

    /// A task completed (its did-complete delegate call has run).
    mutating func remove(identifier: Int) -> Action {
        guard entries.removeValue(forKey: identifier) != nil else { return .none }
        return finishIfIdle()
    }

    /// `invalidateSessionCancelingTasks(cancelling)`. Once invalidated, calls
    /// change nothing; while the tasks of an earlier call finish, a call that
    /// cancels still cancels them.
    mutating func invalidate(cancelling: Bool) -> Action {
        switch phase {
        case .invalidated:
            return .none
        case .invalidating:
            return cancelling && !entries.isEmpty ? .cancel(tasks) : .none
        case .active:
            phase = .invalidating
            if entries.isEmpty { return finishIfIdle() }
            return cancelling ? .cancel(tasks) : .none
        }
    }

    /// Unfinished tasks in creation order.
    var tasks: [Entry] {
        entries.sorted { $0.key < $1.key }.map(\.value)
    }

    var isEmpty: Bool { entries.isEmpty }

    private mutating func finishIfIdle() -> Action {
        guard phase == .invalidating, entries.isEmpty else { return .none }
        phase = .invalidated
        return .becameInvalid
    }
}
