import CAFCurl
import Foundation

/// What libcurl measured for one transfer, read once when it ends (on the
/// network thread; reading curl's counters is cheap and needs no allocation
/// beyond the address string).
package struct TransferTimings: Sendable, Equatable {
    /// Seconds from the start of the transfer until the name was resolved,
    /// the connection made, the TLS handshake done, the first response byte, the end.
    package var domainLookup: TimeInterval = 0
    package var connect: TimeInterval = 0
    package var secureConnection: TimeInterval = 0
    package var firstByte: TimeInterval = 0
    package var total: TimeInterval = 0
    package var bytesSent: Int64 = 0
    package var bytesReceived: Int64 = 0
    /// No new connection was made for it.
    package var reusedConnection = false
    /// "HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3" (empty when nothing was exchanged).
    package var httpVersion = ""
    package var remoteAddress: String?

    package init() {}

    init(reading easy: EasyHandle) {
        func seconds(_ key: CURLINFO) -> TimeInterval { max(0, Double(easy.info(size: key))) / 1_000_000 }
        domainLookup = seconds(CURLINFO_NAMELOOKUP_TIME_T)
        connect = seconds(CURLINFO_CONNECT_TIME_T)
        secureConnection = seconds(CURLINFO_APPCONNECT_TIME_T)
        firstByte = seconds(CURLINFO_STARTTRANSFER_TIME_T)
        total = seconds(CURLINFO_TOTAL_TIME_T)
        bytesSent = max(0, easy.info(size: CURLINFO_SIZE_UPLOAD_T))
        bytesReceived = max(0, easy.info(size: CURLINFO_SIZE_DOWNLOAD_T))
        reusedConnection = easy.info(long: CURLINFO_NUM_CONNECTS) == 0 && total > 0
        switch easy.info(long: CURLINFO_HTTP_VERSION) {
        case CURL_HTTP_VERSION_1_0: httpVersion = "HTTP/1.0"
        case CURL_HTTP_VERSION_1_1: httpVersion = "HTTP/1.1"
        case CURL_HTTP_VERSION_2_0: httpVersion = "HTTP/2"
        case CURL_HTTP_VERSION_3: httpVersion = "HTTP/3"
        default: httpVersion = ""
        }
        remoteAddress = easy.info(string: CURLINFO_PRIMARY_IP).flatMap { $0.isEmpty ? nil : $0 }
    }
}
