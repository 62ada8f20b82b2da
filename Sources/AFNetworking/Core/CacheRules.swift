import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP caching decisions for `URLRequest.cachePolicy` with `URLCache.shared`
/// (RFC 9111 for a private cache, as NSURLConnection applies it).
enum CacheRules {
    enum Plan {
        case load
        case useCached(CachedURLResponse)
        /// Ask the server whether the cached entity is still current.
        case revalidate(CachedURLResponse, URLRequest)
        case fail(NSError)
    }

    /// `userInfo` key of a cached response: the security policy it was fetched under.
    static let policyKey = "AFNetworkingSecurityPolicy"

    /// A policy's tag: the standard policy's, or the handshake fingerprint.
    static func policyTag(_ policy: SecurityPolicy) -> String {
        policy.isStandardVerification ? "standard" : policy.handshakeFingerprint
    }

    /// A response fetched under one security policy is never served to a
    /// request under another (a cache hit would skip the handshake's checks).
    ///
    /// swift-corelibs-foundation's `URLCache` keys entries by host, port and
    /// path only (not the scheme or the query), so it may return another URL's
    /// entry: an entry only counts when its response is for exactly this URL.
    private static func cachedResponse(for request: URLRequest, in cache: URLCache, policy: SecurityPolicy) -> CachedURLResponse? {
        guard let cached = cache.cachedResponse(for: request),
              let storedURL = cached.response.url, let wanted = request.url,
              storedURL.absoluteString == wanted.absoluteString else { return nil }
        let tag = cached.userInfo?[policyKey] as? String ?? "standard"
        return tag == policyTag(policy) ? cached : nil
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

    static func plan(for request: URLRequest, cache: URLCache, policy: SecurityPolicy, now: Date = Date()) -> Plan {
        guard mayConsultCache(for: request) else { return .load }
        switch request.cachePolicy {
        case .returnCacheDataDontLoad:
            if let cached = cachedResponse(for: request, in: cache, policy: policy) { return .useCached(cached) }
            return .fail(TransportErrors.make(NSURLErrorResourceUnavailable, url: request.url, underlying: nil,
                                              description: "The resource is not in the cache and the request may not load it."))
        case .returnCacheDataElseLoad:
            return cachedResponse(for: request, in: cache, policy: policy).map(Plan.useCached) ?? .load
        default:
            guard let cached = cachedResponse(for: request, in: cache, policy: policy),
                  let response = cached.response as? HTTPURLResponse else { return .load }
            let directives = cacheControl(response)
            if !directives.contains("no-cache"), let lifetime = freshnessLifetime(response), age(response, now: now) < lifetime {
                return .useCached(cached)
            }
            if let conditional = conditionalRequest(request, validating: response) { return .revalidate(cached, conditional) }
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
        return ["cache-control", "expires", "etag", "last-modified"].contains { head.value(forField: $0) != nil }
    }

    /// Whether a response may be stored for this request.
    static func isStorable(_ response: HTTPURLResponse, for request: URLRequest) -> Bool {
        guard (request.httpMethod ?? "GET").uppercased() == "GET", response.statusCode == 200,
              request.cachePolicy != .reloadIgnoringLocalAndRemoteCacheData else { return false }
        let requestDirectives = request.value(forHTTPHeaderField: "Cache-Control").map(directives(in:)) ?? []
        return !cacheControl(response).contains("no-store") && !requestDirectives.contains("no-store")
    }

    static func conditionalRequest(_ request: URLRequest, validating response: HTTPURLResponse) -> URLRequest? {
        var conditional = request
        if let tag = response.value(forHTTPHeaderField: "ETag") {
            conditional.setValue(tag, forHTTPHeaderField: "If-None-Match")
        } else if let modified = response.value(forHTTPHeaderField: "Last-Modified") {
            conditional.setValue(modified, forHTTPHeaderField: "If-Modified-Since")
        } else {
            return nil
        }
        return conditional
    }

    /// max-age, else Expires − Date, else 10% of Date − Last-Modified (the usual heuristic).
    static func freshnessLifetime(_ response: HTTPURLResponse) -> TimeInterval? {
        for directive in cacheControl(response) where directive.hasPrefix("max-age=") {
            return TimeInterval(directive.dropFirst(8))
        }
        let date = response.value(forHTTPHeaderField: "Date").flatMap(httpDate)
        if let expires = response.value(forHTTPHeaderField: "Expires") {
            guard let expiry = httpDate(expires), let date else { return 0 }
            return expiry.timeIntervalSince(date)
        }
        if let modified = response.value(forHTTPHeaderField: "Last-Modified").flatMap(httpDate), let date {
            return max(0, date.timeIntervalSince(modified)) / 10
        }
        return nil
    }

    private static func age(_ response: HTTPURLResponse, now: Date) -> TimeInterval {
        let stated = response.value(forHTTPHeaderField: "Age").flatMap(TimeInterval.init) ?? 0
        let apparent = response.value(forHTTPHeaderField: "Date").flatMap(httpDate).map { max(0, now.timeIntervalSince($0)) } ?? 0
        return max(stated, apparent)
    }

    private static func cacheControl(_ response: HTTPURLResponse) -> [String] {
        response.value(forHTTPHeaderField: "Cache-Control").map(directives(in:)) ?? []
    }

    private static func directives(in value: String) -> [String] {
        value.lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    private static let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter
    }()
    private static let dateLock = NSLock()

    static func httpDate(_ text: String) -> Date? {
        dateLock.lock()
        defer { dateLock.unlock() }
        return dateFormatter.date(from: text)
    }
}
