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
///
/// SPI-public rather than `package`: the compiler inlines and specializes a
/// `public` inlinable function in another module but not a `package` one.
/// Unspecialized, every lock access from AFNetworking called the generic
/// `withLock`, which looks up its result type's metadata at run time: 9,100
/// instructions per plain request, measured. The target is not a product,
/// and the SPI keeps it out of clients' sight.
@_spi(AFNetworkingInternal)
public struct LockedState<State>: @unchecked Sendable {
    // @unchecked: the state is only reached between lock and unlock below;
    // copies of this struct share the one storage (and so the one lock).
    @usableFromInline let storage: Storage

    @inlinable
    public init(_ initial: State) {
        storage = Storage.make(initial)
    }

    /// Runs `body` with exclusive access to the state.
    @inlinable @inline(__always)
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { state, mutex in
            let status = pthread_mutex_lock(mutex)
            assert(status == 0, "LockedState re-entered on the same thread (pthread error \(status))")
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }

    /// The state as the header of a buffer whose one element is the mutex,
    /// so the mutex has a stable address without an allocation of its own.
    @usableFromInline
    final class Storage: ManagedBuffer<State, pthread_mutex_t> {
        @usableFromInline
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

@_spi(AFNetworkingInternal)
@_spi(AFNetworkingInternal)
extension LockedState where State: Sendable {
    /// A copy of the state.
    public var value: State { withLock { $0 } }
}
