@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// A mutable value the test shares with `@Sendable` blocks (completion,
/// progress, challenge, redirect, observers, server handlers): a `let` box
/// instead of a captured `var`.
///
/// `value` reads or replaces the whole value; a read-modify-write
/// (`+= 1`, `append`, "set once") must go through `withLock` or one of the
/// conveniences below, which do it under one lock. The lock is
/// `LockedState`'s non-recursive mutex: never touch the box from inside its
/// own `withLock`.
final class Locked<Value>: @unchecked Sendable {
    // @unchecked: every access to the value goes through the lock in `state`.
    private let state: LockedState<Value>

    init(_ initial: Value) { state = LockedState(initial) }

    var value: Value {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }

    @discardableResult
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try state.withLock(body)
    }
}

extension Locked where Value: RangeReplaceableCollection {
    func append(_ element: Value.Element) { withLock { $0.append(element) } }
}

extension Locked where Value: BinaryInteger {
    /// Adds `amount` and returns the new value.
    @discardableResult
    func increment(by amount: Value = 1) -> Value { withLock { $0 += amount; return $0 } }
}

extension Locked where Value == Bool {
    /// Sets the flag; true only for the call that changed it from false.
    func setOnce() -> Bool { withLock { flag in defer { flag = true }; return !flag } }
}
