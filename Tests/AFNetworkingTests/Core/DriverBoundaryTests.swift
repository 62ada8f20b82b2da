import Foundation
import XCTest

/// The request lifecycle's boundary, checked on the sources themselves: only
/// the driver feeds the transfer machine and reaches the engine, so nobody
/// can bypass its lock or its order of effects by accident.
final class DriverBoundaryTests: XCTestCase {
    private static let library = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/AFNetworking")

    func testOnlyTheDriverReadsTheSharedEngine() throws {
        let readers = try files(containing: "NetworkEngine.shared")
        XCTAssertEqual(readers, ["Core/RequestDriver.swift"], "the engine is injected; the default is read in one place")
    }

    func testOnlyTheDriverBuildsAndStartsTransfers() throws {
        // Every request — operations, session tasks, the cache's background
        // revalidation — goes through a driver: none builds a transfer or
        // reaches the engine of its own.
        XCTAssertEqual(try files(containing: "Transfer(options:"), ["Core/RequestDriver+Hops.swift"])
        XCTAssertEqual(try files(containing: "defaultEngine"), ["Core/RequestDriver.swift"])
    }

    func testOnlyTheDriverTouchesTheTransferMachine() throws {
        // `core.machine` / `$0.machine` are the driver's private state; the
        // machine's own files define it (`TransferStateMachine*.swift`).
        let touching = try files(matching: #"(\$0|core)\.machine\b"#)
            .filter { !$0.hasPrefix("ActivityIndicator/") }   // the activity indicator's own machine
        XCTAssertEqual(touching, ["Core/RequestDriver.swift"])
        let stateReaders = try files(matching: #"machine\.state\b"#)
        XCTAssertEqual(stateReaders, [], "the machine's state is read through named queries")
    }

    private func files(containing needle: String) throws -> [String] {
        try swiftFiles().filter { try String(contentsOf: Self.library.appendingPathComponent($0), encoding: .utf8).contains(needle) }
    }

    private func files(matching pattern: String) throws -> [String] {
        let expression = try NSRegularExpression(pattern: pattern)
        return try swiftFiles().filter {
            let text = try String(contentsOf: Self.library.appendingPathComponent($0), encoding: .utf8)
            return expression.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
        }
    }

    private func swiftFiles() throws -> [String] {
        let root = Self.library.path
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        while let path = enumerator.nextObject() as? String {
            if path.hasSuffix(".swift") { found.append(path) }
        }
        XCTAssertGreaterThan(found.count, 50, "the library's sources are found from the test's own path")
        return found.sorted()
    }
}
