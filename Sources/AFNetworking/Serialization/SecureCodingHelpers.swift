import Foundation

/// Archive helpers shared by the serializers. Values are stored as property-list
/// types (arrays of numbers and strings) because those round-trip through
/// `NSKeyedArchiver` on every platform, while `NSIndexSet`/`NSSet` coding is not
/// implemented everywhere in swift-corelibs-foundation.
enum SecureCodingHelpers {
    /// Stores an index set as its ranges, flattened to `[lower, upper, lower, upper, …]`.
    static func encode(_ indexSet: IndexSet?, forKey key: String, with coder: NSCoder) {
        guard let indexSet = indexSet else { return }
        var bounds: [NSNumber] = []
        for range in indexSet.rangeView {
            bounds.append(NSNumber(value: range.lowerBound))
            bounds.append(NSNumber(value: range.upperBound))
        }
        coder.encode(bounds as NSArray, forKey: key)
    }

    /// Reads what `encode(_:forKey:with:)` wrote; nil when the key is absent or malformed.
    static func decodeIndexSet(forKey key: String, with coder: NSCoder) -> IndexSet? {
        guard coder.containsValue(forKey: key),
              let array = coder.decodeObject(of: [NSArray.self, NSNumber.self], forKey: key) as? NSArray else {
            return nil
        }
        let numbers = array.compactMap { ($0 as? NSNumber)?.intValue }
        guard numbers.count % 2 == 0 else { return nil }
        var result = IndexSet()
        var index = 0
        while index < numbers.count {
            let lower = numbers[index], upper = numbers[index + 1]
            if lower >= 0, upper >= lower { result.insert(integersIn: lower..<upper) }
            index += 2
        }
        return result
    }

    /// Stores a set of strings as a sorted array so archives are deterministic.
    static func encode(_ strings: Set<String>?, forKey key: String, with coder: NSCoder) {
        guard let strings = strings else { return }
        coder.encode(strings.sorted().map { NSString(string: $0) } as NSArray, forKey: key)
    }

    /// Reads what `encode(_:forKey:with:)` wrote for a string set.
    static func decodeStringSet(forKey key: String, with coder: NSCoder) -> Set<String>? {
        guard coder.containsValue(forKey: key),
              let array = coder.decodeObject(of: [NSArray.self, NSString.self], forKey: key) as? NSArray else {
            return nil
        }
        return Set(array.compactMap { ($0 as? NSString).map { String($0) } ?? ($0 as? String) })
    }

    /// Reads an unsigned integer stored as an `NSNumber` or with `encode(_:forKey:)`.
    static func decodeUInt(forKey key: String, with coder: NSCoder) -> UInt? {
        guard coder.containsValue(forKey: key) else { return nil }
        if let number = coder.decodeObject(of: NSNumber.self, forKey: key) {
            return number.uintValue
        }
        return nil
    }

    /// Reads a string-to-string dictionary stored as an `NSDictionary`.
    static func decodeStringDictionary(forKey key: String, with coder: NSCoder) -> [String: String]? {
        guard coder.containsValue(forKey: key),
              let dictionary = coder.decodeObject(of: [NSDictionary.self, NSString.self], forKey: key) as? NSDictionary else {
            return nil
        }
        var result: [String: String] = [:]
        for (key, value) in dictionary {
            if let k = key as? String, let v = value as? String { result[k] = v }
        }
        return result
    }
}
