import Foundation
import XCTest

/// Runs `main-actor-waiter` (Tests/MainActorWaiter): `waitUntilFinished()`
/// from main-actor code running on the main queue — a `Task { @MainActor }`
/// with `dispatchMain()`, and top-level code after an `await`. The success
/// block is queued on the main queue behind the waiting job, so the wait
/// used to hang for good; the program must finish well within its limit.
final class MainActorWaiterTests: OperationTestCase {
    private func runWaiter(_ mode: String, limit: TimeInterval = 30) throws -> (status: Int32?, output: String) {
        let bundle = Bundle(for: Self.self).bundleURL
        let candidates = [bundle.deletingLastPathComponent().appendingPathComponent("main-actor-waiter"),
                          bundle.appendingPathComponent("main-actor-waiter")]
        guard let binary = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            XCTFail("main-actor-waiter is not built next to the tests (\(candidates[0].path)); run `swift build --build-tests`")
            return (nil, "")
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = [mode, url("/hello").absoluteString]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try Fixtures.launch(process)
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let hung = process.isRunning
        if hung { process.terminate() }
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return (hung ? nil : process.terminationStatus, text)
    }

    private func serveHello() {
        server.respond("/hello", headers: [("Content-Type", "text/plain")], body: Data("hello".utf8))
    }

    func testWaitUntilFinishedInAMainActorTaskUnderDispatchMainReturns() throws {
        serveHello()
        let (status, text) = try runWaiter("dispatch-main")
        XCTAssertNotNil(status, "waitUntilFinished() hung on the main actor under dispatchMain(): \(text)")
        XCTAssertEqual(status, 0, text)
        XCTAssertTrue(text.contains("dispatch-main: 200 delivered=true"), text)
    }

    func testWaitUntilFinishedAfterATopLevelAwaitReturns() throws {
        serveHello()
        let (status, text) = try runWaiter("top-level-await")
        XCTAssertNotNil(status, "waitUntilFinished() hung after a top-level await: \(text)")
        XCTAssertEqual(status, 0, text)
        XCTAssertTrue(text.contains("top-level-await: 200 delivered=true"), text)
    }
}
