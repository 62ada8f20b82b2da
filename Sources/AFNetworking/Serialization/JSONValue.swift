import Foundation

/// An untyped JSON value that is `Sendable`: what `Any?` from
/// `JSONSerialization` is, in a form that can cross tasks and actors.
/// Decode a body into it with the typed verbs, e.g.
/// `try await manager.get("users", as: JSONValue.self)`, or convert a
/// response serializer's object with `init(responseObject:)`.
public enum JSONValue: Sendable, Hashable, Codable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// Decodes any JSON value (a number as `.int` when it is integral and fits `Int`).
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? container.decode(Int.self) {
            self = .int(int)
        } else if let double = try? container.decode(Double.self) {
            self = .double(double)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as the JSON it stands for.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// Converts what `JSONResponseSerializer` (or `PropertyListResponseSerializer`
    /// for plists of strings, numbers, booleans, arrays and dictionaries)
    /// returned; nil and `NSNull` are `.null`. Throws an error in
    /// `AFURLResponseSerializationErrorDomain` (`NSURLErrorCannotDecodeContentData`)
    /// naming the first value JSON has no form for (a plist `Date` or `Data`,
    /// a non-string key, a non-finite number).
    public init(responseObject: Any?) throws {
        self = try Self.converting(responseObject, path: "")
    }

    private static func converting(_ object: Any?, path: String) throws -> JSONValue {
        switch object {
        case nil, is NSNull:
            return .null
        case let string as String:
            return .string(string)
        case let bool as Bool where type(of: object!) == Bool.self:
            return .bool(bool)
        case let int as Int where type(of: object!) == Int.self:
            return .int(int)
        case let double as Double where type(of: object!) == Double.self:
            guard double.isFinite else { throw unrepresentable(object!, at: path) }
            return .double(double)
        case let number as NSNumber:
            return try converting(number: number, path: path)
        case let array as [Any]:
            return .array(try array.enumerated().map { try converting($0.element, path: "\(path)[\($0.offset)]") })
        case let dictionary as [String: Any]:
            var result: [String: JSONValue] = [:]
            for (key, value) in dictionary { result[key] = try converting(value, path: path.isEmpty ? key : "\(path).\(key)") }
            return .object(result)
        default:
            throw unrepresentable(object!, at: path)
        }
    }

    private static func converting(number: NSNumber, path: String) throws -> JSONValue {
        let type = String(cString: number.objCType)
        if type == "c" || type == "B" { return .bool(number.boolValue) }
        if type == "f" || type == "d" {
            guard number.doubleValue.isFinite else { throw unrepresentable(number, at: path) }
            return .double(number.doubleValue)
        }
        if let int = Int(exactly: number.int64Value), number.int64Value.description == number.stringValue { return .int(int) }
        return .double(number.doubleValue)
    }

    private static func unrepresentable(_ value: Any, at path: String) -> NSError {
        NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorCannotDecodeContentData, userInfo: [
            NSLocalizedDescriptionKey: "The response object has no JSONValue form: \(type(of: value)) at \(path.isEmpty ? "the top level" : path).",
        ])
    }

    // MARK: - Reading

    /// The member `key` of an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` of an array; nil out of range or for a non-array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The string of `.string`, else nil.
    public var stringValue: String? { if case .string(let value) = self { return value }; return nil }
    /// The value of `.int`, else nil.
    public var intValue: Int? { if case .int(let value) = self { return value }; return nil }
    /// The number of `.double` or `.int`, else nil.
    public var doubleValue: Double? {
        switch self {
        case .double(let value): return value
        case .int(let value): return Double(value)
        default: return nil
        }
    }
    /// The value of `.bool`, else nil.
    public var boolValue: Bool? { if case .bool(let value) = self { return value }; return nil }
    /// The elements of `.array`, else nil.
    public var arrayValue: [JSONValue]? { if case .array(let value) = self { return value }; return nil }
    /// The members of `.object`, else nil.
    public var objectValue: [String: JSONValue]? { if case .object(let value) = self { return value }; return nil }
    /// Whether this is `.null`.
    public var isNull: Bool { self == .null }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// `.null`.
    public init(nilLiteral: ()) { self = .null }
    /// `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `.int`.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// `.double`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.array`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `.object` (a repeated key keeps its last value).
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
