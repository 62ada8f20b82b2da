@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

extension URLConnectionOperation {
    /// The proxies for this operation, with Foundation's
    /// `connectionProxyDictionary` keys ("HTTPEnable"/"HTTPProxy"/"HTTPPort",
    /// "HTTPSEnable"/"HTTPSProxy"/"HTTPSPort", "SOCKSEnable"/"SOCKSProxy"/
    /// "SOCKSPort"). nil (the default): the environment decides, with curl's
    /// rules (`http_proxy`, `https_proxy`/`HTTPS_PROXY`, `all_proxy`/
    /// `ALL_PROXY`, `no_proxy`/`NO_PROXY`). An empty dictionary: direct,
    /// whatever the environment says. Read when each hop starts; an invalid
    /// dictionary fails the operation with `NSURLErrorBadURL`. See
    /// <doc:ProxiesSocketsTrailers>.
    public var connectionProxyDictionary: [AnyHashable: Any]? {
        get { settings.withLock { $0.proxies?.dictionary } }
        set { settings.withLock { $0.proxies = newValue.map(ProxySetting.init) } }
    }
}
