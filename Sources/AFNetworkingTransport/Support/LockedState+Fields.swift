/// One field of the state at a time: a locked setting is declared in one line,
/// `get { state[\.timeout] } set { state.set(\.timeout, to: newValue) }`,
/// instead of a `withLock` pair written out by hand.
///
/// (A property wrapper cannot do this: Swift refuses a `package` wrapper on a
/// `public` or `open` property, and a public one would add a type to the API.)
///
/// The read is get-only on purpose: `state[\.headers]["A"] = "b"` or
/// `state[\.count] += 1` would be a read and a write under two separate locks,
/// and an update from another thread in between would be lost. They do not
/// compile; a read-modify-write, or anything that spans several fields, goes
/// through one `withLock`.
@_spi(AFNetworkingInternal)
extension LockedState {
    /// The field at `field`, read under the lock.
    @inlinable
    public subscript<Value>(_ field: KeyPath<State, Value>) -> Value {
        withLock { $0[keyPath: field] }
    }

    /// Replaces the field at `field` under the lock.
    @inlinable
    public func set<Value>(_ field: WritableKeyPath<State, Value>, to value: Value) {
        withLock { $0[keyPath: field] = value }
    }
}
