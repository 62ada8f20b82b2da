import Glibc

/// A value behind a non-recursive mutex: the only way to reach it is
/// `withLock`, so every read and write of the state is serialized.
///
/// Non-recursive on purpose: re-entering from inside `withLock` (a call-out
/// that comes back) traps in debug builds instead of silently nesting. Keep
/// the closures short: compute under the lock, act after it.
package final class LockedState<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched between lock and unlock below.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    package init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        // Error-checking mutexes report re-entry instead of deadlocking.
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let status = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        let status = pthread_mutex_lock(mutex)
        assert(status == 0, "LockedState re-entered on the same thread (pthread error \(status))")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

extension LockedState where State: Sendable {
    /// A copy of the state.
    package var value: State { withLock { $0 } }
}
