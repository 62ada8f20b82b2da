import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where an operation's (or its manager's) `credential` may answer a
/// challenge: on the original request's origin — scheme, host and port —
/// only. 2.7 answered any host that challenged, including another origin
/// reached by a redirect and plain http after https; a challenge block can
/// still answer any challenge it chooses to.
enum CredentialScope {
    /// Whether a challenge for `space`, met by the request to `challengedURL`,
    /// may be answered with the credential of a request to `originalURL`: a
    /// server's challenge from that origin, or a proxy's on a request to it.
    static func covers(_ space: URLProtectionSpace, originalURL: URL?, challengedURL: URL?) -> Bool {
        if space.isProxy() {
            // A proxy is not an origin a redirect can lead to, but through a
            // proxy that forwards plain http nothing tells its 407 from one
            // the origin sent through it: after a redirect elsewhere, that
            // origin could have the credential sent to the proxy at will.
            return RedirectRules.sameOrigin(challengedURL, originalURL)
        }
        guard let originalURL, let scheme = originalURL.scheme?.lowercased(), let host = originalURL.host?.lowercased() else {
            return false
        }
        let port = originalURL.port ?? (scheme == "https" ? 443 : 80)
        let spaceScheme = space.protocol?.lowercased()
        return spaceScheme == scheme && space.host.lowercased() == host && space.port == port
    }
}
