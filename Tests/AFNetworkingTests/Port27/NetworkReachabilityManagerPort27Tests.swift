import AFNetworking
import Foundation
import XCTest

/// AFNetworking 2.7's AFNetworkReachabilityManagerTests for its two targets:
/// the zero address (how 2.7 made its shared manager: it reports what the
/// shared manager does, reachable only with a default route) and the domain
/// "localhost" (always reachable). (2.7's tests that
/// `-init` and `+new` raise have no runtime equivalent: the Swift class has no
/// public `init()`, so such a call does not compile.)
final class NetworkReachabilityManagerPort27Tests: XCTestCase {
    private var addressReachability: NetworkReachabilityManager!
    private var domainReachability: NetworkReachabilityManager!

    override func setUp() {
        super.setUp()
        domainReachability = NetworkReachabilityManager.manager(forDomain: "localhost")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        addressReachability = withUnsafePointer(to: &address) { NetworkReachabilityManager.manager(forAddress: UnsafeRawPointer($0)) }
    }

    override func tearDown() {
        addressReachability?.stopMonitoring()
        domainReachability?.stopMonitoring()
        addressReachability = nil
        domainReachability = nil
        super.tearDown()
    }

    // MARK: Initial state

    func testAddressReachabilityStartsInUnknownState() {
        XCTAssertEqual(addressReachability.networkReachabilityStatus, .unknown, "Reachability should start in an unknown state")
    }

    func testDomainReachabilityStartsInUnknownState() {
        XCTAssertEqual(domainReachability.networkReachabilityStatus, .unknown, "Reachability should start in an unknown state")
    }

    // MARK: Notification

    /// What the shared manager reports on this machine (reachable only with
    /// a default route): the zero address's manager must say the same.
    private func sharedStatus() -> NetworkReachabilityStatus {
        let shared = NetworkReachabilityManager.shared()
        let known = expectation(description: "the shared manager's status")
        known.assertForOverFulfill = false
        shared.setReachabilityStatusChange { status in if status != .unknown { known.fulfill() } }
        shared.startMonitoring()
        wait(for: [known], timeout: 10)
        shared.setReachabilityStatusChange(nil)
        return shared.networkReachabilityStatus
    }

    private func assertNotification(from manager: NetworkReachabilityManager, reporting expected: @escaping @Sendable (NetworkReachabilityStatus) -> Bool,
                                    file: StaticString = #filePath, line: UInt = #line) {
        let notified = expectation(forNotification: .AFNetworkingReachabilityDidChange, object: manager) { note in
            guard let raw = (note.userInfo?[AFNetworkingReachabilityNotificationStatusItem] as? NSNumber)?.intValue,
                  let status = NetworkReachabilityStatus(rawValue: raw) else { return false }
            return expected(status)
        }
        manager.startMonitoring()
        wait(for: [notified], timeout: 10)
        XCTAssertTrue(expected(manager.networkReachabilityStatus), "\(manager.networkReachabilityStatus)", file: file, line: line)
    }

    func testAddressReachabilityNotification() {
        let shared = sharedStatus()
        assertNotification(from: addressReachability, reporting: { $0 == shared })
    }

    func testDomainReachabilityNotification() {
        assertNotification(from: domainReachability, reporting: isReachable)
    }

    // MARK: Status block

    private func assertStatusBlockReports(_ manager: NetworkReachabilityManager, _ expected: @escaping @Sendable (NetworkReachabilityStatus) -> Bool) {
        let reported = expectation(description: "reachability status change block gets called")
        reported.assertForOverFulfill = false
        manager.setReachabilityStatusChange { status in
            if expected(status) { reported.fulfill() }
        }
        manager.startMonitoring()
        wait(for: [reported], timeout: 10)
        manager.setReachabilityStatusChange(nil)
    }

    func testAddressReachabilityBlock() {
        let shared = sharedStatus()
        assertStatusBlockReports(addressReachability) { $0 == shared }
    }

    func testDomainReachabilityBlock() {
        assertStatusBlockReports(domainReachability, isReachable)
    }

    // MARK: The zero address is the shared manager's target

    /// 2.7's setUp makes its address manager "in the same way that the shared
    /// manager is created": the zero address means the network in general. On
    /// a machine without a network (loopback up, no other route: a network
    /// namespace of its own) the shared manager says Not Reachable, and so must
    /// a manager for the zero address; a manager for 127.0.0.1 stays reachable.
    func testTheZeroAddressMeansTheNetworkAsForTheSharedManager() throws {
        guard getuid() == 0 else { throw XCTSkip("SKIPPING (precondition: root): creating a network namespace needs root") }
        let unshare = try Fixtures.requireBinary("unshare", ["/usr/bin/unshare", "/bin/unshare"])
        let ip = try Fixtures.requireBinary("ip", ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"])
        let afn = try AFNTool.executable()

        /// `afn reach arguments…` in a fresh network namespace whose loopback is up.
        func reachOffline(_ arguments: [String]) -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: unshare)
            process.arguments = ["--net", "/bin/sh", "-c", "\"$0\" link set lo up && exec \"$@\"", ip, afn.path, "reach"] + arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            let exited = DispatchSemaphore(value: 0)
            process.terminationHandler = { _ in exited.signal() }
            do { try process.run() } catch {
                XCTFail("unshare did not start: \(error)")
                return ""
            }
            guard exited.wait(timeout: .now() + 30) == .success else {
                process.terminate()
                XCTFail("afn reach \(arguments) did not end within 30 s")
                return ""
            }
            return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }

        XCTAssertEqual(reachOffline([]), "Not Reachable", "the shared manager, without a default route")
        XCTAssertEqual(reachOffline(["--address", "127.0.0.1"]), "Reachable", "loopback itself is up")
        XCTAssertEqual(reachOffline(["--address", "0.0.0.0"]), "Not Reachable",
                       "the zero address is the shared manager's target (2.7), not loopback")
    }
}

/// 2.7's test for "reachable": via WiFi or via WWAN.
private func isReachable(_ status: NetworkReachabilityStatus) -> Bool {
    status == .reachableViaWiFi || status == .reachableViaWWAN
}
