import AFNetworking
import ArgumentParser
import Foundation

/// `afn reach`: prints whether the network, a domain or an address is reachable.
struct Reach: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print the reachability of the network, a domain or an IP address.")

    @Option(help: "A host name to check.") var domain: String?
    @Option(help: "An IPv4 or IPv6 address to check.") var address: String?

    func run() throws {
        let manager: NetworkReachabilityManager
        if let domain {
            manager = .manager(forDomain: domain)
        } else if let address {
            manager = try Self.manager(forAddress: address)
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
        print(manager.localizedNetworkReachabilityStatusString())
    }

    private static func manager(forAddress text: String) throws -> NetworkReachabilityManager {
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, text, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            return withUnsafePointer(to: &v4) { NetworkReachabilityManager.manager(forAddress: UnsafeRawPointer($0)) }
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, text, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            return withUnsafePointer(to: &v6) { NetworkReachabilityManager.manager(forAddress: UnsafeRawPointer($0)) }
        }
        throw ValidationError("not an IP address: \(text)")
    }
}
