import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CookieJar {
    /// §5.4: the `Cookie` header value for a request to `url` (nil: no
    /// cookie applies). Host-only cookies go to their host alone, domain
    /// cookies to the domain and below it; the path must path-match the
    /// request's raw path; Secure cookies only over https. Longer paths come
    /// first, then earlier creation. Expired cookies met on the way are
    /// evicted from the storage.
    static func header(for url: URL, from storage: HTTPCookieStorage, now: Date = Date()) -> String? {
        CookiePersistence.restoreOnce(storage)
        // The storage first: with no cookie at all (the common case) the host is never canonicalized.
        guard let all = storage.cookies, !all.isEmpty, let host = CookieDomain.canonicalHost(of: url) else { return nil }
        let path = CookiePath.requestPath(of: url)
        let secure = isSecure(url)
        var expired: [HTTPCookie] = []
        var chosen: [(cookie: HTTPCookie, pathLength: Int, created: (Date, UInt64))] = []
        for cookie in all {
            if let expiry = cookie.expiresDate, expiry <= now {
                expired.append(cookie)
                continue
            }
            let stored = cookie.domain.lowercased()
            let matchesHost = stored.hasPrefix(".")
                ? CookieDomain.domainMatches(host: host, domain: String(stored.dropFirst()))
                : Array(host.utf8) == Array(stored.utf8)
            let cookiePath = cookie.path.isEmpty ? "/" : cookie.path
            guard matchesHost, !cookie.isSecure || secure, CookiePath.matches(requestPath: path, cookiePath: cookiePath) else { continue }
            chosen.append((cookie, cookiePath.utf8.count, creation(of: cookie, in: storage)))
        }
        for cookie in expired { remove(cookie, from: storage) }
        guard !chosen.isEmpty else { return nil }
        chosen.sort { left, right in
            if left.pathLength != right.pathLength { return left.pathLength > right.pathLength }
            return (left.created.0, left.created.1) < (right.created.0, right.created.1)
        }
        // A nameless cookie (only seeded into the storage by code; the parser
        // refuses them) is sent as its value alone.
        return chosen.map { $0.cookie.name.isEmpty ? $0.cookie.value : "\($0.cookie.name)=\($0.cookie.value)" }.joined(separator: "; ")
    }
}
