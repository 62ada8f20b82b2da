@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// A download rate cap: a token bucket that fills at the cap per second and
/// holds half a second's worth, so after t seconds of a transfer at most
/// cap × (t + 0.5 s) bytes have been delivered. One per capped operation
/// (kept across its hops and pauses) and one per capped `RequestGraph`,
/// shared by its transfers. Asked on the network thread; nothing waits: a
/// piece over budget pauses the transfer, and a timer resumes it when the
/// bucket holds enough (see `TransferSink`).
final class TransferRateLimiter: Sendable {
    let bytesPerSecond: Int64
    private let bucket: LockedState<(tokens: Double, refilledAt: UInt64)>

    init(bytesPerSecond: Int64) {
        self.bytesPerSecond = max(bytesPerSecond, 1)
        bucket = LockedState((Double(max(bytesPerSecond, 1)) * TransferRateLimiter.burstSeconds, DispatchTime.now().uptimeNanoseconds))
    }

    /// Half a second's worth may go at once.
    static let burstSeconds = 0.5

    private var capacity: Double { Double(bytesPerSecond) * TransferRateLimiter.burstSeconds }

    /// Takes `count` bytes from the bucket and returns nil, or takes nothing
    /// and returns how long to wait until it holds enough. A piece larger
    /// than the bucket (a tiny cap) goes when the bucket is full.
    func take(_ count: Int, now: UInt64 = DispatchTime.now().uptimeNanoseconds) -> TimeInterval? {
        let capacity = self.capacity
        return bucket.withLock { bucket -> TimeInterval? in
            // Threads may read the clock in one order and get here in another.
            let elapsed = now > bucket.refilledAt ? Double(now - bucket.refilledAt) / 1e9 : 0
            bucket.tokens = min(capacity, bucket.tokens + elapsed * Double(bytesPerSecond))
            bucket.refilledAt = max(now, bucket.refilledAt)
            let needed = min(Double(count), capacity)
            guard bucket.tokens >= needed else { return (needed - bucket.tokens) / Double(bytesPerSecond) }
            bucket.tokens -= Double(count)
            return nil
        }
    }

    /// Gives back what `take` took (another limiter refused the same piece).
    func refund(_ count: Int) {
        let capacity = self.capacity
        bucket.withLock { $0.tokens = min(capacity, $0.tokens + Double(count)) }
    }

    /// Takes `count` bytes from every limiter, or from none: the longest wait
    /// when one of them has too little.
    static func take(_ count: Int, from limiters: [TransferRateLimiter]) -> TimeInterval? {
        var taken: [TransferRateLimiter] = []
        for limiter in limiters {
            if let wait = limiter.take(count) {
                for earlier in taken { earlier.refund(count) }
                return wait
            }
            taken.append(limiter)
        }
        return nil
    }
}
