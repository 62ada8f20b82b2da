import Foundation

/// One `field=value` component of a query string before escaping. A nil value
/// (from `NSNull` or an absent optional) is written as the bare field.
struct QueryStringPair {
    /// The field, already flattened (`a[b][]`).
    let field: String
    /// The raw value: a string, number, `Data`, … or nil for a bare key.
    let value: Any?

    /// `field=value` with both sides escaped, or just `field` when the value is null.
    var urlEncodedStringValue: String {
        let escapedField = QueryStringEncoding.percentEscaped(field)
        guard let value = value else { return escapedField }
        return escapedField + "=" + QueryStringEncoding.percentEscaped(QueryStringEncoding.describe(value))
    }
}

/// The query-string flattening and escaping rules of AFNetworking 2.7.
enum QueryStringEncoding {
    /// Bytes left unescaped: RFC 3986 unreserved characters, plus "/" and "?" which
    /// section 3.4 allows in a query so that a URL can be passed as a value. Every
    /// other reserved character (`:#[]@!$&'()*+,;=`) is escaped.
    private static let unescaped: [Bool] = {
        var table = [Bool](repeating: false, count: 256)
        for byte in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?".utf8 {
            table[Int(byte)] = true
        }
        return table
    }()

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Percent-escapes `string` as UTF-8 for use as a query field or value.
    static func percentEscaped(_ string: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(string.utf8.count)
        for byte in string.utf8 {
            if unescaped[Int(byte)] {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The whole query string for `parameters`, components joined by `&`.
    static func queryString(from parameters: Any) -> String {
        return pairs(key: nil, value: parameters).map { $0.urlEncodedStringValue }.joined(separator: "&")
    }

    /// Nesting deeper than this is written as a leaf value rather than descended into,
    /// so absurd depth cannot exhaust the stack.
    static let maximumDepth = 256

    /// Flattens `value` under `key`: dictionaries to `key[sub]` with sorted keys, arrays to
    /// `key[]`, sets to repeated `key` in sorted order, anything else to one pair.
    static func pairs(key: String?, value: Any, depth: Int = 0) -> [QueryStringPair] {
        let value = unwrapOptional(value)
        guard let present = value else { return [QueryStringPair(field: key ?? "", value: nil)] }

        if depth < maximumDepth {
            if let dictionary = asDictionary(present) {
                var result: [QueryStringPair] = []
                let entries = dictionary.map { (describe($0.key), $0.value) }
                for (nestedKey, nestedValue) in entries.sorted(by: { precedes($0.0, $1.0) }) {
                    let field = key.map { "\($0)[\(nestedKey)]" } ?? nestedKey
                    result += pairs(key: field, value: nestedValue, depth: depth + 1)
                }
                return result
            }
            if let array = asArray(present) {
                let field = "\(key ?? "")[]"
                return array.flatMap { pairs(key: field, value: $0, depth: depth + 1) }
            }
            if let set = asSet(present) {
                let sorted = set.sorted { precedes(describe($0), describe($1)) }
                return sorted.flatMap { pairs(key: key, value: $0, depth: depth + 1) }
            }
        }
        return [QueryStringPair(field: key ?? "", value: present is NSNull ? nil : present)]
    }

    /// Key order as 2.7's sort on `description` with `compare:` gives for ordinary keys:
    /// code-unit order of the UTF-16 text.
    static func precedes(_ a: String, _ b: String) -> Bool {
        return a.utf16.lexicographicallyPrecedes(b.utf16)
    }

    /// `Optional.none` hidden inside an `Any` becomes nil; `.some(x)` becomes `x`.
    private static func unwrapOptional(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let child = mirror.children.first else { return nil }
        return unwrapOptional(child.value)
    }

    private static func asDictionary(_ value: Any) -> [AnyHashable: Any]? {
        if let dictionary = value as? [AnyHashable: Any] { return dictionary }
        if let dictionary = value as? NSDictionary {
            var result: [AnyHashable: Any] = [:]
            for (key, value) in dictionary { if let key = key as? AnyHashable { result[key] = value } }
            return result
        }
        return nil
    }

    private static func asArray(_ value: Any) -> [Any]? {
        if value is String || value is Data { return nil }
        if let array = value as? [Any] { return array }
        if let array = value as? NSArray { return array.map { $0 } }
        return nil
    }

    private static func asSet(_ value: Any) -> [Any]? {
        if let set = value as? Set<AnyHashable> { return set.map { $0.base } }
        if let set = value as? NSSet { return set.map { $0 } }
        return nil
    }

    /// The text 2.7 would get from `-description`: numbers as an `NSNumber` prints them
    /// (`true` → `1`, `2.0` → `2`, a `Decimal` with all its digits), strings unchanged,
    /// URLs as their absolute string.
    static func describe(_ value: Any) -> String {
        if type(of: value) == AnyHashable.self, let hashable = value as? AnyHashable {
            return describe(hashable.base)
        }
        switch value {
        case let string as String: return string
        case let string as Substring: return String(string)
        case let bool as Bool where type(of: value) == Bool.self: return bool ? "1" : "0"
        case let double as Double where type(of: value) == Double.self: return describe(double: double)
        case let float as Float where type(of: value) == Float.self: return describe(float: float)
        // Before NSNumber: a Decimal bridges to an NSDecimalNumber, whose digits `describe(number:)` keeps too.
        case let decimal as Decimal where type(of: value) == Decimal.self: return decimal.description
        case let number as NSNumber: return describe(number: number)
        case let url as URL: return url.absoluteString
        case let data as Data: return describe(data: data)
        case let string as NSString: return String(string)
        default: return String(describing: value)
        }
    }

    private static func describe(number: NSNumber) -> String {
        // Its objCType is "d", but its digits are exact: through Double, 12345678901234567.89
        // would lose its last ones.
        if let decimal = number as? NSDecimalNumber { return decimal.decimalValue.description }
        let type = String(cString: number.objCType)
        if type == "f" { return describe(float: number.floatValue) }
        if type == "d" { return describe(double: number.doubleValue) }
        if type == "B" || isBoolean(number) { return number.boolValue ? "1" : "0" }
        // "c" is also an Int8's (and a char's): 42, not a truthy "1".
        if type == "c" { return String(number.int8Value) }
        return number.stringValue
    }

    /// Whether `number` is a boolean: `NSNumber(value: true)`, a bridged `Bool`, a JSON or
    /// property-list `true`. Their objCType is "c", an `Int8`'s too (corelibs keeps it so
    /// for archiving); what sets them apart is that they are the two CFBoolean singletons,
    /// which `NSNumber(value:)` hands out for a `Bool` every time.
    private static func isBoolean(_ number: NSNumber) -> Bool {
        number === NSNumber(value: true) || number === NSNumber(value: false)
    }

    /// Integral doubles print without a fraction, as `NSNumber` does ("2", not "2.0").
    private static func describe(double: Double) -> String {
        if double.isFinite, double.rounded() == double, abs(double) < 1e15 {
            return String(Int64(double))
        }
        return String(describing: double)
    }

    /// A `Float` in its own precision, as `NSNumber` prints it: `0.1`, not the
    /// `0.10000000149011612` of the same value widened to `Double` first.
    private static func describe(float: Float) -> String {
        if float.isFinite, float.rounded() == float, abs(float) < 1e15 {
            return String(Int64(float))
        }
        return String(describing: float)
    }

    /// `<48656c6c 6f>`: the classic `NSData` description, grouped in 4-byte words.
    private static func describe(data: Data) -> String {
        var text = "<"
        for (index, byte) in data.enumerated() {
            if index > 0, index % 4 == 0 { text += " " }
            text += String(format: "%02x", byte)
        }
        return text + ">"
    }
}
