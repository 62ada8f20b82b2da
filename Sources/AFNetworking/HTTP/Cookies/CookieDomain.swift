import CAFPSL
import Foundation

/// RFC 6265 §5.1.2–§5.1.3 and §5.3 step 5: canonical hosts, domain-match,
/// and public suffixes (through libpsl, Debian's maintained list).
enum CookieDomain {
    /// A URL's host as cookies see it: lowercased, without IPv6 brackets or a
    /// trailing dot. nil for a URL without one.
    static func canonicalHost(of url: URL) -> String? {
        guard var host = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedHost ?? url.host,
              !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host = String(host.dropLast()) }
        return host.lowercased()
    }

    /// An IPv4 or IPv6 literal: such hosts only ever match themselves.
    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// §5.1.3: identical, or `domain` is a dot-separated suffix of a host
    /// name. Octet for octet: String's `==` would call different byte
    /// sequences equal (canonical equivalence).
    static func domainMatches(host: String, domain: String) -> Bool {
        let hostBytes = Array(host.utf8)
        let domainBytes = Array(domain.utf8)
        if hostBytes == domainBytes { return true }
        guard hostBytes.count > domainBytes.count, hostBytes.reversed().starts(with: domainBytes.reversed()),
              hostBytes[hostBytes.count - domainBytes.count - 1] == UInt8(ascii: "."), !isIPAddress(host) else { return false }
        return true
    }

    /// Whether libpsl calls `domain` a public suffix ("com", "co.uk",
    /// "github.io"; and, by the list's implicit "*" rule, any unknown
    /// top-level name). With no list at all every name counts as one, so
    /// a Domain attribute can only ever repeat the host (host-only cookies).
    static func isPublicSuffix(_ domain: String) -> Bool {
        afn_psl_is_public_suffix(domain) != 0
    }
}
