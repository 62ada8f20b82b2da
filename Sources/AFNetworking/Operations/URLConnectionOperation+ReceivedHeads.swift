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

    /// The head of an answer from the cache as the server sent it when it
    /// was stored (its fields updated by the 304 that confirmed it, if one
    /// did); nil for a received answer, or an entry stored without it.
    package var storedHead: ReceivedResponse? {
        guard case .cached(let cached)? = driver.outcome?.response else { return nil }
        return CacheRules.receivedHead(of: cached)
    }

    /// Calls `block` with each response head when it arrives — every hop's: a
    /// redirect, a challenge, an answer to be retried, a 304, the final one —
    /// on the completion queue, before the progress reports of its body.
    /// `afn -v` prints heads then, as curl does, not once the body is in.
    package func setHeadReceivedBlock(_ block: (@Sendable (ReceivedResponse) -> Void)?) {
        settings.withLock { $0.headReceived = block }
    }
}
