@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// The heads as they arrived, for this package's own tools (`afn -i/-v`
/// prints them as received, as curl does): not public API.
extension URLConnectionOperation {
    /// The final response head as received — status line with the server's
    /// reason phrase, fields in order and in their case — once the outcome is
    /// known; nil for an answer from the cache alone or a restored operation.
    package var receivedHead: ReceivedResponse? {
        guard case .received(let head)? = driver.outcome?.response else { return nil }
        return head
    }

    /// The 304 that confirmed the cached response now returned, when one did.
    package var revalidationHead: ReceivedResponse? {
        driver.outcome?.revalidatedBy
    }
}
