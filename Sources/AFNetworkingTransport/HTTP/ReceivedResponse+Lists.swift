/// One member of a comma-separated field value (RFC 9110 §5.6.1), as
/// received: case and quotes kept, OWS around it trimmed. It points into the
/// response's head and is valid only inside the closure it is handed to.
package struct ListMember {
    package let bytes: UnsafeBufferPointer<UInt8>

    /// Whether the whole member is `lowercase` (lowercase ASCII), compared without case.
    package func equals(_ lowercase: StaticString) -> Bool {
        ListMember.same(UnsafeBufferPointer(rebasing: bytes[...]), lowercase)
    }

    /// Whether the member's name — what precedes its first `=`, or all of
    /// it — is `lowercase` (lowercase ASCII), compared without case.
    package func named(_ lowercase: StaticString) -> Bool {
        let end = bytes.firstIndex(of: UInt8(ascii: "=")) ?? bytes.endIndex
        return ListMember.same(UnsafeBufferPointer(rebasing: bytes[..<end]), lowercase)
    }

    /// Whether the member has an argument (`name=value`).
    package var hasArgument: Bool { bytes.contains(UInt8(ascii: "=")) }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        for offset in 0..<bytes.count {
            let byte = bytes[offset]
            if (byte >= 65 && byte <= 90 ? byte | 0x20 : byte) != lowercase.utf8Start[offset] { return false }
        }
        return true
    }
}

extension ReceivedResponse {
    /// Hands `body` each member of the lists the fields named `wanted`
    /// (lowercase) hold, in order: a comma inside a quoted string does not
    /// end a member, empty members are skipped. For checks run on every
    /// response (whether the cache may store it): no String is made.
    package func forEachListMember(ofField wanted: StaticString, _ body: (ListMember) -> Void) {
        head.forEachListMember(ofField: wanted, body)
    }
}

extension HeadBytes {
    func forEachListMember(ofField wanted: StaticString, _ body: (ListMember) -> Void) {
        bytes.withUnsafeBufferPointer { all in
            func emit(_ lower: Int, _ upper: Int) {
                var lower = lower, upper = upper
                while lower < upper, ResponseHead.isBlank(all[lower]) { lower += 1 }
                while upper > lower, ResponseHead.isBlank(all[upper - 1]) { upper -= 1 }
                if lower < upper { body(ListMember(bytes: UnsafeBufferPointer(rebasing: all[lower..<upper]))) }
            }
            for span in spans where HeadBytes.nameMatches(bytes, span, wanted) {
                var start = Int(span.valueStart), quoted = false, escaped = false
                for index in Int(span.valueStart)..<Int(span.valueEnd) {
                    let byte = all[index]
                    if escaped {
                        escaped = false
                    } else if quoted && byte == UInt8(ascii: "\\") {
                        escaped = true
                    } else if byte == UInt8(ascii: "\"") {
                        quoted.toggle()
                    } else if byte == UInt8(ascii: ","), !quoted {
                        emit(start, index)
                        start = index + 1
                    }
                }
                emit(start, Int(span.valueEnd))
            }
        }
    }
}
