@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Transfer-rate caps per session task (beyond 2.x; the operations' and
/// graphs' caps, for tasks of `URLSessionManager` and `HTTPSessionManager`).
extension URLSessionTask {
    /// The download cap in bytes per second; 0 (the default) means none.
    /// After t seconds of the transfer at most cap × (t + 0.5 s) body bytes
    /// have been delivered; over a few seconds the rate is the cap. A piece
    /// over budget pauses the transfer until a timer resumes it: nothing
    /// blocks the network thread. Read when each request of the task is
    /// sent (set it before `resume()`).
    ///
    /// Only tasks made by this package's session managers are capped; on
    /// any other `URLSessionTask` the cap reads 0 and setting it does nothing.
    public var maximumDownloadBytesPerSecond: Int64 {
        get { (self as? ManagedSessionTask)?.frontend.state.withLock { $0.downloadLimiter?.bytesPerSecond } ?? 0 }
        set {
            guard let driver = (self as? ManagedSessionTask)?.frontend else { return }
            let limiter = newValue > 0 ? TransferRateLimiter(bytesPerSecond: newValue) : nil
            driver.state.withLock { $0.downloadLimiter = limiter }
        }
    }

    /// The upload cap in bytes per second; 0 (the default) means none. curl
    /// paces the request body with it. Read when each request of the task is
    /// sent; only tasks of this package's session managers are capped.
    public var maximumUploadBytesPerSecond: Int64 {
        get { (self as? ManagedSessionTask)?.frontend.state.withLock { $0.maximumUploadBytesPerSecond } ?? 0 }
        set {
            guard let driver = (self as? ManagedSessionTask)?.frontend else { return }
            driver.state.withLock { $0.maximumUploadBytesPerSecond = max(newValue, 0) }
        }
    }
}
