import Foundation

/// What the query-string and form encoding refuses instead of sending its
/// `description` (2.7 wrote any object as `-description`: a Swift struct
/// arrived as `Order(id: 1, note: "x")` under an empty field name).
extension QueryStringEncoding {
    /// Why `parameters` has no query-string form, or nil when it has one:
    /// a dictionary, array or set at the top (or a lone leaf value, which
    /// 2.7 sent under the empty field name), and at the leaves only values
    /// whose text is the value itself — strings, numbers, booleans, `Data`,
    /// URLs, dates, UUIDs, `NSNull`/nil, and `LosslessStringConvertible` types.
    static func unrepresentable(_ parameters: Any) -> String? {
        guard let present = unwrapped(parameters) else { return nil }
        guard isCollection(present) else {
            // A lone string or number is sent under the empty field name, as 2.7 did.
            return isLeaf(present) ? nil : "\(type(of: present)) is not a dictionary, array or set of parameters"
        }
        return unrepresentable(present, path: nil, depth: 0)
    }

    private static func unrepresentable(_ value: Any, path: String?, depth: Int) -> String? {
        guard let present = unwrapped(value) else { return nil }
        let place = path.map { "the value of \($0)" } ?? "a value"
        if depth < maximumDepth, isCollection(present) {
            if let dictionary = present as? [AnyHashable: Any] ?? (present as? NSDictionary).map(bridged) {
                for (key, nested) in dictionary {
                    guard isLeaf(key.base) else { return "a key of type \(type(of: key.base)) has no query-string form" }
                    let field = path.map { "\($0)[\(describe(key))]" } ?? describe(key)
                    if let reason = unrepresentable(nested, path: field, depth: depth + 1) { return reason }
                }
                return nil
            }
            let elements: [Any] = (present as? [Any]) ?? (present as? NSArray).map { $0.map { $0 } }
                ?? (present as? Set<AnyHashable>).map { $0.map(\.base) } ?? (present as? NSSet).map { $0.map { $0 } } ?? []
            for element in elements {
                if let reason = unrepresentable(element, path: "\(path ?? "")[]", depth: depth + 1) { return reason }
            }
            return nil
        }
        return isLeaf(present) ? nil : "\(place) is a \(type(of: present)), which has no query-string form (pass its fields, or use a JSON serializer)"
    }

    private static func bridged(_ dictionary: NSDictionary) -> [AnyHashable: Any] {
        var result: [AnyHashable: Any] = [:]
        for (key, value) in dictionary { if let key = key as? AnyHashable { result[key] = value } }
        return result
    }

    private static func isCollection(_ value: Any) -> Bool {
        if value is String || value is Data { return false }
        return value is [AnyHashable: Any] || value is NSDictionary || value is [Any] || value is NSArray
            || value is Set<AnyHashable> || value is NSSet
    }

    private static func isLeaf(_ value: Any) -> Bool {
        if type(of: value) == AnyHashable.self, let hashable = value as? AnyHashable { return isLeaf(hashable.base) }
        switch value {
        case is NSNull, is String, is Substring, is NSString, is NSNumber, is Data, is NSData, is URL, is NSURL,
             is Date, is NSDate, is UUID, is NSUUID, is Decimal, is any LosslessStringConvertible:
            return true
        default:
            return false
        }
    }

    /// `Optional.none` inside an `Any` is nil; `.some(x)` is `x`.
    private static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrapped(child.value)
    }
}
