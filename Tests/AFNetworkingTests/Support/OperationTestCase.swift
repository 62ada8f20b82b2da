import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Base class: an in-process scripted server per test and helpers that run
/// operations to completion with bounded waits.
class OperationTestCase: XCTestCase {
    var server: ScriptedServer!

    override func setUpWithError() throws {
        _ = OperationTestCase.isolatedCache
        server = try ScriptedServer()
    }

    /// The test process caches in a directory of its own, created fresh, so
    /// entries left by an earlier run (or another process) never answer a test.
    static let isolatedCache: Void = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-tests-cache-\(getpid())-\(UUID().uuidString)")
        URLCache.shared = URLCache(memoryCapacity: 8 << 20, diskCapacity: 64 << 20, diskPath: directory.path)
    }()

    override func tearDown() {
        server?.shutdown()
        server = nil
    }

    func url(_ path: String) -> URL { server.baseURL.appendingPathComponent(path) }

    func request(_ path: String, method: String = "GET", timeout: TimeInterval = 10) -> URLRequest {
        var request = URLRequest(url: url(path))
        request.httpMethod = method
        request.timeoutInterval = timeout
        return request
    }

    /// Outcome of one HTTPRequestOperation run through its success/failure blocks.
    struct Outcome {
        var object: Any?
        var error: NSError?
        var calls = 0
    }

    /// Points `operation`'s success and failure blocks at `outcome`; `then`
    /// runs after either one has been recorded.
    func record(_ operation: HTTPRequestOperation, into outcome: Locked<Outcome>, then: (@Sendable () -> Void)? = nil) {
        operation.setCompletionBlockWithSuccess({ _, object in
            outcome.withLock { $0.object = object; $0.calls += 1 }
            then?()
        }, failure: { _, error in
            outcome.withLock { $0.error = error as NSError; $0.calls += 1 }
            then?()
        })
    }

    /// Starts `operation` on a queue and waits (bounded) for its success or failure block.
    @discardableResult
    func run(_ operation: HTTPRequestOperation, timeout: TimeInterval = 15, file: StaticString = #filePath, line: UInt = #line) -> Outcome {
        let outcome = Locked(Outcome())
        let done = expectation(description: "completion")
        record(operation, into: outcome) { done.fulfill() }
        let queue = OperationQueue()
        queue.addOperation(operation)
        wait(for: [done], timeout: timeout)
        return outcome.value
    }

    func get(_ path: String, timeout: TimeInterval = 10) -> (HTTPRequestOperation, Outcome) {
        let operation = HTTPRequestOperation(request: request(path, timeout: timeout))
        let outcome = run(operation)
        return (operation, outcome)
    }

    /// A destination whose `.partial` file holds `bytes` and whose sidecar
    /// names `request`'s URL, ETag "v1" and `expectedLength`, as an earlier
    /// run of a restart-proof download left them; all three are removed after
    /// the test.
    func leftByAnEarlierRun(_ request: URLRequest, _ name: String, holding bytes: Data,
                            expectedLength: Int) throws -> (destination: URL, partial: URL, sidecar: URL) {
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("afn-\(name)-\(UUID().uuidString).bin")
        let partial = URL(fileURLWithPath: destination.path + ".partial")
        let sidecar = URL(fileURLWithPath: destination.path + ".partial.json")
        addTeardownBlock {
            for url in [destination, partial, sidecar] { try? FileManager.default.removeItem(at: url) }
        }
        try bytes.write(to: partial)
        let record = ["url": request.url!.absoluteString, "etag": "\"v1\"", "expectedLength": expectedLength] as [String: Any]
        try JSONSerialization.data(withJSONObject: record).write(to: sidecar)
        return (destination, partial, sidecar)
    }

    /// Spins the main run loop (bounded) until `condition` holds.
    func spin(until condition: () -> Bool, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() && Date() < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
        return condition()
    }
}
