import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Storing responses in `URLCache.shared` (lookups happen in `beginTransfer`).
extension URLConnectionOperation {
    /// A cheap test on the raw response head, so the common uncacheable case
    /// costs nothing: a GET that ended in a 200 with validators or a lifetime,
    /// its body in memory, not served from the cache, not `no-store`.
    var mayStoreInCache: Bool {
        locked {
            guard !servedFromCache, transportError == nil, responseData != nil,
                  request.cachePolicy != .reloadIgnoringLocalAndRemoteCacheData,
                  (request.httpMethod ?? "GET").uppercased() == "GET", let head = receivedResponse, head.statusCode == 200 else { return false }
            if head.value(forField: "cache-control")?.lowercased().contains("no-store") == true { return false }
            return ["cache-control", "expires", "etag", "last-modified"].contains { head.value(forField: $0) != nil }
        }
    }

    /// Stores the response, through the cache-response block if one is set.
    /// Runs off the network thread, before the operation finishes, so that a
    /// request started after it can be answered from the cache.
    func storeInCache() {
        let (original, response, data, block, policy) = locked {
            (self.request, materializedResponse() as? HTTPURLResponse, responseData, cacheResponse, securityPolicy)
        }
        let cache = URLCache.shared
        // As Apple's URLCache: nothing larger than 5% of the cache, so one big
        // download never evicts everything else or stalls its completion on a
        // multi-megabyte disk write.
        guard let response, let data, CacheRules.isStorable(response, for: original),
              data.count <= max(cache.memoryCapacity, cache.diskCapacity) / 20 else { return }
        // Stored under the URL that produced it (after any redirect), and
        // tagged with the security policy it was fetched under.
        var key = original
        key.url = response.url ?? original.url
        let userInfo: [AnyHashable: Any] = [CacheRules.policyKey: CacheRules.policyTag(policy)]
        var cached: CachedURLResponse? = CachedURLResponse(response: response, data: data, userInfo: userInfo, storagePolicy: .allowed)
        if let block, let proposed = cached { cached = block(self, proposed) }
        guard let cached, !isCancelled else { return }
        cache.storeCachedResponse(cached, for: key)
    }
}
