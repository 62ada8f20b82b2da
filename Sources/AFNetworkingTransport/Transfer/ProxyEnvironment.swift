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
            return .failure(TransportErrors.make(NSURLErrorUnsupportedURL, url: url, underlying: nil,
                                                 description: "The environment variable \(name) names no usable proxy (\"\(text)\"); a proxy URL is [http|https|socks4|socks4a|socks5|socks5h://][user:password@]host[:port]."))
        }
        return .success(endpoint)
    }

    private func value(_ name: String) -> String? {
        guard let value = variables[name], !value.trimmingCharacters(in: .whitespaces).isEmpty else { return nil }
        return value
    }

    /// curl's `no_proxy` matching for `host` (lower or upper case, no brackets).
    static func noProxy(_ list: String, matches host: String) -> Bool {
        let host = host.lowercased()
        let hostAddress = IPAddress(host)
        for raw in list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            var entry = raw.lowercased()
            if entry == "*" { return true }
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
