import Foundation
import XCTest

/// Runs `swift6-caller` (Tests/Swift6Caller, built in Swift 6 language mode
/// with the package): top-level code and an actor whose closures run on a
/// custom completion queue. It must exit 0, not trap in the runtime's
/// isolation check.
final class Swift6CallerTests: OperationTestCase {
    func testASwift6ProgramWithTopLevelAndActorClosuresRunsWithoutCrashing() throws {
        server.respond("/hello", headers: [("Content-Type", "text/plain")], body: Data("hello".utf8))
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle.deletingLastPathComponent().appendingPathComponent("swift6-caller"),
                          bundle.appendingPathComponent("swift6-caller")]
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            return XCTFail("swift6-caller is not built next to the tests (\(candidates[0].path)); run `swift build --build-tests`")
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = [url("/hello").absoluteString]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try Fixtures.launch(process)
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationReason, .exit, text)
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("top-level: 200 on callbacks"), text)
        XCTAssertTrue(text.contains("actor: 200"), text)
    }
}
