@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Reading a server's `Retry-After` (RFC 9110 §10.2.3).
enum RetryRules {
    /// Seconds to wait: delay-seconds (digits only; more than an `Int` holds
    /// is a wait longer than any cap, not an unreadable value that would let
    /// the policy's own backoff resend at once), or an HTTP date (from
    /// `now`); nil when absent or unreadable.
    static func retryAfter(in response: ReceivedResponse, now: Date = Date()) -> TimeInterval? {
        guard let value = response.value(forField: "retry-after")?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        if value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return Int(value).map(TimeInterval.init) ?? .infinity }
        guard let date = HTTPDate.parse(value) else { return nil }
        return max(0, date - now.timeIntervalSince1970)
    }
}
