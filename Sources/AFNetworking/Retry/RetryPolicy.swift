import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// When and how a failed request is sent again (opt-in, beyond 2.x): set it
/// on an operation, an operation manager or a session manager (`retryPolicy`;
/// nil, the default, never retries).
///
/// Only idempotent requests are retried (GET, HEAD, PUT, DELETE, OPTIONS),
/// never a resumed (ranged) one, and never one whose body stream cannot be
/// sent again (a multipart body can). A retry happens after a transport error
/// in `retryableErrorCodes`, or a response whose status is in
/// `retryableStatusCodes` — then its `Retry-After` (seconds or an HTTP date)
/// is honoured, and a `Retry-After` longer than `maximumDelay` means no retry.
/// Otherwise the wait grows exponentially from `baseDelay`, with `jitter`.
/// An answer that is retried never reaches the caller: not its body, not its
/// delegate calls.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (3: the first and two retries).
    public var maximumAttempts: Int = 3
    /// The wait before the first retry; each further retry waits twice as long.
    public var baseDelay: TimeInterval = 0.5
    /// No wait is longer than this.
    public var maximumDelay: TimeInterval = 30
    /// Each backoff wait is varied at random by up to this fraction (0.2: ±20 %).
    public var jitter: Double = 0.2
    /// Response statuses that are retried.
    public var retryableStatusCodes: Set<Int> = [429, 503]
    /// `NSURLErrorDomain` codes that are retried.
    public var retryableErrorCodes: Set<Int> = [
        NSURLErrorTimedOut, NSURLErrorCannotConnectToHost, NSURLErrorNetworkConnectionLost, NSURLErrorCannotFindHost,
        NSURLErrorDNSLookupFailed, NSURLErrorNotConnectedToInternet,
    ]

    /// The defaults above.
    public init() {}

    /// Three attempts, 0.5 s doubling to 30 s, ±20 %, on 429/503 and connection errors.
    public static let `default` = RetryPolicy()

    /// The methods that may be sent twice without changing the outcome.
    static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"]

    /// The backoff before the retry after `attempts` attempts, without jitter.
    func backoff(afterAttempts attempts: Int) -> TimeInterval {
        let exponent = Double(max(0, attempts - 1))
        return min(maximumDelay, max(0, baseDelay) * pow(2, min(exponent, 30)))
    }

    /// `delay` varied by up to ±`jitter`, within [0, maximumDelay].
    func jittered(_ delay: TimeInterval, random: Double = Double.random(in: -1...1)) -> TimeInterval {
        let spread = max(0, min(1, jitter))
        return min(maximumDelay, max(0, delay * (1 + spread * random)))
    }
}
