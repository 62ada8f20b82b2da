@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Where a session task's end runs (`SessionTaskOutput.End`): a task nobody
/// observes on the delegate queue ends with its completion work, one hand-off
/// fewer; one whose flow or end someone observes, a cancelled one and any
/// task of a suspended queue still end on the manager's `operationQueue`.
/// Seen by keeping that queue busy (not suspended) while tasks finish.
final class SessionEndPlacementTests: SessionTasksTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.route("/end") { _ in [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
                                     .body(Data("{}".utf8)), .end] }
    }

    /// Keeps `manager`'s delegate queue (one operation at a time) busy until the returned semaphore is signalled.
    private func occupy(_ manager: URLSessionManager) -> DispatchSemaphore {
        let release = DispatchSemaphore(value: 0)
        let running = DispatchSemaphore(value: 0)
        manager.operationQueue.addOperation {
            running.signal()
            _ = release.wait(timeout: .now() + 30)
        }
        XCTAssertEqual(running.wait(timeout: .now() + 10), .success, "the delegate queue runs the blocker")
        return release
    }

    private func get(_ manager: HTTPSessionManager, finished: XCTestExpectation, error: Locked<Error?>) {
        manager.get("end", parameters: nil, success: { _, _ in finished.fulfill() },
                    failure: { _, failure in error.value = failure; finished.fulfill() })
    }

    func testAnUnobservedTaskEndsWhileTheDelegateQueueIsBusy() throws {
        let manager = makeHTTPManager(baseURL: server.baseURL)
        manager.completionQueue = DispatchQueue(label: "end-placement")
        let release = occupy(manager)
        defer { release.signal() }
        let finished = expectation(description: "success while the delegate queue is busy")
        let error = Locked<Error?>(nil)
        get(manager, finished: finished, error: error)
        wait(for: [finished], timeout: 15)
        XCTAssertNil(error.value)
        XCTAssertEqual(manager.tasks.count, 0, "the session's task list was updated with the end")
    }

    func testAnObservedTaskWaitsForTheDelegateQueue() throws {
        let manager = makeHTTPManager(baseURL: server.baseURL)
        manager.completionQueue = DispatchQueue(label: "end-placement")
        let completed = Locked(0)
        manager.setTaskDidCompleteBlock { _, _, _ in completed.withLock { $0 += 1 } }
        let release = occupy(manager)
        let finished = expectation(description: "success after the delegate queue ran the did-complete block")
        let error = Locked<Error?>(nil)
        get(manager, finished: finished, error: error)
        XCTAssertEqual(XCTWaiter.wait(for: [XCTestExpectation(description: "not before the queue is free")], timeout: 1), .timedOut)
        XCTAssertEqual(completed.value, 0, "the did-complete block waits for its queue")
        release.signal()
        wait(for: [finished], timeout: 15)
        XCTAssertNil(error.value)
        XCTAssertEqual(completed.value, 1, "the block ran before the completion handler")
    }

    func testASuspendedDelegateQueueStillHoldsEveryEnd() throws {
        let manager = makeHTTPManager(baseURL: server.baseURL)
        manager.completionQueue = DispatchQueue(label: "end-placement")
        manager.operationQueue.isSuspended = true
        let finished = expectation(description: "success once the queue is resumed")
        let error = Locked<Error?>(nil)
        let ended = Locked(false)
        manager.get("end", parameters: nil, success: { _, _ in ended.value = true; finished.fulfill() },
                    failure: { _, failure in error.value = failure; ended.value = true; finished.fulfill() })
        // The response arrives meanwhile; its end waits with the queue.
        XCTAssertTrue(spin(until: { server.requests.count == 1 }))
        XCTAssertEqual(XCTWaiter.wait(for: [XCTestExpectation(description: "held")], timeout: 0.5), .timedOut)
        XCTAssertFalse(ended.value, "held while the queue is suspended")
        manager.operationQueue.isSuspended = false
        wait(for: [finished], timeout: 15)
        XCTAssertNil(error.value)
    }
}
