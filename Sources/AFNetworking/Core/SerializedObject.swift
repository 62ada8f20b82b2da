/// A response object as a serializer made it, handed between queues. `Any?`
/// is not Sendable; the value is never mutated after it is stored.
struct SerializedObject: @unchecked Sendable {
    // @unchecked: an immutable box around the serializer's result.
    let value: Any?
}
