import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where an operation's (or its manager's) `credential` may answer a
/// challenge: the original request's origin — scheme, host and port — only.
/// 2.7 answered any host that challenged, including another origin reached by
/// a redirect and plain http after https; a challenge block can still answer
/// any challenge it chooses to.
enum CredentialScope {
    /// Whether a challenge for `space` comes from the origin of `originalURL`.
    /// A proxy's challenge keeps 2.7's rule (the credential answers it): a
    /// proxy is not an origin a redirect can lead to.
    static func covers(_ space: URLProtectionSpace, originalURL: URL?) -> Bool {
        if space.isProxy() { return true }
        guard let originalURL, let scheme = originalURL.scheme?.lowercased(), let host = originalURL.host?.lowercased() else {
            return false
        }
        let port = originalURL.port ?? (scheme == "https" ? 443 : 80)
        let spaceScheme = space.protocol?.lowercased()
        return spaceScheme == scheme && space.host.lowercased() == host && space.port == port
    }
}
