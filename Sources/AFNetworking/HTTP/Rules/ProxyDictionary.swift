@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `connectionProxyDictionary` as set, with its parsed form (parsed once,
/// when set, so a bad dictionary fails every request with the same error).
struct ProxySetting: @unchecked Sendable {
    // @unchecked: immutable; the dictionary is only handed back to the getter.
    let dictionary: [AnyHashable: Any]
    let parsed: Result<ProxyConfiguration, NSError>

    init(_ dictionary: [AnyHashable: Any]) {
        self.dictionary = dictionary
        parsed = ProxyDictionary.parse(dictionary)
    }
}

/// Foundation's `connectionProxyDictionary` keys (CFNetwork's
/// kCFNetworkProxies… names), read into a `ProxyConfiguration`:
/// "HTTPEnable"/"HTTPProxy"/"HTTPPort" for http URLs, "HTTPSEnable"/
/// "HTTPSProxy"/"HTTPSPort" for https URLs (an HTTP proxy that tunnels with
/// CONNECT), "SOCKSEnable"/"SOCKSProxy"/"SOCKSPort" (SOCKS5, host names
/// resolved by the proxy) for whatever the scheme's own entry does not cover.
/// An entry counts only when its Enable value is true (a Bool, a number or
/// "1"/"true"); a missing port is 80 for HTTP(S) entries and 1080 for SOCKS.
/// Other keys are ignored. An enabled entry without a host, or with a port
/// that is not a number in 1…65535, is an error (`NSURLErrorBadURL`).
enum ProxyDictionary {
    static func parse(_ dictionary: [AnyHashable: Any]) -> Result<ProxyConfiguration, NSError> {
        var strings: [String: Any] = [:]
        for (key, value) in dictionary {
            if let name = key.base as? String { strings[name] = value }
        }
        do {
            return .success(ProxyConfiguration(
                http: try entry(strings, prefix: "HTTP", kind: .http, defaultPort: 80),
                https: try entry(strings, prefix: "HTTPS", kind: .http, defaultPort: 80),
                socks: try entry(strings, prefix: "SOCKS", kind: .socks5h, defaultPort: 1080)))
        } catch let error as NSError {
            return .failure(error)
        }
    }

    private static func entry(_ values: [String: Any], prefix: String, kind: ProxyEndpoint.Kind,
                              defaultPort: Int) throws -> ProxyEndpoint? {
        guard flag(values[prefix + "Enable"]) else { return nil }
        guard let host = (values[prefix + "Proxy"] as? String)?.trimmingCharacters(in: .whitespaces), !host.isEmpty,
              !host.contains("/"), !host.contains("@") else {
            throw problem("\(prefix)Enable is set but \(prefix)Proxy names no proxy host")
        }
        var port = defaultPort
        if let value = values[prefix + "Port"] {
            guard let number = integer(value), (1...65535).contains(number) else {
                throw problem("\(prefix)Port is not a port number (1…65535): \(value)")
            }
            port = number
        }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return ProxyEndpoint(kind: kind, host: bare, port: port)
    }

    private static func flag(_ value: Any?) -> Bool {
        switch value {
        case let bool as Bool: return bool
        case let number as NSNumber: return number.boolValue
        case let int as Int: return int != 0
        case let text as String: return ["1", "true", "yes"].contains(text.lowercased())
        default: return false
        }
    }

    private static func integer(_ value: Any) -> Int? {
        switch value {
        case let int as Int: return int
        case let number as NSNumber:
            let double = number.doubleValue
            return double.rounded() == double && abs(double) < 1e9 ? Int(double) : nil
        case let text as String: return Int(text.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    private static func problem(_ what: String) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL,
                userInfo: [NSLocalizedDescriptionKey: "The connectionProxyDictionary is invalid: \(what); nothing was sent."])
    }
}
