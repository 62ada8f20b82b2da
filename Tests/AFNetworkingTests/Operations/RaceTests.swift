@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The two races the re-founded core closes, each with its window held open.
final class RaceTests: OperationTestCase {
    override func tearDown() {
        TestHooks.beforeSubmittingTransfer.withLock { $0 = nil }
        super.tearDown()
    }

    /// 2.x and this package before the state machine: a cancel while the
    /// challenge block had not answered left the operation executing forever,
    /// holding its queue slot.
    func testCancelWhileTheChallengeBlockHasNotAnsweredFinishesTheOperation() {
        server.route("/auth") { _ in [.head(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"r\""), ("Content-Length", "0")]), .end] }
        let operation = HTTPRequestOperation(request: request("/auth"))
        let asked = expectation(description: "challenge asked")
        let challenge = Locked<URLAuthenticationChallenge?>(nil)
        operation.setWillSendRequestForAuthenticationChallengeBlock { _, received in
            challenge.value = received   // and no answer, yet
            asked.fulfill()
        }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let outcome = Locked(Outcome())
        let done = expectation(description: "completion")
        operation.setCompletionBlockWithSuccess({ _, _ in outcome.withLock { $0.calls += 1 }; done.fulfill() },
                                                failure: { _, error in outcome.withLock { $0.calls += 1; $0.error = error as NSError }; done.fulfill() })
        queue.addOperation(operation)
        wait(for: [asked], timeout: 10)
        operation.cancel()
        wait(for: [done], timeout: 10)
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertEqual(outcome.value.error?.code, NSURLErrorCancelled)
        // The slot is free: the next operation on the one-slot queue runs.
        server.respond("/next", body: Data("n".utf8))
        let next = HTTPRequestOperation(request: request("/next"))
        let nextDone = expectation(description: "next")
        next.setCompletionBlockWithSuccess({ _, _ in nextDone.fulfill() }, failure: { _, _ in nextDone.fulfill() })
        queue.addOperation(next)
        wait(for: [nextDone], timeout: 10)
        // A late answer to the old challenge changes nothing.
        if let old = challenge.value { operation.use(URLCredential(user: "u", password: "p", persistence: .none), for: old) }
        XCTAssertEqual(outcome.value.calls, 1)
        XCTAssertEqual(server.requests.filter { $0.uri == "/auth" }.count, 1, "no retry after the cancel")
    }

    /// Before the sticky abort, a cancel landing between registering the
    /// transfer and handing it to the engine was dropped by the engine (it did
    /// not know the transfer yet), which then sent the request anyway.
    func testACancelThatOvertakesTheStartStillPreventsTheRequest() {
        server.route("/post") { _ in [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end] }
        var request = request("/post", method: "POST")
        request.httpBody = Data(repeating: 7, count: 10_000)
        let operation = HTTPRequestOperation(request: request)
        let cancelled = expectation(description: "cancelled inside the window")
        TestHooks.beforeSubmittingTransfer.withLock {
            $0 = { [weak operation] in
                // The transfer is registered and not yet submitted: cancel now,
                // then hold the window open so the abort reaches the engine first.
                operation?.cancel()
                cancelled.fulfill()
                Thread.sleep(forTimeInterval: 0.2)
            }
        }
        let outcome = run(operation)
        wait(for: [cancelled], timeout: 5)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        Thread.sleep(forTimeInterval: 0.3)
        XCTAssertEqual(server.connectionCount, 0, "no byte of the cancelled request was sent")
        XCTAssertTrue(server.requests.isEmpty)
    }

    /// The same at the engine's own interface: an abort before the start.
    func testTheEngineNeverSendsATransferAbortedBeforeItsStart() throws {
        server.respond("/never", body: Data("x".utf8))
        let delegate = RecordingDelegate()
        var options = TransferOptions(request: request("/never"))
        options.tag = 42
        let transfer = try Transfer(options: options, delegate: delegate)
        NetworkEngine.shared.abort(transfer, reason: .cancelled)
        NetworkEngine.shared.start(transfer)
        XCTAssertTrue(spin { delegate.completions.value.count == 1 })
        XCTAssertEqual(delegate.completions.value.first??.code, NSURLErrorCancelled)
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertEqual(server.connectionCount, 0)
    }

    /// A transfer's abort is sticky: the first reason wins.
    func testTheFirstAbortReasonWins() throws {
        server.route("/slow") { _ in [.wait(5), .head(status: 200, headers: [("Content-Length", "0")]), .end] }
        let delegate = RecordingDelegate()
        let transfer = try Transfer(options: TransferOptions(request: request("/slow")), delegate: delegate)
        NetworkEngine.shared.start(transfer)
        NetworkEngine.shared.abort(transfer, reason: .cancelled)
        NetworkEngine.shared.abort(transfer, reason: .timedOut)
        XCTAssertTrue(spin { delegate.completions.value.count == 1 })
        XCTAssertEqual(delegate.completions.value.first??.code, NSURLErrorCancelled)
    }
}

/// Records what a transfer reports.
final class RecordingDelegate: TransferDelegate {
    let completions = Locked<[NSError?]>([])
    let heads = Locked<[Int]>([])

    func transfer(_ transfer: Transfer, didReceiveHead response: ReceivedResponse) -> NSError? {
        heads.withLock { $0.append(response.statusCode) }
        return nil
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyDisposition { .accepted }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {}

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        completions.withLock { $0.append(error) }
    }
}
