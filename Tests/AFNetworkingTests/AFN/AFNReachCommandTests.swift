import Foundation
import XCTest

/// `afn reach`, the real binary: an honest answer ("Reachable", never "via
/// WiFi" for a route that is merely not WWAN) and its exit status.
final class AFNReachCommandTests: XCTestCase {
    func testLoopbackIsReachable() throws {
        let run = try AFNTool.run(["reach", "127.0.0.1"], timeout: 20)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.output.trimmingCharacters(in: .whitespacesAndNewlines), "Reachable")
        XCTAssertFalse(run.output.contains("WiFi"))
    }

    func testTheFormerAddressOptionStillWorks() throws {
        let run = try AFNTool.run(["reach", "--address", "127.0.0.1"], timeout: 20)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.output.trimmingCharacters(in: .whitespacesAndNewlines), "Reachable")
    }

    func testTwoHostsAreAUsageError() throws {
        let run = try AFNTool.run(["reach", "127.0.0.1", "--domain", "localhost"])
        XCTAssertEqual(run.status, 64)
        XCTAssertTrue(run.stderr.contains("Usage: afn reach"), run.stderr)
    }
}
