@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// An `await` ends promptly on cancel, whatever the request's queues are
/// doing: an operation cancelled before its `result()` was awaited, a verb
/// whose operation queue is suspended, a session task whose completion would
/// be delivered on a main queue that is busy.
final class AsyncCancellationTests: OperationTestCase {
    /// A route that answers only after `delay` seconds.
    private func slowRoute(_ path: String, delay: TimeInterval = 20) {
        server.route(path) { _ in
            [.wait(delay), .head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
             .body(Data("{}".utf8)), .end]
        }
    }

    func testAwaitingAnOperationCancelledBeforeItStartedThrowsAtOnce() async throws {
        server.respond("/never", body: Data("x".utf8))
        let operation = HTTPRequestOperation(request: request("/never"))
        operation.completionQueue = ModernSupport.completionQueue("cancelled-first")
        operation.cancel()
        let error = try await modernBounded(10) { () -> NSError? in
            do {
                _ = try await operation.result()
                return nil
            } catch {
                return error as NSError
            }
        }
        XCTAssertEqual(error?.domain, NSURLErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCancelled)
        XCTAssertTrue(operation.isFinished)
        XCTAssertTrue(server.requests.isEmpty, "a cancelled operation sends nothing")
    }

    func testCancellingAVerbWhoseOperationQueueIsSuspendedEndsPromptly() async throws {
        server.respond("/held", body: Data("{}".utf8))
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = ModernSupport.completionQueue("suspended-queue")
        // 2.x's reachability pattern: the queue is held while offline.
        manager.operationQueue.isSuspended = true
        let waiter = Task { () -> String in
            do {
                _ = try await manager.get("held")
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        let queued = await modernEventually(10) { manager.operationQueue.operationCount == 1 }
        XCTAssertTrue(queued)
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        // The await did not wait for the queue: it ended while the queue was still held and its
        // operation had sent nothing.
        XCTAssertTrue(manager.operationQueue.isSuspended, "nobody needed the queue to run")
        XCTAssertTrue(server.requests.isEmpty, "the held operation never ran")
        manager.operationQueue.isSuspended = false
        let drained = await modernEventually(10) { manager.operationQueue.operationCount == 0 }
        XCTAssertTrue(drained)
        XCTAssertTrue(server.requests.isEmpty, "the cancelled operation sent nothing once the queue ran")
    }

    /// Not async: the test holds the main thread itself, without serving the
    /// main queue, where the manager would deliver the completion.
    func testACancelledDataForRequestReturnsWhileTheMainQueueIsBusy() {
        slowRoute("/slow")
        let manager = URLSessionManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        XCTAssertNil(manager.completionQueue, "completions go to the main queue")
        let request = request("/slow", timeout: 30)
        let outcome = Locked<String?>(nil)
        let ended = DispatchSemaphore(value: 0)
        let waiter = Task.detached {
            do {
                _ = try await manager.data(for: request)
                outcome.value = "returned"
            } catch is CancellationError {
                outcome.value = "CancellationError"
            } catch {
                outcome.value = "other: \(error)"
            }
            ended.signal()
        }
        XCTAssertTrue(spin(until: { !self.server.requests.isEmpty || self.server.connectionCount > 0 }), "the request was sent")
        waiter.cancel()
        // The main thread is busy from here on: no run loop, no main queue.
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success, "the await ended without the main queue")
        XCTAssertEqual(outcome.value, "CancellationError")
    }
}
