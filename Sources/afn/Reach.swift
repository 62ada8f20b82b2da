import AFNetworking
import ArgumentParser
import Foundation

/// `afn reach [HOST]`: whether the network, a host name or an address is
/// reachable, from the kernel's routing decision (nothing is sent).
///
/// Linux cannot tell Wi-Fi from Ethernet: `.reachableViaWiFi` only means
/// "reachable through an interface that is not wireless WAN", so it prints
/// plain `Reachable`; only a WWAN route says so (`Reachable via WWAN`).
/// Exit status 0 when reachable, 1 when not (or still unknown after 10 s).
struct Reach: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print whether the network, a host or an IP address is reachable.",
        discussion: "Prints 'Reachable', 'Reachable via WWAN' or 'Not Reachable' (exit status 0, 0, 1). "
            + "Without HOST: the network in general (a default route)."
    )

    @Argument(help: "A host name or an IPv4/IPv6 address.") var host: String?
    @Option(help: ArgumentHelp("Same as HOST, for a host name.", visibility: .hidden)) var domain: String?
    @Option(help: ArgumentHelp("Same as HOST, for an IP address.", visibility: .hidden)) var address: String?

    func validate() throws {
        guard [host, domain, address].compactMap({ $0 }).count <= 1 else {
            throw ValidationError("give one host (HOST, --domain or --address)")
        }
        if let address, SocketAddress(address) == nil { throw ValidationError("not an IP address: \(address)") }
        if let name = host ?? domain, name.isEmpty { throw ValidationError("empty host name") }
    }

    func run() throws {
        let manager: NetworkReachabilityManager
        if let text = address ?? host, let socketAddress = SocketAddress(text) {
            manager = socketAddress.reachabilityManager()
        } else if let name = host ?? domain {
            manager = .manager(forDomain: name)
        } else {
            manager = .shared()
        }
        let done = DispatchSemaphore(value: 0)
        manager.setReachabilityStatusChange { _ in done.signal() }
        manager.startMonitoring()
        // The first status arrives on the main queue: serve it while waiting.
        let deadline = Date().addingTimeInterval(10)
        while done.wait(timeout: .now()) == .timedOut && Date() < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
        manager.stopMonitoring()
        switch manager.networkReachabilityStatus {
        case .reachableViaWiFi:
            print("Reachable")
        case .reachableViaWWAN:
            print("Reachable via WWAN")
        case .notReachable:
            print("Not Reachable")
            throw ExitCode(1)
        case .unknown:
            print("Unknown")
            throw ExitCode(1)
        }
    }
}

/// An IPv4 or IPv6 address parsed from text, as the socket address
/// `NetworkReachabilityManager.manager(forAddress:)` reads.
private enum SocketAddress {
    case v4(sockaddr_in)
    case v6(sockaddr_in6)

    init?(_ text: String) {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, text, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            self = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, text, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            self = .v6(v6)
            return
        }
        return nil
    }

    func reachabilityManager() -> NetworkReachabilityManager {
        switch self {
        case .v4(var address):
            return withUnsafePointer(to: &address) { NetworkReachabilityManager.manager(forAddress: UnsafeRawPointer($0)) }
        case .v6(var address):
            return withUnsafePointer(to: &address) { NetworkReachabilityManager.manager(forAddress: UnsafeRawPointer($0)) }
        }
    }
}
