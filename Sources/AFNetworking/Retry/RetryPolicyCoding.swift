import Foundation

/// A manager's `retryPolicy` in its archive: each field under its own key,
/// as property-list values a secure unarchiver accepts. A field that is
/// missing or of the wrong type keeps its default.
enum RetryPolicyCoding {
    private enum Key {
        static let attempts = "retryPolicy.maximumAttempts"
        static let baseDelay = "retryPolicy.baseDelay"
        static let maximumDelay = "retryPolicy.maximumDelay"
        static let jitter = "retryPolicy.jitter"
        static let statuses = "retryPolicy.retryableStatusCodes"
        static let errors = "retryPolicy.retryableErrorCodes"
    }

    static func encode(_ policy: RetryPolicy, to coder: NSCoder) {
        coder.encode(policy.maximumAttempts, forKey: Key.attempts)
        coder.encode(policy.baseDelay, forKey: Key.baseDelay)
        coder.encode(policy.maximumDelay, forKey: Key.maximumDelay)
        coder.encode(policy.jitter, forKey: Key.jitter)
        coder.encode(policy.retryableStatusCodes.sorted().map { NSNumber(value: $0) } as NSArray, forKey: Key.statuses)
        coder.encode(policy.retryableErrorCodes.sorted().map { NSNumber(value: $0) } as NSArray, forKey: Key.errors)
    }

    /// nil when the archive holds no retry policy (the manager keeps none).
    static func decode(from coder: NSCoder) -> RetryPolicy? {
        guard coder.containsValue(forKey: Key.attempts) else { return nil }
        var policy = RetryPolicy()
        policy.maximumAttempts = coder.decodeInteger(forKey: Key.attempts)
        if coder.containsValue(forKey: Key.baseDelay) { policy.baseDelay = coder.decodeDouble(forKey: Key.baseDelay) }
        if coder.containsValue(forKey: Key.maximumDelay) { policy.maximumDelay = coder.decodeDouble(forKey: Key.maximumDelay) }
        if coder.containsValue(forKey: Key.jitter) { policy.jitter = coder.decodeDouble(forKey: Key.jitter) }
        if let codes = codes(Key.statuses, coder) { policy.retryableStatusCodes = codes }
        if let codes = codes(Key.errors, coder) { policy.retryableErrorCodes = codes }
        return policy
    }

    private static func codes(_ key: String, _ coder: NSCoder) -> Set<Int>? {
        guard coder.containsValue(forKey: key),
              let array = coder.decodeObject(of: [NSArray.self, NSNumber.self], forKey: key) as? [NSNumber] else { return nil }
        return Set(array.map(\.intValue))
    }
}
