@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

extension Notification.Name {
    /// Posted on the main queue when a monitored manager's status changes;
    /// `userInfo[AFNetworkingReachabilityNotificationStatusItem]` holds the new
    /// status's raw value.
    public static let AFNetworkingReachabilityDidChange = Notification.Name("com.alamofire.networking.reachability.change")
}

/// The `userInfo` key of `AFNetworkingReachabilityDidChange`: an `NSNumber` with the status's raw value.
public let AFNetworkingReachabilityNotificationStatusItem = "AFNetworkingReachabilityNotificationStatusItem"

/// Watches whether a domain, an address or the network is reachable
/// (AFNetworking 2.7's `AFNetworkReachabilityManager`).
///
/// Linux has no SystemConfiguration: the status comes from the kernel's
/// routing decision (nothing is sent), and changes are noticed through a
/// netlink socket. A route over a wireless-WAN interface (wwan*, ppp*,
/// rmnet*, …) reports `.reachableViaWWAN`, any other `.reachableViaWiFi`.
/// Safe to use from any thread.
// @unchecked: every mutable stored property lives in `state` (LockedState); the rest are `let`s of Sendable types.
open class NetworkReachabilityManager: NSObject, @unchecked Sendable {
    /// What changes while the manager runs, behind one lock.
    private struct State {
        var status = NetworkReachabilityStatus.unknown
        var statusBlock: (@Sendable (NetworkReachabilityStatus) -> Void)?
        var monitor: RouteChangeMonitor?
    }

    private let target: RouteProbe.Target
    private let queue = DispatchQueue(label: "com.alamofire.networking.reachability")
    private let state = LockedState(State())

    init(target: RouteProbe.Target) {
        self.target = target
        super.init()
    }

    /// A manager released while monitoring stops (2.7's `dealloc` did): its
    /// netlink socket would otherwise stay open for the life of the process.
    deinit {
        state[\.monitor]?.stop()
    }

    /// The manager for the network in general (2.7: the zero address).
    public static func shared() -> NetworkReachabilityManager { sharedInstance }
    private static let sharedInstance = NetworkReachabilityManager(target: .anyNetwork)

    /// A manager for a host name (resolved on each evaluation).
    public static func manager(forDomain domain: String) -> NetworkReachabilityManager {
        NetworkReachabilityManager(target: .domain(domain))
    }

    /// A manager for a socket address (`sockaddr_in` or `sockaddr_in6`). The
    /// zero address (0.0.0.0 or ::) watches the network in general, as
    /// `shared()` does (2.7 made its shared manager from it).
    public static func manager(forAddress address: UnsafeRawPointer) -> NetworkReachabilityManager {
        let family = address.load(as: sockaddr.self).sa_family
        let length = family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        var copy = Data(bytes: address, count: length)
        // The zero address (0.0.0.0 or ::) is how 2.7 named "the network in
        // general": a connect() to it would reach loopback and say reachable offline.
        if isZeroAddress(copy, family: family) { return NetworkReachabilityManager(target: .anyNetwork) }
        // connect() needs a port; nothing is sent, so any will do.
        copy.withUnsafeMutableBytes { buffer in
            if family == sa_family_t(AF_INET), let base = buffer.baseAddress?.assumingMemoryBound(to: sockaddr_in.self), base.pointee.sin_port == 0 {
                base.pointee.sin_port = in_port_t(UInt16(9).bigEndian)
            } else if family == sa_family_t(AF_INET6), let base = buffer.baseAddress?.assumingMemoryBound(to: sockaddr_in6.self), base.pointee.sin6_port == 0 {
                base.pointee.sin6_port = in_port_t(UInt16(9).bigEndian)
            }
        }
        return NetworkReachabilityManager(target: .address(copy))
    }

    private static func isZeroAddress(_ address: Data, family: sa_family_t) -> Bool {
        address.withUnsafeBytes { buffer in
            if family == sa_family_t(AF_INET) {
                return buffer.load(as: sockaddr_in.self).sin_addr.s_addr == 0
            }
            guard family == sa_family_t(AF_INET6) else { return false }
            let bytes = withUnsafeBytes(of: buffer.load(as: sockaddr_in6.self).sin6_addr) { Array($0) }
            return bytes.allSatisfy { $0 == 0 }
        }
    }

    /// The last status determined; `.unknown` until monitoring has evaluated once.
    public var networkReachabilityStatus: NetworkReachabilityStatus {
        state[\.status]
    }

    /// Whether the target is reachable by any route.
    public var isReachable: Bool { isReachableViaWWAN || isReachableViaWiFi }
    /// Whether the target is reachable over a wireless-WAN interface.
    public var isReachableViaWWAN: Bool { networkReachabilityStatus == .reachableViaWWAN }
    /// Whether the target is reachable over any other interface.
    public var isReachableViaWiFi: Bool { networkReachabilityStatus == .reachableViaWiFi }

    /// Evaluates the status now and again on every link, address or route change.
    public func startMonitoring() {
        let monitor = RouteChangeMonitor(queue: queue) { [weak self] in self?.evaluate() }
        // Swapped in one step, so two threads starting at once leave one monitor running.
        let previous = state.withLock { state -> RouteChangeMonitor? in
            defer { state.monitor = monitor }
            return state.monitor
        }
        previous?.stop()
        // Reported even when unchanged, as 2.7 reports the status it finds
        // on every start: a block set or observer added since hears it.
        queue.async { [weak self] in self?.evaluate(reportingAlways: true) }
    }

    /// Stops watching; the last status stays.
    public func stopMonitoring() {
        let monitor = state.withLock { state -> RouteChangeMonitor? in
            defer { state.monitor = nil }
            return state.monitor
        }
        monitor?.stop()
    }

    /// Called on the main queue with the status each start finds and each
    /// new status while monitoring.
    /// `@Sendable` because it is set on one thread and called on another.
    @preconcurrency
    public func setReachabilityStatusChange(_ block: (@Sendable (NetworkReachabilityStatus) -> Void)?) {
        state.set(\.statusBlock, to: block)
    }

    /// "Unknown", "Not Reachable", "Reachable via WWAN" or "Reachable via WiFi", as 2.7 words them.
    public func localizedNetworkReachabilityStatusString() -> String {
        networkReachabilityStatus.localizedString
    }

    /// On `queue`: works out the status, and reports it when it changed (or always).
    private func evaluate(reportingAlways: Bool = false) {
        let current = RouteProbe.status(of: target)
        let (changed, block) = state.withLock { state in
            defer { state.status = current }
            return (current != state.status, state.statusBlock)
        }
        // The block and the notification run on the main queue, without the lock.
        guard changed || reportingAlways else { return }
        DispatchQueue.main.async {
            block?(current)
            NotificationCenter.default.post(name: .AFNetworkingReachabilityDidChange, object: self,
                                            userInfo: [AFNetworkingReachabilityNotificationStatusItem: NSNumber(value: current.rawValue)])
        }
    }

    open override var description: String {
        "<\(type(of: self)): \(Unmanaged.passUnretained(self).toOpaque()), status: \(localizedNetworkReachabilityStatusString())>"
    }
}
