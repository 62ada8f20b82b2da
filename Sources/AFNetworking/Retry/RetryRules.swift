@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Reading a server's `Retry-After` (RFC 9110 §10.2.3).
enum RetryRules {
    /// Seconds to wait: delay-seconds, or an HTTP date (from `now`); nil when
    /// absent or unreadable.
    static func retryAfter(in response: ReceivedResponse, now: Date = Date()) -> TimeInterval? {
        guard let value = response.value(forField: "retry-after")?.trimmingCharacters(in: .whitespaces), !value.isEmpty else {
            return nil
        }
        if let seconds = Int(value) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        guard let date = HTTPDate.parse(value) else { return nil }
        return max(0, date - now.timeIntervalSince1970)
    }
}
