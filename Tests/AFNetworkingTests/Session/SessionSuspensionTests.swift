@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Suspension before a connection exists: libcurl refuses to pause a handle
/// without one, so a task suspended right after `resume()` (or while it waits
/// for a redirect decision) is held out of curl by the engine — the server
/// sees nothing until the task is resumed.
final class SessionSuspensionTests: SessionTransferTestCase {
    func testAHopThatStartsSuspendedSendsNothingUntilResumed() {
        server.respond("/hop-a", status: 302, headers: [("Location", "/hop-b")])
        server.respond("/hop-b", body: Data("held".utf8))
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        // Suspended while the redirect is being decided: the next hop starts
        // suspended, before it has a connection.
        manager.setTaskWillPerformHTTPRedirectionBlock { _, task, _, request in
            task.suspend()
            return request
        }
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "completes after resume")
        let task = manager.dataTask(with: request("/hop-a"), completionHandler: recorder(outcome, done))
        task.resume()
        XCTAssertTrue(spin(until: { task.state == .suspended }))
        // Bounded: nothing of the second hop may arrive in this window.
        let quietUntil = Date().addingTimeInterval(0.4)
        while Date() < quietUntil { usleep(20_000) }
        XCTAssertTrue(server.requests.filter { $0.uri == "/hop-b" }.isEmpty, "a suspended hop sends nothing")
        task.resume()
        wait(for: [done], timeout: 10)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(server.requests.filter { $0.uri == "/hop-b" }.count, 1)
    }

    func testCancellingATaskHeldBeforeItsConnectionCompletesOnce() {
        // Suspended inside the redirect decision, so the second hop is held
        // before it has a connection whatever the scheduling (a suspend()
        // right after resume() may come after the request went out).
        server.respond("/held-redirect", status: 302, headers: [("Location", "/held-cancel")])
        server.respond("/held-cancel", body: Data("x".utf8))
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.setTaskWillPerformHTTPRedirectionBlock { _, task, _, request in
            task.suspend()
            return request
        }
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "completes once")
        let task = manager.dataTask(with: request("/held-redirect"), completionHandler: recorder(outcome, done))
        task.resume()
        XCTAssertTrue(spin(until: { task.state == .suspended && !self.server.requests.isEmpty }))
        task.cancel()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(outcome.value.calls, 1)
        XCTAssertEqual(outcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertTrue(server.requests.filter { $0.uri == "/held-cancel" }.isEmpty)
    }

    func testAResponseDecisionGivenLaterHoldsTheEndUntilItArrives() {
        server.respond("/late-answer", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":1}".utf8))
        let manager = LateAnsweringManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "completion")
        let task = manager.dataTask(with: request("/late-answer"), completionHandler: recorder(outcome, done))
        task.resume()
        // The body is complete long before the answer; the task waits for it.
        XCTAssertTrue(spin(until: { manager.pending.value != nil }))
        let quietUntil = Date().addingTimeInterval(0.3)
        while Date() < quietUntil { _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.02)) }
        XCTAssertEqual(outcome.value.calls, 0, "no completion before the answer")
        manager.pending.value?(.cancel)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(outcome.value.error?.code, NSURLErrorCancelled, "a late .cancel still cancels")
        XCTAssertNil(outcome.value.object)
    }
}

/// Keeps the did-receive-response completion handler for the test to call later.
private final class LateAnsweringManager: URLSessionManager, @unchecked Sendable {
    let pending = Locked<(@Sendable (URLSession.ResponseDisposition) -> Void)?>(nil)

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                             completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        pending.value = completionHandler
    }
}
