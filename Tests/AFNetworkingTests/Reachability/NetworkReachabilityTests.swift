@testable import AFNetworking
import Foundation
import XCTest

/// Reachability from the kernel's routes, and from a network namespace with no
/// routes at all (a namespace the test makes itself with `unshare`).
final class NetworkReachabilityTests: XCTestCase {
    private func loopbackManager() -> NetworkReachabilityManager {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { NetworkReachabilityManager.manager(forAddress: UnsafeRawPointer($0)) }
    }

    private func waitForStatus(_ manager: NetworkReachabilityManager, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while manager.networkReachabilityStatus == .unknown && Date() < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
        return manager.networkReachabilityStatus != .unknown
    }

    func testUnknownUntilMonitoringEvaluates() {
        let manager = loopbackManager()
        XCTAssertEqual(manager.networkReachabilityStatus, .unknown)
        XCTAssertFalse(manager.isReachable)
        XCTAssertEqual(manager.localizedNetworkReachabilityStatusString(), "Unknown")
    }

    func testLoopbackAddressIsReachableAndNotifies() {
        let manager = loopbackManager()
        let blockStatuses = Locked<[NetworkReachabilityStatus]>([])
        manager.setReachabilityStatusChange { status in
            XCTAssertTrue(Thread.isMainThread)
            blockStatuses.append(status)
        }
        let notified = expectation(forNotification: .AFNetworkingReachabilityDidChange, object: manager) { note in
            (note.userInfo?[AFNetworkingReachabilityNotificationStatusItem] as? NSNumber)?.intValue == NetworkReachabilityStatus.reachableViaWiFi.rawValue
        }
        manager.startMonitoring()
        wait(for: [notified], timeout: 10)
        manager.stopMonitoring()
        XCTAssertEqual(manager.networkReachabilityStatus, .reachableViaWiFi)
        XCTAssertTrue(manager.isReachable && manager.isReachableViaWiFi && !manager.isReachableViaWWAN)
        XCTAssertEqual(blockStatuses.value, [.reachableViaWiFi])
        XCTAssertEqual(manager.localizedNetworkReachabilityStatusString(), "Reachable via WiFi")
    }

    /// 2.7 reports the status on every start, changed or not: a manager
    /// started again (the shared one, in a second place) tells its block and
    /// observers what it finds.
    func testEveryStartReportsTheStatusEvenWhenUnchanged() {
        let manager = loopbackManager()
        let first = expectation(forNotification: .AFNetworkingReachabilityDidChange, object: manager)
        manager.startMonitoring()
        wait(for: [first], timeout: 10)
        manager.stopMonitoring()
        XCTAssertEqual(manager.networkReachabilityStatus, .reachableViaWiFi)

        let reported = expectation(description: "the block hears the status again")
        let again = expectation(forNotification: .AFNetworkingReachabilityDidChange, object: manager)
        manager.setReachabilityStatusChange { status in
            if status == .reachableViaWiFi { reported.fulfill() }
        }
        manager.startMonitoring()
        wait(for: [reported, again], timeout: 10)
        manager.stopMonitoring()
    }

    /// 2.7's `dealloc` stops monitoring: 100 managers released while monitoring
    /// leave no netlink socket behind (descriptors counted in /proc/self/fd).
    func testReleasingAMonitoringManagerClosesItsSocket() throws {
        func openDescriptors() throws -> Int {
            // readdir, not an enumerator: the entries are links, some to directories.
            let directory = try XCTUnwrap(opendir("/proc/self/fd"), "/proc/self/fd is readable")
            defer { closedir(directory) }
            var count = 0
            while readdir(directory) != nil, count < 100_000 { count += 1 }
            return count
        }
        final class Weak: @unchecked Sendable { weak var manager: NetworkReachabilityManager? }
        let before = try openDescriptors()
        var released: [Weak] = []
        for _ in 0..<100 {
            let manager = loopbackManager()
            manager.startMonitoring()
            let reference = Weak()
            reference.manager = manager
            released.append(reference)
        }
        // Pending status reports hold a manager until the main queue runs them, and
        // each socket is closed by its dispatch source's cancel handler: both are waited for.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, try (released.contains { $0.manager != nil } || openDescriptors() >= before + 10) {
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
        XCTAssertFalse(released.contains { $0.manager != nil }, "every manager was released")
        XCTAssertLessThan(try openDescriptors(), before + 10, "a released manager's netlink socket stayed open")
    }

    func testLocalhostDomainIsReachable() {
        let manager = NetworkReachabilityManager.manager(forDomain: "localhost")
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        XCTAssertTrue(waitForStatus(manager))
        XCTAssertTrue(manager.isReachable)
    }

    func testSharedManagerAgreesWithTheDefaultRoute() throws {
        // The oracle is iproute2's view of the routing table, not the probe the manager itself uses.
        let ip = try Fixtures.requireBinary("ip", ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"])
        func defaultRouteDevice(_ family: String) throws -> String? {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ip)
            process.arguments = [family, "route", "show", "default"]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let words = text.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let dev = words.firstIndex(of: "dev"), dev + 1 < words.count else { return nil }
            return words[dev + 1]
        }
        let device = try defaultRouteDevice("-4") ?? defaultRouteDevice("-6")
        let manager = NetworkReachabilityManager.shared()
        XCTAssertTrue(manager === NetworkReachabilityManager.shared())
        manager.startMonitoring()
        defer { manager.stopMonitoring() }
        XCTAssertTrue(waitForStatus(manager))
        XCTAssertEqual(manager.isReachable, device != nil, "ip route says: \(device ?? "no default route")")
        if let device { XCTAssertEqual(manager.networkReachabilityStatus, RouteProbe.classify(interface: device), device) }
    }

    func testInterfaceClassification() {
        for name in ["wwan0", "wwp0s20u4", "ppp0", "rmnet_data0"] { XCTAssertEqual(RouteProbe.classify(interface: name), .reachableViaWWAN, name) }
        for name in ["eth0", "wlan0", "enp3s0", "lo", "veth1"] { XCTAssertEqual(RouteProbe.classify(interface: name), .reachableViaWiFi, name) }
    }

    /// In a fresh network namespace only a down loopback exists: nothing is reachable.
    func testNothingIsReachableInANamespaceWithoutRoutes() throws {
        let unshare = try Fixtures.requireBinary("unshare", ["/usr/bin/unshare", "/bin/unshare"])
        let afn = try AFNTool.executable()
        // The one real precondition skip: named in the output.
        guard getuid() == 0 else { throw XCTSkip("SKIPPING (precondition: root): creating a network namespace needs root") }
        for arguments in [["reach"], ["reach", "--address", "10.11.12.13"], ["reach", "--address", "127.0.0.1"]] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: unshare)
            process.arguments = ["--net", afn.path] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            process.waitUntilExit()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            XCTAssertEqual(text.trimmingCharacters(in: .whitespacesAndNewlines), "Not Reachable", "\(arguments)")
        }
    }
}
