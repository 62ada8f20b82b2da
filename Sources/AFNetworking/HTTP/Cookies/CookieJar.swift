import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The library's cookie policy on top of an `HTTPCookieStorage`: RFC 6265
/// §5.3 (with 6265bis's settled rules) decides what a `Set-Cookie` field
/// stores, replaces or deletes; §5.4 decides what a request sends
/// (`CookieJar+Header.swift`). The storage stays the place cookies live, so
/// code that seeds or inspects it keeps working. Called off the network
/// thread and outside every lock: the storage locks itself and may write
/// to disk.
enum CookieJar {
    /// Browsers keep at most this many cookies per domain, evicting the oldest.
    static let maximumCookiesPerDomain = 180
    /// 6265bis: no cookie outlives 400 days, whatever Expires or Max-Age say.
    static let maximumLifetime: TimeInterval = 400 * 24 * 3600

    /// The schemes whose requests may carry and set Secure cookies.
    static func isSecure(_ url: URL) -> Bool {
        ["https", "wss", "https+unix"].contains(url.scheme?.lowercased() ?? "")
    }

    /// A cookie that passed §5.3, ready to be stored.
    struct Decision {
        let name: String
        let value: String
        /// Without a leading dot.
        let domain: String
        let hostOnly: Bool
        let path: String
        /// nil: a session cookie.
        let expiry: Date?
        let secure: Bool
        let httpOnly: Bool
        let sameSite: ParsedSetCookie.SameSite
        /// Set by an https response (6265bis: only such an origin may touch a Secure cookie).
        var fromSecureOrigin = false

        /// The domain as `HTTPCookie` spells it: a leading dot for a domain cookie.
        var storedDomain: String { hostOnly ? domain : "." + domain }
    }

    /// §5.3 steps 2–10 and 6265bis's Secure and prefix rules. nil: the
    /// cookie is ignored. `existing` is the storage's current content (for
    /// the rule that an insecure origin may not shadow a Secure cookie).
    static func decide(_ parsed: ParsedSetCookie, for url: URL, host: String, now: Date, existing: [HTTPCookie]) -> Decision? {
        let secureOrigin = isSecure(url)
        // Max-Age wins over Expires; either makes the cookie persistent.
        let expiry: Date?
        if let maxAge = parsed.maxAge {
            expiry = maxAge <= 0 ? Date.distantPast : now.addingTimeInterval(min(TimeInterval(maxAge), maximumLifetime))
        } else if let expires = parsed.expires {
            expiry = min(expires, now.addingTimeInterval(maximumLifetime))
        } else {
            expiry = nil
        }

        var domain = parsed.domain ?? ""
        if !domain.isEmpty, !CookieDomain.isIPAddress(domain), CookieDomain.isPublicSuffix(domain) {
            // Step 5: a public suffix is only allowed as the host itself, and
            // then the cookie is host-only.
            guard domain == host else { return nil }
            domain = ""
        }
        let hostOnly: Bool
        if domain.isEmpty {
            hostOnly = true
            domain = host
        } else {
            guard CookieDomain.domainMatches(host: host, domain: domain) else { return nil }
            hostOnly = false
        }
        let path = parsed.path ?? CookiePath.defaultPath(for: url)

        // 6265bis: Secure only from a secure origin, and an insecure origin
        // cannot overwrite (or shadow) a Secure cookie it could not read.
        if parsed.secure && !secureOrigin { return nil }
        if !parsed.secure && !secureOrigin {
            let shadows = existing.contains { cookie in
                guard cookie.isSecure, cookie.name == parsed.name else { return false }
                let other = domainKey(cookie)
                return (CookieDomain.domainMatches(host: other, domain: domain) || CookieDomain.domainMatches(host: domain, domain: other))
                    && CookiePath.matches(requestPath: path, cookiePath: cookie.path.isEmpty ? "/" : cookie.path)
            }
            if shadows { return nil }
        }

        // 6265bis cookie prefixes (any case): `__Secure-` needs Secure;
        // `__Host-` also needs a host-only cookie (no Domain attribute at
        // all, not even one naming the host) for Path=/.
        let name = parsed.name.lowercased()
        if name.hasPrefix("__secure-") || name.hasPrefix("__host-") {
            guard parsed.secure else { return nil }
            if name.hasPrefix("__host-") { guard hostOnly, parsed.domain == nil, parsed.path == "/" else { return nil } }
        }
        return Decision(name: parsed.name, value: parsed.value, domain: domain, hostOnly: hostOnly, path: path,
                        expiry: expiry, secure: parsed.secure, httpOnly: parsed.httpOnly, sameSite: parsed.sameSite,
                        fromSecureOrigin: secureOrigin)
    }

    /// A stored cookie's domain without the leading dot, lowercased (§5.3's
    /// identity is name, domain and path, whether host-only or not).
    static func domainKey(_ cookie: HTTPCookie) -> String {
        let domain = cookie.domain.lowercased()
        return domain.hasPrefix(".") ? String(domain.dropFirst()) : domain
    }

    /// The cookie's creation time and tie-breaker: the ledger's when it
    /// recorded this very cookie, else the `HTTPCookie`'s own stamp.
    static func creation(of cookie: HTTPCookie, in storage: HTTPCookieStorage) -> (Date, UInt64) {
        if let entry = CookieLedger.shared.entry(for: cookie, in: storage) { return (entry.created, entry.sequence) }
        return (Date(timeIntervalSinceReferenceDate: CookieLedger.stamp(of: cookie)), 0)
    }
}
