import CAFOpenSSL
import Foundation

/// RFC 9525 server identity checks, delegated to OpenSSL's X509_check_host /
/// X509_check_ip_asc.
enum HostnameMatcher {
    /// Whether `certificate` is valid for `host`.
    ///
    /// `host` may be a DNS name (matched against DNS SANs, with a single
    /// left-most-label wildcard; never against the subject CN, RFC 9525 6.3),
    /// an IPv4 literal or an IPv6 literal, bracketed or not (matched against
    /// IP SANs only). One trailing dot is ignored.
    static func matches(_ certificate: Certificate, host: String) -> Bool {
        guard let name = normalized(host) else { return false }
        return name.withCString { cafssl_check_host(certificate.handle, $0) } == 1
    }

    /// The name as OpenSSL wants it, or `nil` for names that cannot match anything.
    static func normalized(_ host: String) -> String? {
        var name = Substring(host)
        if name.hasPrefix("["), name.hasSuffix("]") {
            name = name.dropFirst().dropLast()
        } else if name.hasSuffix("."), !name.hasSuffix("..") {
            name = name.dropLast()
        }
        // An embedded NUL would let "good.com\0.evil" pass as "good.com" in C.
        guard !name.isEmpty, !name.contains("\0"), name.utf8.count <= 1024 else { return nil }
        return String(name)
    }
}
