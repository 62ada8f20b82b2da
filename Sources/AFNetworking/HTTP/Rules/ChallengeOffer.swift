@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a 401/407 offers: the strongest scheme this library speaks, and its realm.
struct ChallengeOffer {
    let scheme: TransferCredentials.Scheme
    let realm: String?

    /// The strongest challenge offered in any of the response's fields
    /// (each may list several, RFC 9110 §11.6.1): Digest, else Basic.
    static func parse(_ response: ReceivedResponse, forProxy: Bool) -> ChallengeOffer? {
        var basic: ChallengeOffer?
        for challenge in ChallengeList.challenges(in: response, field: forProxy ? "proxy-authenticate" : "www-authenticate") {
            if challenge.scheme == "digest" {
                return ChallengeOffer(scheme: .digest, realm: challenge.parameters["realm"])
            }
            if challenge.scheme == "basic", basic == nil {
                basic = ChallengeOffer(scheme: .basic, realm: challenge.parameters["realm"])
            }
        }
        return basic
    }

    /// The space the challenge is for: the origin's, or for a 407 the proxy's
    /// (`proxy`: the one whose own answer the response may be), never the origin's.
    func protectionSpace(for url: URL?, forProxy: Bool, proxy: ProxyEndpoint? = nil) -> URLProtectionSpace? {
        guard let url, let host = url.host else { return nil }
        let scheme = url.scheme?.lowercased() ?? "http"
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let method = self.scheme == .digest ? NSURLAuthenticationMethodHTTPDigest : NSURLAuthenticationMethodHTTPBasic
        if forProxy {
            // A 407 no proxy can have sent — direct, or through a CONNECT
            // tunnel or SOCKS, where it is the origin's own — names no proxy:
            // it is delivered as the response.
            guard let proxy else { return nil }
            // An HTTPS proxy, or an https request tunnelled through an HTTP one, is Foundation's HTTPS proxy type.
            let type = proxy.kind == .https || scheme == "https" ? NSURLProtectionSpaceHTTPSProxy : NSURLProtectionSpaceHTTPProxy
            return URLProtectionSpace(proxyHost: proxy.host, port: proxy.port, type: type, realm: realm, authenticationMethod: method)
        }
        return URLProtectionSpace(host: host, port: port, protocol: scheme, realm: realm, authenticationMethod: method)
    }
}

/// Looks credentials up in a `URLCredentialStorage` by the protection space's
/// fields. swift-corelibs-foundation's `URLProtectionSpace` equality compares
/// identity, so `defaultCredential(for:)` only finds the very instance a
/// credential was stored with.
enum StoredCredentials {
    static func defaultCredential(for space: URLProtectionSpace, in storage: URLCredentialStorage = .shared) -> URLCredential? {
        for (stored, credentials) in storage.allCredentials where matches(stored, space) {
            return storage.defaultCredential(for: stored) ?? credentials.values.first
        }
        return nil
    }

    private static func matches(_ lhs: URLProtectionSpace, _ rhs: URLProtectionSpace) -> Bool {
        lhs.host.lowercased() == rhs.host.lowercased() && lhs.port == rhs.port
            && lhs.protocol?.lowercased() == rhs.protocol?.lowercased() && lhs.realm == rhs.realm
            && lhs.authenticationMethod == rhs.authenticationMethod && lhs.isProxy() == rhs.isProxy()
    }
}
