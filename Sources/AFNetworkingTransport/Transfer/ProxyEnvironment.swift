import CAFSystem
import Foundation

/// curl's proxy environment variables, applied by the library so it knows
/// which proxy a request uses (for 407 protection spaces and for telling the
/// proxy's CONNECT answer from the origin's):
/// - `<scheme>_proxy`, then `<SCHEME>_PROXY` except for http (`HTTP_PROXY`
///   is ignored, as curl does: CGI sets it from a request header, "httpoxy"),
/// - then `all_proxy`, `ALL_PROXY`,
/// - none of them for a host that `no_proxy` / `NO_PROXY` names: `*` for
///   every host, a name for itself and its subdomains (a leading dot is
///   ignored), an IP address or an IPv4/IPv6 CIDR range for addresses in it.
package struct ProxyEnvironment: Sendable {
    private let variables: [String: String]

    /// The names looked at, in no particular order.
    private static let names = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY"]

    /// The process's proxy variables now, read for each request as curl does.
    /// One pass over `environ` instead of a `getenv` per name (each of which
    /// walks the whole environment); the first entry of a name wins, as with
    /// `getenv`. With none set, as on most servers, nothing is allocated.
    package static var process: ProxyEnvironment {
        var variables: [String: String] = [:]
        guard var entry = cafsys_environment() else { return ProxyEnvironment(read: variables) }
        while let pointer = entry.pointee {
            // Every name looked at ends in "proxy" or "PROXY" and starts with one of these.
            switch UInt8(bitPattern: pointer.pointee) {
            case UInt8(ascii: "h"), UInt8(ascii: "H"), UInt8(ascii: "a"), UInt8(ascii: "A"), UInt8(ascii: "n"), UInt8(ascii: "N"):
                if let equals = strchr(pointer, 0x3D), pointer.distance(to: equals) >= 8, strncasecmp(equals - 5, "proxy", 5) == 0 {
                    let nameLength = pointer.distance(to: equals)
                    if let name = names.first(where: { $0.utf8.count == nameLength && strncmp($0, pointer, nameLength) == 0 }),
                       variables[name] == nil {
                        variables[name] = String(cString: equals + 1)
                    }
                }
            default:
                break
            }
            entry += 1
        }
        return ProxyEnvironment(read: variables)
    }

    package init(_ variables: [String: String]) {
        self.variables = variables.filter { ProxyEnvironment.names.contains($0.key) }
    }

    private init(read variables: [String: String]) {
        self.variables = variables
    }

    /// Whether any proxy variable is set at all.
    package var isEmpty: Bool { variables.values.allSatisfy { $0.isEmpty } }

    /// The proxy for `url`, nil for direct; `.failure` when the variable
    /// that applies names no usable proxy (an unknown scheme, no host).
    package func endpoint(for url: URL) -> Result<ProxyEndpoint?, NSError> {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return .success(nil) }
        var host = url.host ?? ""
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if let list = value("no_proxy") ?? value("NO_PROXY"), ProxyEnvironment.noProxy(list, matches: host) { return .success(nil) }
        var candidates = ["\(scheme)_proxy"]
        if scheme != "http" { candidates.append("\(scheme.uppercased())_PROXY") }
        candidates += ["all_proxy", "ALL_PROXY"]
        guard let (name, text) = candidates.lazy.compactMap({ name in self.value(name).map { (name, $0) } }).first else {
            return .success(nil)
        }
        guard let endpoint = ProxyEndpoint(parsing: text) else {
            // The value as written, but never its user and password: the message is logged and traced.
            return .failure(TransportErrors.make(NSURLErrorUnsupportedURL, url: url, underlying: nil,
                                                 description: "The environment variable \(name) names no usable proxy (\"\(ProxyEnvironment.withoutUserInfo(text))\"); a proxy URL is [http|https|socks4|socks4a|socks5|socks5h://][user:password@]host[:port]."))
        }
        return .success(endpoint)
    }

    private func value(_ name: String) -> String? {
        guard let value = variables[name], !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return value
    }

    /// `text` with everything between its scheme and its last `@` shown as
    /// `***`: a value that cannot be parsed may hold a password with `/`, `?`
    /// or `#` in it, so the last `@` anywhere is taken as the user
    /// information's end (hiding too much is the safe side).
    package static func withoutUserInfo(_ text: String) -> String {
        let authorityStart = text.range(of: "://").map(\.upperBound) ?? text.startIndex
        guard let at = text[authorityStart...].lastIndex(of: "@") else { return text }
        return String(text[..<authorityStart]) + "***" + String(text[at...])
    }

    /// curl's `no_proxy` matching for `host` (lower or upper case, no brackets):
    /// `*` alone means every host (as one entry among others it matches
    /// none, as in curl); a trailing dot on the host or an entry is ignored;
    /// an IPv4 host in a short or numeric form (`127.1`, `2130706433`) is
    /// read as curl's URL parser reads it, so address and range entries match it.
    static func noProxy(_ list: String, matches host: String) -> Bool {
        if list.trimmingCharacters(in: .whitespaces) == "*" { return true }
        var host = host.lowercased()
        let hostAddress = IPAddress(host) ?? IPAddress(legacyIPv4: host)
        if hostAddress == nil, host.hasSuffix(".") { host.removeLast() }
        for raw in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var entry = raw.lowercased()
            if entry.hasPrefix("[") , let close = entry.firstIndex(of: "]") {
                entry = String(entry[entry.index(after: entry.startIndex)..<close]) + entry[entry.index(after: close)...]
            }
            if let hostAddress {
                let parts = entry.split(separator: "/", maxSplits: 1)
                guard let network = IPAddress(String(parts[0])) else { continue }
                let bits = parts.count == 2 ? Int(parts[1]) : nil
                if parts.count == 2 && bits == nil { continue }
                if hostAddress.isIn(network, prefixLength: bits ?? network.bytes.count * 8) { return true }
                continue
            }
            if entry.hasSuffix(".") { entry.removeLast() }
            while entry.hasPrefix(".") { entry.removeFirst() }
            guard !entry.isEmpty else { continue }
            if host == entry || host.hasSuffix("." + entry) { return true }
        }
        return false
    }

    /// An IPv4 or IPv6 address as bytes, for CIDR checks.
    struct IPAddress {
        let bytes: [UInt8]

        init?(_ text: String) {
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, text, &v4) == 1 {
                bytes = withUnsafeBytes(of: &v4) { Array($0) }
            } else if inet_pton(AF_INET6, text, &v6) == 1 {
                bytes = withUnsafeBytes(of: &v6) { Array($0) }
            } else {
                return nil
            }
        }

        /// An IPv4 host in a form `inet_pton` refuses but URL parsers (curl's,
        /// browsers') read as an address: fewer than four parts, decimal,
        /// octal or hex numbers (`127.1`, `2130706433`, `0x7f.0.0.1`).
        init?(legacyIPv4 text: String) {
            guard let first = text.first, first.isNumber,
                  text.allSatisfy({ $0.isHexDigit || $0 == "." || $0 == "x" }) else { return nil }
            var v4 = in_addr()
            guard inet_aton(text, &v4) != 0 else { return nil }
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        }

        func isIn(_ network: IPAddress, prefixLength: Int) -> Bool {
            guard bytes.count == network.bytes.count, prefixLength >= 0, prefixLength <= bytes.count * 8 else { return false }
            var remaining = prefixLength
            for index in bytes.indices where remaining > 0 {
                let take = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - take))
                if bytes[index] & mask != network.bytes[index] & mask { return false }
                remaining -= take
            }
            return true
        }
    }
}
