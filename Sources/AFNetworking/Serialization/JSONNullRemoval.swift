import Foundation

/// Removes dictionary entries whose value is `NSNull`, descending into nested
/// arrays and dictionaries (2.7's `removesKeysWithNullValues`). Nulls that are
/// array elements stay: removing them would shift indices the server meant.
enum JSONNullRemoval {
    /// Nesting beyond this is left untouched; JSONSerialization rejects deeper input anyway,
    /// and the bound keeps recursion from exhausting the stack on hand-built objects.
    static let maximumDepth = 1024

    static func removingNulls(from object: Any, depth: Int = 0) -> Any {
        guard depth < maximumDepth else { return object }
        if let dictionary = object as? [String: Any] {
            var result: [String: Any] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, value) in dictionary where !(value is NSNull) {
                result[key] = removingNulls(from: value, depth: depth + 1)
            }
            return result
        }
        if let array = object as? [Any] {
            return array.map { removingNulls(from: $0, depth: depth + 1) }
        }
        return object
    }
}
