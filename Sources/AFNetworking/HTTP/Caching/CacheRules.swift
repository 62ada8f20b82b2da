@_spi(AFNetworkingInternal) import AFNetworkingTransport
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

    /// The background request behind a stale answer (`stale-while-revalidate`)
    /// that the plan uses: the caller sends it.
    struct BackgroundRevalidation {
        /// The conditional request for the stored entry.
        let request: URLRequest
        let stored: CachedURLResponse
        /// The cache key.
        let key: String
    }

    /// `userInfo` key of a cached response: the security policy and client
    /// identity it was fetched under (`partitionTag`).
    static let policyKey = "AFNetworkingSecurityPolicy"
    /// The tag of OpenSSL's standard verification (the default policy).
    static let standardTag = "standard"

    /// A policy's tag: the standard policy's, or the handshake fingerprint.
    static func policyTag(_ policy: SecurityPolicy) -> String {
        policy.isStandardVerification ? standardTag : policy.partitionKey
    }

    /// The partition a cached answer belongs to: the security policy it was
    /// fetched under and the client identity it was fetched with. A server
    /// that authenticates clients by certificate answers each identity for
    /// itself, so an answer earned with one identity (or none) is never
    /// served to a request made with another (or none).
    ///
    /// Nor is an answer to one `Authorization` served to a request with
    /// another (or none): a token or password names a user, and the answer
    /// the server gave that user is theirs alone. `request` is the request as
    /// its owner made it (after an interceptor adapted it).
    static func partitionTag(policy: SecurityPolicy?, clientCertificate: ClientCertificate?, request: URLRequest) -> String {
        var tag = policy.map(policyTag) ?? standardTag
        if let identity = clientCertificate?.identity { tag += "|client:\(identity.fingerprint)" }
        if let authorization = request.value(forHTTPHeaderField: "Authorization") {
            // A digest, not the secret: tags go to the disk with the entries.
            let digest = PublicKeyPins.sha256(Data(authorization.utf8)) ?? Data(authorization.utf8)
            tag += "|auth:" + digest.prefix(16).map { String(format: "%02x", $0) }.joined()
        }
        return tag
    }

    /// Whether `URLCache` may answer the request at all: a GET whose policy
    /// does not ignore the local cache, not ranged or with one byte range
    /// that is not a resume (`mayConsultCache(forRange:of:)`).
    static func mayConsultCache(for request: URLRequest) -> Bool {
        mayConsultCache(for: request, range: request.value(forHTTPHeaderField: "Range"))
    }

    /// The same, with the request's `Range` field already read.
    private static func mayConsultCache(for request: URLRequest, range: String?) -> Bool {
        switch request.cachePolicy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData: return false
        default: break
        }
        guard (request.httpMethod ?? "GET").uppercased() == "GET" else { return false }
        guard let range else { return true }
        return mayConsultCache(forRange: range, of: request)
    }

    /// What to do for `request` under `policyTag` with `cache`. `sent` makes
    /// the request as it would go out (with its cookies), for the fields a
    /// stored response varies on; asked only then (it reads the cookie
    /// storage). Off the network thread: the first question about a URL may
    /// read the disk. `background`: set when the plan uses a stale answer
    /// under `stale-while-revalidate`, to the request the caller must send
    /// behind it (the rules do no I/O).
    static func plan(for request: URLRequest, sent: (() -> URLRequest)? = nil, cache: URLCache, policyTag: String,
                     now: Date = Date(), background: inout BackgroundRevalidation?) -> Plan {
        let range = request.value(forHTTPHeaderField: "Range")
        guard mayConsultCache(for: request, range: range), let key = request.url?.absoluteString else { return .load }
        var asked = RequestDirectives(request)
        // Foundation's meaning of `.reloadRevalidatingCacheData`: a stored
        // answer is used only once the server confirms it, as a request's own
        // `no-cache` asks (without sending that field). Never fresh by itself:
        // not by `max-age`, nor by the Last-Modified heuristic (§4.2.2).
        if request.cachePolicy == .reloadRevalidatingCacheData { asked.noCache = true }
        // no-store in the request: neither answered from nor written to the cache.
        if asked.noStore && !asked.onlyIfCached { return .load }
        let index = CacheIndex.index(for: cache)
        var entry = index.entry(for: request, key: key)
        // A response fetched under one security policy is never served to a
        // request under another (a cache hit would skip the handshake's checks),
        // nor one fetched with one client identity to a request with another.
        if let known = entry, known.policyTag != policyTag { entry = nil }
        // Nor one that varies on a field this request has otherwise (§4.1).
        if let known = entry, !variantMatches(known.cached, varyingOn: known.varyNames, request: sent ?? { request }) { entry = nil }
        let ranged = range != nil
        switch request.cachePolicy {
        case .returnCacheDataDontLoad:
            // Nothing may load: the whole entity when the range cannot be cut
            // from it (a server may ignore Range too, RFC 9110 §14.2).
            if let entry { return .useCached((ranged ? answering(request, from: entry.cached) : nil) ?? entry.cached) }
            return .fail(TransportErrors.make(NSURLErrorResourceUnavailable, url: request.url, underlying: nil,
                                              description: "The resource is not in the cache and the request may not load it."))
        case .returnCacheDataElseLoad:
            guard let entry else { return .load }
            let answer = ranged ? answering(request, from: entry.cached) : Optional(entry.cached)
            return answer.map { Plan.useCached($0) } ?? .load
        default:
            guard let entry else {
                if asked.onlyIfCached, let refusal = gatewayTimeout(for: request) { return .useCached(refusal) }
                return .load
            }
            let age = entry.freshness.currentAge(at: now)
            if asked.permitsReuse(of: entry.freshness, age: age) {
                let hit = entry.hit(age: age)
                guard ranged else { return .useCached(hit) }
                if let answer = answering(request, from: hit) { return .useCached(answer) }
                return asked.onlyIfCached ? .useCached(hit) : .load
            }
            if asked.onlyIfCached, let refusal = gatewayTimeout(for: request) { return .useCached(refusal) }
            // A stale entry and a range: the request goes to the server as
            // it is (RFC 9111 §4), not made conditional — a 304 would
            // confirm the whole entity, not answer the range.
            if ranged { return .load }
            if asked.permitsStaleWhileRevalidate(entry.freshness, age: age) {
                // RFC 5861 §3: the stored answer now, the server asked behind it.
                let revalidation = conditionalRequest(request, validating: entry.freshness) ?? request
                background = BackgroundRevalidation(request: revalidation, stored: entry.cached, key: key)
                return .useCached(entry.hit(age: age))
            }
            if let conditional = conditionalRequest(request, validating: entry.freshness) { return .revalidate(entry.cached, conditional) }
            return .load
        }
    }

    /// What `cached` answers `request` with: itself, a 206 cut from it, or
    /// nil when the range must go to the server.
    private static func answering(_ request: URLRequest, from cached: CachedURLResponse) -> CachedURLResponse? {
        switch rangeAnswer(to: request, from: cached) {
        case .whole: return cached
        case .partial(let partial): return partial
        case .forward: return nil
        }
    }

    /// Statuses a cache may store without explicit freshness (RFC 9110 §15.1;
    /// 206 only as the whole representation, stored as its 200).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// A cheap test on the raw response head, so the common uncacheable case
    /// costs nothing (RFC 9111 §3): a GET answered with a final status the
    /// library can store (a 206 only when it holds the whole representation:
    /// partial content is neither stored nor combined), not `no-store`
    /// either way, not `Vary: *`, with explicit freshness, or a heuristically
    /// cacheable status with a validator or `Last-Modified`.
    static func mayStore(_ head: ReceivedResponse, for request: URLRequest) -> Bool {
        guard (200..<600).contains(head.statusCode), head.statusCode != 304,
              head.statusCode != 206 || coversWholeRepresentation(head),
              request.cachePolicy != .reloadIgnoringLocalAndRemoteCacheData,
              (request.httpMethod ?? "GET").uppercased() == "GET" else { return false }
        // A whole 206 is stored as (and judged as) its 200.
        let status = head.statusCode == 206 ? 200 : head.statusCode
        guard let explicit = freshnessUnlessForbidden(head, status: status, request: request) else { return false }
        if explicit || head.hasField("expires") { return true }
        return heuristicallyCacheable.contains(status) && (head.hasField("etag") || head.hasField("last-modified"))
    }

    /// Whether a 304 that confirmed a stored response of `status` says it
    /// may no longer be stored (`no-store`, `Vary: *`, or a request's
    /// `no-store`): the entry is then removed, not refreshed (RFC 9111 §3
    /// applies to the updated response, §4.3.4).
    static func confirmationForbidsStoring(_ confirmation: ReceivedResponse, status: Int, request: URLRequest) -> Bool {
        freshnessUnlessForbidden(confirmation, status: status, request: request) == nil
    }

    /// Nil when `head` (for a response of `status`) or `request` forbids
    /// storing; otherwise whether `head` gives explicit freshness in
    /// `Cache-Control` (`max-age`, `public`).
    ///
    /// Read over the head's bytes: this runs for every response, and most
    /// are not stored (Strings of the directives cost ~4k instructions).
    private static func freshnessUnlessForbidden(_ head: ReceivedResponse, status: Int, request: URLRequest) -> Bool? {
        var noStore = false, mustUnderstand = false, explicit = false
        head.forEachListMember(ofField: "cache-control") { directive in
            if directive.named("must-understand") {
                mustUnderstand = true
            } else if directive.equals("no-store") {
                noStore = true
            } else if directive.equals("public") || (directive.named("max-age") && directive.hasArgument) {
                explicit = true
            }
        }
        // §5.2.2.3: with must-understand, a status the cache knows overrides
        // no-store (the pair lets a server keep older caches from storing it);
        // an unknown status is not stored whatever else is said.
        if mustUnderstand {
            guard understands(status) else { return nil }
        } else if noStore {
            return nil
        }
        if RequestDirectives(request).noStore { return nil }
        var variesOnEverything = false
        head.forEachListMember(ofField: "vary") { if $0.equals("*") { variesOnEverything = true } }
        return variesOnEverything ? nil : explicit
    }

    /// `must-understand` (RFC 9111 §5.2.2.3): the library knows the caching
    /// rules of the statuses it stores.
    private static func understands(_ status: Int) -> Bool {
        heuristicallyCacheable.contains(status) || [302, 307].contains(status)
    }

    /// What a response does to the cache entry of its URL (RFC 9111 §3, §4.4).
    enum Effect {
        /// Store it.
        case store
        /// Whatever was stored for the final URL is obsolete: a fresh answer
        /// to a GET that may not be stored.
        case invalidate
        /// Whatever was stored for the request's own URL is obsolete: the
        /// server answered an unsafe method without an error (RFC 9111 §4.4).
        case invalidateTarget
        /// A `200` to a HEAD: the stored GET answer for the URL is updated
        /// or removed by what it says (§4.3.5, `update(of:byHead:…)`).
        case updateFromHead
        /// Nothing (an error status to a GET, a request that bypassed the cache).
        case none
    }

    /// `redirected`: whether the request was redirected on the way to
    /// `head` (asked of unsafe methods only: a redirect is a non-error answer
    /// to them, whatever the final status).
    static func effect(of head: ReceivedResponse, for request: URLRequest, redirected: @autoclosure () -> Bool = false) -> Effect {
        let method = (request.httpMethod ?? "GET").uppercased()
        switch method {
        case "GET":
            guard request.cachePolicy != .reloadIgnoringLocalAndRemoteCacheData else { return .none }
            if mayStore(head, for: request) { return .store }
            // Part of a representation replaces no stored one (it is not
            // stored either): a resume or a range the cache could not answer.
            if head.statusCode == 206 { return .none }
            // A newer answer that may not be stored leaves no older one to be
            // served in its place (an error status keeps what was stored).
            return (200..<400).contains(head.statusCode) && head.statusCode != 304 ? .invalidate : .none
        case "HEAD":
            guard request.cachePolicy != .reloadIgnoringLocalAndRemoteCacheData, !RequestDirectives(request).noStore else { return .none }
            return head.statusCode == 200 ? .updateFromHead : .none
        case "OPTIONS", "TRACE":
            return .none
        default:
            return (200..<400).contains(head.statusCode) || redirected() ? .invalidateTarget : .none
        }
    }

    /// The other URLs a non-error answer to an unsafe method makes obsolete
    /// (RFC 9111 §4.4): its `Location` and `Content-Location`, resolved
    /// against the URL that answered, when they share the target's origin
    /// (another origin's entries are never dropped at a server's word).
    static func alsoInvalidated(by head: ReceivedResponse, target: URL) -> [URL] {
        var urls: [URL] = []
        for field in ["location", "content-location"] {
            guard let value = head.value(forField: field)?.trimmingCharacters(in: .whitespaces), !value.isEmpty,
                  let url = URL(string: value, relativeTo: head.url)?.absoluteURL,
                  RedirectRules.sameOrigin(url, target), url.absoluteString != target.absoluteString,
                  !urls.contains(url) else { continue }
            urls.append(url)
        }
        return urls
    }

    /// Whether a 304 selects `cached` for update (RFC 9111 §4.3.4): by its
    /// entity tag when it carries one — a strong tag must be the stored one,
    /// a weak one must match it weakly; without one it confirms what was
    /// asked about.
    static func confirmation(_ confirmation: ReceivedResponse, selects cached: CachedURLResponse) -> Bool {
        guard let tag = confirmation.value(forField: "etag")?.trimmingCharacters(in: .whitespaces), !tag.isEmpty else { return true }
        guard let stored = (cached.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces) else {
            return false
        }
        func opaque(_ tag: String) -> Substring { tag.hasPrefix("W/") ? tag.dropFirst(2) : tag[...] }
        return tag.hasPrefix("W/") ? opaque(tag) == opaque(stored) : tag == stored
    }

    /// `request` made conditional on the stored response's validators (RFC
    /// 9111 §4.3.1): its entity tag (MUST) and its `Last-Modified` (SHOULD)
    /// both — a server whose tags change with the coding (gzip, a `-gzip`
    /// suffix) still answers 304 by the date. Nil when it has neither.
    static func conditionalRequest(_ request: URLRequest, validating freshness: CacheFreshness) -> URLRequest? {
        guard freshness.etag != nil || freshness.lastModified != nil else { return nil }
        var conditional = request
        if let tag = freshness.etag { conditional.setValue(tag, forHTTPHeaderField: "If-None-Match") }
        if let modified = freshness.lastModified { conditional.setValue(modified, forHTTPHeaderField: "If-Modified-Since") }
        return conditional
    }

    /// A Cache-Control value's directives, lowercased and trimmed (quotes
    /// around an argument removed: `max-age="60"` is `max-age=60`). A comma
    /// inside a quoted argument does not end the directive (RFC 9110 §5.6.4):
    /// `no-cache="a, b"` is one directive, not `no-cache=a` and a `b`.
    ///
    /// Split over the UTF-8 bytes (the delimiters are ASCII, so a byte of a
    /// multi-byte character never matches one), with ASCII lowercasing and
    /// OWS (space, tab) trimming: directive names and the field names of a
    /// qualified `no-cache` are tokens. Run for every response and stored
    /// entry, so no `Character` walk and no Foundation trimming.
    static func directives(in value: String?) -> [String] {
        guard let value, !value.isEmpty else { return [] }
        var directives: [String] = []
        var current: [UInt8] = []
        var quoted = false
        var escaped = false
        func endDirective() {
            var start = current.startIndex
            var end = current.endIndex
            while start < end, current[start] == 0x20 || current[start] == 0x09 { start += 1 }
            while end > start, current[end - 1] == 0x20 || current[end - 1] == 0x09 { end -= 1 }
            if start < end { directives.append(String(decoding: current[start..<end], as: UTF8.self)) }
            current.removeAll(keepingCapacity: true)
        }
        for byte in value.utf8 {
            let lowered = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            if escaped {
                current.append(lowered)
                escaped = false
            } else if quoted && byte == 0x5C {
                escaped = true
            } else if byte == 0x22 {
                quoted.toggle()
            } else if byte == 0x2C && !quoted {
                endDirective()
            } else {
                current.append(lowered)
            }
        }
        endDirective()
        return directives
    }
}
