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
        server = try ScriptedServer()
    }

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

    /// Starts `operation` on a queue and waits (bounded) for its success or failure block.
    @discardableResult
    func run(_ operation: HTTPRequestOperation, timeout: TimeInterval = 15, file: StaticString = #filePath, line: UInt = #line) -> Outcome {
        var outcome = Outcome()
        let done = expectation(description: "completion")
        operation.setCompletionBlockWithSuccess({ _, object in
            outcome.object = object
            outcome.calls += 1
            done.fulfill()
        }, failure: { _, error in
            outcome.error = error as NSError
            outcome.calls += 1
            done.fulfill()
        })
        let queue = OperationQueue()
        queue.addOperation(operation)
        wait(for: [done], timeout: timeout)
        return outcome
    }

    func get(_ path: String, timeout: TimeInterval = 10) -> (HTTPRequestOperation, Outcome) {
        let operation = HTTPRequestOperation(request: request(path, timeout: timeout))
        let outcome = run(operation)
        return (operation, outcome)
    }

    /// Spins the main run loop (bounded) until `condition` holds.
    func spin(until condition: () -> Bool, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() && Date() < deadline {
            RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
        return condition()
    }
}
