@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a `200` to a `HEAD` does to the stored `GET` answer for its URL
/// (RFC 9111 §4.3.5): it describes the same representation, so it updates
/// the stored fields as a 304 would — or, when its validators or length say
/// the representation changed, the stored answer may no longer be served.
extension CacheRules {
    enum HeadUpdate {
        /// The stored answer, its fields updated by the HEAD's (§3.2).
        case refresh(CachedURLResponse)
        /// The representation changed: the stored answer goes.
        case invalidate
        /// The entry is not one the HEAD could have been answered from
        /// (another variant, another security partition): left as it is.
        case none
    }

    /// The update a `200` to a HEAD (`head`, sent as `sent`) makes to `entry`,
    /// stored under the same URL, for a request under `policyTag`.
    static func update(of entry: CacheIndex.Entry, byHead head: ReceivedResponse, policyTag: String,
                       request sent: () -> URLRequest) -> HeadUpdate {
        // Only an answer that could have been chosen for this request (§4.1).
        guard variantMatches(entry.cached, varyingOn: entry.varyNames, request: sent) else { return .none }
        guard let stored = entry.cached.response as? HTTPURLResponse else { return .none }
        // The validators the HEAD carries must be the stored ones, and so
        // must its length when it gives one; otherwise the stored body is of
        // another representation.
        for name in ["ETag", "Last-Modified"] {
            guard let received = head.value(forField: name.lowercased()) else { continue }
            guard stored.value(forHTTPHeaderField: name)?.trimmingCharacters(in: .whitespaces)
                    == received.trimmingCharacters(in: .whitespaces) else { return .invalidate }
        }
        if let length = head.value(forField: "content-length") {
            let storedLength = stored.value(forHTTPHeaderField: "Content-Length") ?? String(entry.cached.data.count)
            guard Int64(length.trimmingCharacters(in: .whitespaces)) == Int64(storedLength.trimmingCharacters(in: .whitespaces))
            else { return .invalidate }
        }
        if confirmationForbidsStoring(head, status: stored.statusCode, request: sent()) { return .invalidate }
        // A partition's answer is updated by its own requests only: another
        // policy's HEAD may remove it (above), never rewrite what it serves.
        guard entry.policyTag == policyTag else { return .none }
        return .refresh(merging(entry.cached, with: head))
    }
}
