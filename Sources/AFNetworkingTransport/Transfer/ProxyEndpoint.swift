import Foundation

/// A proxy one transfer goes through: what curl is told (CURLOPT_PROXY) and
/// where it is, so a 407 can name the proxy (not the origin) in its
/// protection space.
package struct ProxyEndpoint: Sendable, Equatable {
    /// The proxy protocols libcurl speaks.
    package enum Kind: String, Sendable, CaseIterable {
        case http, https, socks4, socks4a, socks5, socks5h

        /// HTTP and HTTPS proxies answer in HTTP (CONNECT heads, 407); SOCKS ones do not.
        package var speaksHTTP: Bool { self == .http || self == .https }
        /// curl's default port for the kind when none is named.
        var defaultPort: Int { self == .https ? 443 : 1080 }
    }

    package let kind: Kind
    /// The host as written, without brackets for IPv6.
    package let host: String
    package let port: Int
    /// The value for CURLOPT_PROXY: `scheme://[userinfo@]host:port`.
    package let curlValue: String
    /// The credentials in the proxy URL (`user:password`, percent-encoded as
    /// written), which curl sends the proxy; nil without any.
    package let userInfo: String?

    package init(kind: Kind, host: String, port: Int, userInfo: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.userInfo = userInfo
        let bracketed = host.contains(":") ? "[\(host)]" : host
        curlValue = "\(kind.rawValue)://\(userInfo.map { $0 + "@" } ?? "")\(bracketed):\(port)"
    }

    /// Parses a proxy URL as curl reads one from the environment: a missing
    /// scheme means http, a missing port the kind's default (1080; 443 for
    /// https). Credentials in it (`http://user:pass@proxy:3128`) are kept for
    /// curl. nil for a value that names no usable proxy.
    package init?(parsing value: String) {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        // curl reads a bare `socks://` as SOCKS4.
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased(),
              let kind = scheme == "socks" ? .socks4 : Kind(rawValue: scheme), var host = components.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? kind.defaultPort
        guard (1...65535).contains(port) else { return nil }
        var userInfo: String?
        if let user = components.percentEncodedUser {
            userInfo = user + (components.percentEncodedPassword.map { ":" + $0 } ?? "")
        }
        self.init(kind: kind, host: host, port: port, userInfo: userInfo)
    }

    /// Whether a request to `scheme` goes through this proxy in a CONNECT
    /// tunnel (curl tunnels https through HTTP proxies), so the first heads
    /// curl reports are the proxy's answer to CONNECT.
    package func tunnels(scheme: String) -> Bool {
        kind.speaksHTTP && scheme.lowercased() == "https"
    }
}

/// Proxies chosen per request scheme (a `connectionProxyDictionary`, parsed).
/// An empty configuration sends everything direct.
package struct ProxyConfiguration: Sendable, Equatable {
    /// For http URLs.
    package var http: ProxyEndpoint?
    /// For https URLs (an HTTP proxy, through CONNECT).
    package var https: ProxyEndpoint?
    /// For any URL the scheme's own proxy does not cover.
    package var socks: ProxyEndpoint?

    package init(http: ProxyEndpoint? = nil, https: ProxyEndpoint? = nil, socks: ProxyEndpoint? = nil) {
        self.http = http
        self.https = https
        self.socks = socks
    }

    /// The proxy for `scheme` ("http" or "https"), nil for direct.
    package func endpoint(forScheme scheme: String) -> ProxyEndpoint? {
        switch scheme.lowercased() {
        case "http": return http ?? socks
        case "https": return https ?? socks
        default: return nil
        }
    }
}
