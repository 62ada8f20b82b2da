import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP caching decisions for `URLRequest.cachePolicy` with `URLCache.shared`
/// (RFC 9111 for a private cache, as NSURLConnection applies it), answered
/// from the cache's in-memory `CacheIndex`.
enum CacheRules {
    enum Plan {
        case load
        case useCached(CachedURLResponse)
        /// Ask the server whether the cached entity is still current.
        case revalidate(CachedURLResponse, URLRequest)
        case fail(NSError)
    }

    /// `userInfo` key of a cached response: the security policy (and client identity) it was fetched under.
    static let policyKey = "AFNetworkingSecurityPolicy"
    /// The tag of OpenSSL's standard verification (the default policy).
    static let standardTag = "standard"

    /// A policy's tag: the standard policy's, or the handshake fingerprint.
    static func policyTag(_ policy: SecurityPolicy) -> String {
        policy.isStandardVerification ? standardTag : policy.handshakeFingerprint
    }

    /// The tag a response is cached under and served to: its security policy's
    /// and, when the request presented one, its client identity's. A server
    /// may answer differently for each identity (or none), so an answer
    /// earned with a certificate is never served to a request without it.
    static func tag(policy: SecurityPolicy?, clientCertificate: ClientCertificate?) -> String {
        let base = policy.map(policyTag) ?? standardTag
        guard let identity = clientCertificate?.identity else { return base }
        return "\(base)|client:\(identity.fingerprint)"
    }

    /// Whether `URLCache` may answer the request at all: a GET that is not
    /// ranged and whose policy does not ignore the local cache.
    static func mayConsultCache(for request: URLRequest) -> Bool {
        switch request.cachePolicy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData: return false
        default: break
        }
        return (request.httpMethod ?? "GET").uppercased() == "GET" && request.value(forHTTPHeaderField: "Range") == nil
    }

    /// What to do for `request` under `policyTag` with `cache`. Off the network
    /// thread: the first question about a URL may read the disk.
    static func plan(for request: URLRequest, cache: URLCache, policyTag: String, now: Date = Date()) -> Plan {
        guard mayConsultCache(for: request), let key = request.url?.absoluteString else { return .load }
        let index = CacheIndex.index(for: cache)
        var entry: CacheIndex.Entry?
        switch index.lookup(key) {
        case .entry(let known): entry = known
        case .absent: entry = nil
        case .unknown: entry = index.load(request, key: key)
        }
        // A response fetched under one security policy is never served to a
        // request under another (a cache hit would skip the handshake's checks).
        if let known = entry, known.policyTag != policyTag { entry = nil }
        switch request.cachePolicy {
        case .returnCacheDataDontLoad:
            if let entry { return .useCached(entry.cached) }
            return .fail(TransportErrors.make(NSURLErrorResourceUnavailable, url: request.url, underlying: nil,
                                              description: "The resource is not in the cache and the request may not load it."))
        case .returnCacheDataElseLoad:
            return entry.map { .useCached($0.cached) } ?? .load
        default:
            guard let entry else { return .load }
            if entry.freshness.isFresh(at: now) { return .useCached(entry.cached) }
            if let conditional = conditionalRequest(request, validating: entry.freshness) { return .revalidate(entry.cached, conditional) }
            return .load
        }
    }

    /// A cheap test on the raw response head, so the common uncacheable case
    /// costs nothing: a GET answered 200 with validators or a lifetime, not
    /// `no-store`, for a request that does not bypass the cache.
    static func mayStore(_ head: ReceivedResponse, for request: URLRequest) -> Bool {
        guard head.statusCode == 200, request.cachePolicy != .reloadIgnoringLocalAndRemoteCacheData,
              (request.httpMethod ?? "GET").uppercased() == "GET" else { return false }
        if head.value(forField: "cache-control")?.lowercased().contains("no-store") == true { return false }
        if request.value(forHTTPHeaderField: "Cache-Control")?.lowercased().contains("no-store") == true { return false }
        return ["cache-control", "expires", "etag", "last-modified"].contains { head.value(forField: $0) != nil }
    }

    /// What a response does to the cache entry of its URL (RFC 9111 §3, §4.4).
    enum Effect {
        /// Store it.
        case store
        /// Whatever was stored for the URL is obsolete: a fresh answer that
        /// may not be stored, or an unsafe method that changed the resource.
        case invalidate
        /// Nothing (an error status to a GET, a request that bypassed the cache).
        case none
    }

    static func effect(of head: ReceivedResponse, for request: URLRequest) -> Effect {
        let method = (request.httpMethod ?? "GET").uppercased()
        switch method {
        case "GET":
            guard request.cachePolicy != .reloadIgnoringLocalAndRemoteCacheData, head.statusCode == 200 else { return .none }
            return mayStore(head, for: request) ? .store : .invalidate
        case "HEAD", "OPTIONS", "TRACE":
            return .none
        default:
            return (200..<400).contains(head.statusCode) ? .invalidate : .none
        }
    }

    static func conditionalRequest(_ request: URLRequest, validating freshness: CacheFreshness) -> URLRequest? {
        var conditional = request
        if let tag = freshness.etag {
            conditional.setValue(tag, forHTTPHeaderField: "If-None-Match")
        } else if let modified = freshness.lastModified {
            conditional.setValue(modified, forHTTPHeaderField: "If-Modified-Since")
        } else {
            return nil
        }
        return conditional
    }

    /// A Cache-Control value's directives, lowercased and trimmed.
    static func directives(in value: String?) -> [String] {
        guard let value, !value.isEmpty else { return [] }
        return value.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
