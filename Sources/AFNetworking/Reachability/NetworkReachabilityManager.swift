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
open class NetworkReachabilityManager: NSObject, @unchecked Sendable {
    private let target: RouteProbe.Target
    private let queue = DispatchQueue(label: "com.alamofire.networking.reachability")
    private let lock = NSLock()
    private var status = NetworkReachabilityStatus.unknown
    private var statusBlock: ((NetworkReachabilityStatus) -> Void)?
    private var monitor: RouteChangeMonitor?

    init(target: RouteProbe.Target) {
        self.target = target
        super.init()
    }

    /// The manager for the network in general (2.7: the zero address).
    public static func shared() -> NetworkReachabilityManager { sharedManager }
    private static let sharedManager = NetworkReachabilityManager(target: .anyNetwork)

    /// A manager for a host name (resolved on each evaluation).
    public static func manager(forDomain domain: String) -> NetworkReachabilityManager {
        NetworkReachabilityManager(target: .domain(domain))
    }

    /// A manager for a socket address (`sockaddr_in` or `sockaddr_in6`).
    public static func manager(forAddress address: UnsafeRawPointer) -> NetworkReachabilityManager {
        let family = address.load(as: sockaddr.self).sa_family
        let length = family == sa_family_t(AF_INET6) ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size
        var copy = Data(bytes: address, count: length)
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

    /// The last status determined; `.unknown` until monitoring has evaluated once.
    public var networkReachabilityStatus: NetworkReachabilityStatus {
        lock.lock()
        defer { lock.unlock() }
        return status
    }

    /// Whether the target is reachable by any route.
    public var isReachable: Bool { isReachableViaWWAN || isReachableViaWiFi }
    /// Whether the target is reachable over a wireless-WAN interface.
    public var isReachableViaWWAN: Bool { networkReachabilityStatus == .reachableViaWWAN }
    /// Whether the target is reachable over any other interface.
    public var isReachableViaWiFi: Bool { networkReachabilityStatus == .reachableViaWiFi }

    /// Evaluates the status now and again on every link, address or route change.
    public func startMonitoring() {
        stopMonitoring()
        let monitor = RouteChangeMonitor(queue: queue) { [weak self] in self?.evaluate() }
        lock.lock()
        self.monitor = monitor
        lock.unlock()
        queue.async { [weak self] in self?.evaluate() }
    }

    /// Stops watching; the last status stays.
    public func stopMonitoring() {
        lock.lock()
        let monitor = self.monitor
        self.monitor = nil
        lock.unlock()
        monitor?.stop()
    }

    /// Called on the main queue with each new status while monitoring.
    public func setReachabilityStatusChange(_ block: ((NetworkReachabilityStatus) -> Void)?) {
        lock.lock()
        statusBlock = block
        lock.unlock()
    }

    /// "Unknown", "Not Reachable", "Reachable via WWAN" or "Reachable via WiFi", as 2.7 words them.
    public func localizedNetworkReachabilityStatusString() -> String {
        switch networkReachabilityStatus {
        case .unknown: return "Unknown"
        case .notReachable: return "Not Reachable"
        case .reachableViaWWAN: return "Reachable via WWAN"
        case .reachableViaWiFi: return "Reachable via WiFi"
        }
    }

    /// On `queue`: works out the status, and reports it when it changed.
    private func evaluate() {
        let current = RouteProbe.status(of: target)
        lock.lock()
        let changed = current != status
        status = current
        let block = statusBlock
        lock.unlock()
        guard changed else { return }
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
