/// Whether a host, an address or the network in general can be reached
/// (AFNetworking 2.7's `AFNetworkReachabilityStatus`).
public enum NetworkReachabilityStatus: Int, Sendable {
    /// Not determined yet (before the first evaluation after `startMonitoring()`).
    case unknown = -1
    /// No route leads there.
    case notReachable = 0
    /// Reachable through a wireless-WAN interface (wwan*, ppp*, rmnet*, wwp*, …).
    case reachableViaWWAN = 1
    /// Reachable through any other interface (Ethernet, Wi-Fi, loopback).
    case reachableViaWiFi = 2
}

extension NetworkReachabilityStatus {
    /// "Unknown", "Not Reachable", "Reachable via WWAN" or "Reachable via WiFi",
    /// as 2.7 words them (`AFStringFromNetworkReachabilityStatus`). On Linux
    /// "via WiFi" means "not through a wireless-WAN interface" (see the cases).
    public var localizedString: String {
        switch self {
        case .unknown: return "Unknown"
        case .notReachable: return "Not Reachable"
        case .reachableViaWWAN: return "Reachable via WWAN"
        case .reachableViaWiFi: return "Reachable via WiFi"
        }
    }
}
