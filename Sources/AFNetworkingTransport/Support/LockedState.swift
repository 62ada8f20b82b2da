import Glibc

/// A value behind a non-recursive mutex: the only way to reach it is
/// `withLock`, so every read and write of the state is serialized.
///
/// Non-recursive on purpose: re-entering from inside `withLock` (a call-out
/// that comes back) traps in debug builds instead of silently nesting. Keep
/// the closures short: compute under the lock, act after it.
///
/// One allocation holds both the state and the `pthread_mutex_t` (a request
/// creates several of these). pthread rather than the standard library's
/// `Mutex`, whose locking ThreadSanitizer does not see.
package struct LockedState<State>: @unchecked Sendable {
    // @unchecked: the state is only reached between lock and unlock below;
    // copies of this struct share the one storage (and so the one lock).
    private let storage: Storage

    package init(_ initial: State) {
        storage = Storage.make(initial)
    }

    /// Runs `body` with exclusive access to the state.
    @inline(__always)
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { state, mutex in
            let status = pthread_mutex_lock(mutex)
            assert(status == 0, "LockedState re-entered on the same thread (pthread error \(status))")
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    /// The state as the header of a buffer whose one element is the mutex,
    /// so the mutex has a stable address without an allocation of its own.
    private final class Storage: ManagedBuffer<State, pthread_mutex_t> {
        static func make(_ initial: State) -> Storage {
            let buffer = Storage.create(minimumCapacity: 1) { _ in initial }
            let storage = unsafeDowncast(buffer, to: Storage.self)
            storage.withUnsafeMutablePointerToElements { mutex in
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
            return storage
        }

        deinit {
            // The header (the state) is a stored property of ManagedBuffer and
            // goes with it; the element (the mutex) is ours to destroy.
            withUnsafeMutablePointerToElements { mutex in _ = pthread_mutex_destroy(mutex) }
        }
    }
}

extension LockedState where State: Sendable {
    /// A copy of the state.
    package var value: State { withLock { $0 } }
}
