import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

// AFNetworking 2.x spellings of reachability and the activity indicator,
// deprecated with `renamed:` and forwarding to the current API.

// MARK: - Reachability

extension NetworkReachabilityManager {
    /// 2.7's `+sharedManager`.
    @available(*, deprecated, renamed: "shared()")
    public static func sharedManager() -> NetworkReachabilityManager {
        shared()
    }

    /// 2.7's `+managerForDomain:`.
    @available(*, deprecated, renamed: "manager(forDomain:)")
    public static func managerForDomain(_ domain: String) -> NetworkReachabilityManager {
        manager(forDomain: domain)
    }

    /// 2.7's `+managerForAddress:` (a `sockaddr_in` or `sockaddr_in6`).
    @available(*, deprecated, renamed: "manager(forAddress:)")
    public static func managerForAddress(_ address: UnsafeRawPointer) -> NetworkReachabilityManager {
        manager(forAddress: address)
    }

    /// 2.7's `-setReachabilityStatusChangeBlock:`.
    @available(*, deprecated, renamed: "setReachabilityStatusChange(_:)")
    @preconcurrency
    public func setReachabilityStatusChangeBlock(_ block: (@Sendable (NetworkReachabilityStatus) -> Void)?) {
        setReachabilityStatusChange(block)
    }

    /// 2.7's `reachable` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isReachable")
    public var reachable: Bool { isReachable }

    /// 2.7's `reachableViaWWAN` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isReachableViaWWAN")
    public var reachableViaWWAN: Bool { isReachableViaWWAN }

    /// 2.7's `reachableViaWiFi` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isReachableViaWiFi")
    public var reachableViaWiFi: Bool { isReachableViaWiFi }
}

extension NetworkReachabilityStatus {
    /// Swift 2's spelling of `AFNetworkReachabilityStatusUnknown`.
    @available(*, deprecated, renamed: "unknown")
    public static var Unknown: NetworkReachabilityStatus { .unknown }

    /// Swift 2's spelling of `AFNetworkReachabilityStatusNotReachable`.
    @available(*, deprecated, renamed: "notReachable")
    public static var NotReachable: NetworkReachabilityStatus { .notReachable }

    /// Swift 2's spelling of `AFNetworkReachabilityStatusReachableViaWWAN`.
    @available(*, deprecated, renamed: "reachableViaWWAN")
    public static var ReachableViaWWAN: NetworkReachabilityStatus { .reachableViaWWAN }

    /// Swift 2's spelling of `AFNetworkReachabilityStatusReachableViaWiFi`.
    @available(*, deprecated, renamed: "reachableViaWiFi")
    public static var ReachableViaWiFi: NetworkReachabilityStatus { .reachableViaWiFi }
}

/// 2.7's `AFStringFromNetworkReachabilityStatus`.
@available(*, deprecated, renamed: "getter:NetworkReachabilityStatus.localizedString(self:)")
public func AFStringFromNetworkReachabilityStatus(_ status: NetworkReachabilityStatus) -> String {
    status.localizedString
}

// MARK: - NetworkActivityIndicatorManager

extension NetworkActivityIndicatorManager {
    /// 2.7's `+sharedManager`.
    @available(*, deprecated, renamed: "shared()")
    public static func sharedManager() -> NetworkActivityIndicatorManager {
        shared()
    }

    /// 2.7's `enabled` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isEnabled")
    public var enabled: Bool {
        get { isEnabled }
        set { isEnabled = newValue }
    }
}
