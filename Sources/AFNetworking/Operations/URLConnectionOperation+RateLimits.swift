@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Transfer-rate caps (beyond 2.x; curl's `--limit-rate`): a background sync
/// must not saturate a server's uplink.
extension URLConnectionOperation {
    /// The download cap in bytes per second; 0 (the default) means none.
    /// After t seconds of the transfer at most cap × (t + 0.5 s) body bytes
    /// have been delivered; over a few seconds the rate is the cap. Enforced
    /// without blocking the network thread: a piece over budget pauses the
    /// transfer (curl stops reading the socket, so the server's sends slow
    /// too) until a timer resumes it. Read when each hop starts.
    public var maximumDownloadBytesPerSecond: Int64 {
        get { settings[\.maximumDownloadBytesPerSecond] }
        set {
            let cap = max(newValue, 0)
            let limiter = cap > 0 ? TransferRateLimiter(bytesPerSecond: cap) : nil
            settings.withLock { settings in
                settings.maximumDownloadBytesPerSecond = cap
                settings.downloadLimiter = limiter
            }
        }
    }

    /// The upload cap in bytes per second; 0 (the default) means none. curl
    /// paces the request body with it (`CURLOPT_MAX_SEND_SPEED_LARGE`), sending
    /// at most a quarter of a second's worth at a time. Read when each hop starts.
    public var maximumUploadBytesPerSecond: Int64 {
        get { settings[\.maximumUploadBytesPerSecond] }
        set { settings.set(\.maximumUploadBytesPerSecond, to: max(newValue, 0)) }
    }

    /// Whether the request sends a body (counts for a graph's upload cap).
    var sendsBody: Bool {
        let request = self.request
        return request.httpBody != nil || request.httpBodyStream != nil
    }

    /// A graph's caps, given to the operation when the graph queues it.
    func shareGraphCaps(download: TransferRateLimiter?, uploadShare: Int64) {
        settings.withLock { settings in
            settings.graphDownloadLimiter = download
            settings.graphUploadShare = uploadShare
        }
    }
}
