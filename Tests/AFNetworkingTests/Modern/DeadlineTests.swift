import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `timeoutIntervalForResource` on operations and the operation manager: a
/// total budget for the whole request (retries included), which stops while
/// the operation is paused. (The session configuration's own
/// `timeoutIntervalForResource` is covered by the session suites.)
final class DeadlineTests: OperationTestCase {
    /// nginx's /slow/ location sends at 512 KiB/s: 4m.bin takes about 8 s.
    private func slowDownload(budget: TimeInterval) throws -> HTTPRequestOperation {
        let nginx = try SharedServers.nginx()
        var request = URLRequest(url: nginx.httpURL.appendingPathComponent("slow/4m.bin"))
        request.timeoutInterval = 30
        let operation = HTTPRequestOperation(request: request)
        operation.timeoutIntervalForResource = budget
        return operation
    }

    /// Records the operation's end and when it happened.
    private final class Ending: Sendable {
        let state = Locked<(error: NSError?, calls: Int, at: Date?)>((nil, 0, nil))
        var error: NSError? { state.value.error }
        var calls: Int { state.value.calls }
        var at: Date? { state.value.at }
    }

    private func observe(_ operation: HTTPRequestOperation, _ done: XCTestExpectation) -> Ending {
        let ending = Ending()
        operation.setCompletionBlockWithSuccess({ _, _ in
            ending.state.withLock { $0.calls += 1; $0.at = Date() }
            done.fulfill()
        }, failure: { _, error in
            ending.state.withLock { $0.calls += 1; $0.error = error as NSError; $0.at = Date() }
            done.fulfill()
        })
        return ending
    }

    /// Spins the main run loop for `seconds` (completion blocks keep running).
    private func idle(_ seconds: TimeInterval) {
        let until = Date().addingTimeInterval(seconds)
        while Date() < until { _ = RunLoop.main.run(mode: .default, before: min(until, Date().addingTimeInterval(0.01))) }
    }

    func testABudgetOfOneSecondEndsAnEightSecondDownloadEarly() throws {
        let operation = try slowDownload(budget: 1)
        let done = expectation(description: "finished")
        let ending = observe(operation, done)
        let started = Date()
        OperationQueue().addOperation(operation)
        wait(for: [done], timeout: 6)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(ending.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(ending.error?.code, NSURLErrorTimedOut)
        XCTAssertEqual(ending.error?.userInfo[NSURLErrorFailingURLErrorKey] as? URL, operation.request.url)
        XCTAssertGreaterThanOrEqual(elapsed, 0.9, "the budget is one second")
        XCTAssertLessThan(elapsed, 4, "well under the 8 s the download needs")
        XCTAssertEqual(ending.calls, 1)
        operation.cancel()
    }

    func testAPausedOperationDoesNotSpendItsBudget() throws {
        // Budget 4 s. Pause as soon as bytes arrive, stay paused 4.5 s (longer
        // than the whole budget), resume: the deadline must come only after
        // the rest of the budget has run, counted from the resume. The first
        // bytes must come before the budget is spent (else the deadline ends
        // it before the pause), so the budget leaves seconds for a loaded
        // machine; the ~8 s download still cannot finish within it.
        let budget: TimeInterval = 4
        let operation = try slowDownload(budget: budget)
        let done = expectation(description: "finished")
        let ending = observe(operation, done)
        let firstBytes = Locked(false)
        operation.setDownloadProgressBlock { _, _, _ in firstBytes.value = true }
        let started = Date()
        OperationQueue().addOperation(operation)
        XCTAssertTrue(spin(until: { firstBytes.value }, timeout: budget + 1), "no bytes arrived")
        operation.pause()
        let runBeforePause = Date().timeIntervalSince(started)
        XCTAssertTrue(operation.isPaused)

        idle(budget + 0.5)
        XCTAssertEqual(ending.calls, 0, "the deadline fired while the operation was paused: \(String(describing: ending.error))")
        XCTAssertTrue(operation.isPaused)

        let resumedAt = Date()
        operation.resume()
        wait(for: [done], timeout: budget + 5)
        XCTAssertEqual(ending.error?.code, NSURLErrorTimedOut)
        let runAfterResume = (ending.at ?? Date()).timeIntervalSince(resumedAt)
        // At most runBeforePause of the budget was spent before the pause.
        XCTAssertGreaterThanOrEqual(runAfterResume, budget - runBeforePause - 0.25,
                                    "the time paused was charged to the budget")
        XCTAssertLessThan(runAfterResume, 3 * budget, "the budget left after the pause was not enforced")
        operation.cancel()
    }

    func testAPauseDoesNotPushASlowDownloadOverItsBudget() {
        // 600 bytes dripped 100 every 0.1 s; budget 3 s; paused for 3.5 s after
        // the first 100. The running time (the first bytes, then the rest in
        // ~0.5 s) stays within the budget, the wall time not. The entity has an
        // ETag and the server honours `Range: bytes=N-`, so the resume continues
        // where the pause left off instead of dripping it all again.
        let body = ModernSupport.pattern(600)
        let pauseCalled = Locked(false)
        server.route("/drip") { request in
            var steps: [ScriptedServer.Step]
            let from: Int
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                steps = [.head(status: 206, headers: [("Content-Length", "\(body.count - start)"), ("ETag", "\"d1\""),
                                                      ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")])]
                from = start
            } else {
                // The rest only once the test has paused: the pause lands mid-body
                // however late the test gets to it.
                steps = [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"d1\"")]),
                         .body(body.subdata(in: 0..<100)), .waitUntil({ pauseCalled.value }, timeout: 30)]
                from = 100
            }
            for offset in stride(from: from, to: body.count, by: 100) {
                steps.append(.body(body.subdata(in: offset..<min(offset + 100, body.count))))
                steps.append(.wait(0.1))
            }
            return steps + [.end]
        }
        let budget: TimeInterval = 3
        let operation = HTTPRequestOperation(request: request("/drip"))
        operation.timeoutIntervalForResource = budget
        let done = expectation(description: "finished")
        let ending = observe(operation, done)
        let firstBytes = Locked(false)
        operation.setDownloadProgressBlock { _, _, _ in firstBytes.value = true }
        let started = Date()
        OperationQueue().addOperation(operation)
        XCTAssertTrue(spin(until: { firstBytes.value }, timeout: 5))
        operation.pause()
        pauseCalled.value = true
        idle(budget + 0.5)
        XCTAssertEqual(ending.calls, 0)
        operation.resume()
        wait(for: [done], timeout: 10)
        XCTAssertNil(ending.error, "running time (~1 s) is within the 3 s budget")
        XCTAssertEqual(operation.responseData, body)
        XCTAssertEqual(server.requests.count, 2, "the first request and the resume")
        XCTAssertEqual(server.requests.last?.headers.first(name: "range")?.hasPrefix("bytes="), true, "the resume continued")
        XCTAssertGreaterThan(Date().timeIntervalSince(started), budget, "the wall time exceeded the budget")
    }

    func testTimePausedBeforeItEverRanIsNotCharged() throws {
        // Paused before it ever ran, then started (it stays paused until
        // resumed), resumed after more than the budget: the budget must start
        // running at the resume, not at start().
        let operation = try slowDownload(budget: 1)
        let done = expectation(description: "finished")
        let ending = observe(operation, done)
        operation.pause()
        operation.start()
        XCTAssertTrue(operation.isPaused, "start() only records the start of a paused operation")
        idle(1.5)
        XCTAssertEqual(ending.calls, 0, "a paused operation must not end")
        XCTAssertTrue(operation.isPaused)
        let resumedAt = Date()
        operation.resume()
        wait(for: [done], timeout: 5)
        XCTAssertEqual(ending.error?.code, NSURLErrorTimedOut,
                       "the budget must still apply after the resume (it must not have expired, unseen, during the pause)")
        let runAfterResume = (ending.at ?? Date()).timeIntervalSince(resumedAt)
        XCTAssertGreaterThanOrEqual(runAfterResume, 0.75)
        XCTAssertLessThan(runAfterResume, 3)
        operation.cancel()
    }

    func testZeroMeansNoDeadline() {
        server.route("/late") { _ in
            [.wait(1.2), .head(status: 200, headers: [("Content-Length", "4")]), .body(Data("late".utf8)), .end]
        }
        let operation = HTTPRequestOperation(request: request("/late"))
        XCTAssertEqual(operation.timeoutIntervalForResource, 0, "no budget unless asked")
        operation.timeoutIntervalForResource = 0.3
        operation.timeoutIntervalForResource = 0 // read when the operation starts
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, "late")
    }

    func testTheBudgetCoversEveryRetry() {
        // Retry-After 2 s, budget 3 s: requests at ~0 s and ~2 s; a third would
        // go at ~4 s, after the deadline. The second is sent in time even when
        // the first answer is a second late.
        server.route("/busy") { _ in
            [.head(status: 503, headers: [("Retry-After", "2"), ("Content-Length", "4")]), .body(Data("busy".utf8)), .end]
        }
        let operation = HTTPRequestOperation(request: request("/busy"))
        var policy = RetryPolicy()
        policy.maximumAttempts = 10
        policy.maximumDelay = 5
        operation.retryPolicy = policy
        operation.timeoutIntervalForResource = 3
        let started = Date()
        let outcome = run(operation, timeout: 15)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorTimedOut, "retries never extend the deadline")
        // Deadline semantics: not before the 3 s budget, and within 3 times it.
        XCTAssertGreaterThanOrEqual(elapsed, 2.8)
        XCTAssertLessThan(elapsed, 9)
        XCTAssertEqual(server.requests.count, 2, "sent at 0 s and 2 s; the deadline came before the third")
    }

    func testTheManagerCopiesItsBudgetToItsOperations() {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        XCTAssertEqual(manager.timeoutIntervalForResource, 0)
        manager.timeoutIntervalForResource = 7
        let operation = manager.httpRequestOperation(with: request("/x"), success: nil, failure: nil)
        XCTAssertEqual(operation.timeoutIntervalForResource, 7)
        XCTAssertEqual((operation.copy() as? HTTPRequestOperation)?.timeoutIntervalForResource, 7, "copy() keeps the budget")
    }

    func testTheManagersBudgetAppliesToItsVerbs() {
        server.route("/slow") { _ in
            [.wait(5), .head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
        }
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.timeoutIntervalForResource = 0.5
        let done = expectation(description: "failure")
        let failure = Locked<NSError?>(nil)
        let started = Date()
        let operation = manager.get("slow", parameters: nil, success: { _, _ in done.fulfill() }, failure: { _, error in
            failure.value = error as NSError
            done.fulfill()
        })
        XCTAssertEqual(operation?.timeoutIntervalForResource, 0.5)
        wait(for: [done], timeout: 5)
        XCTAssertEqual(failure.value?.code, NSURLErrorTimedOut)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3)
    }

    func testTheErrorSaysWhichTimeoutExpired() throws {
        let operation = try slowDownload(budget: 0.5)
        let outcome = run(operation, timeout: 6)
        XCTAssertEqual(outcome.error?.code, NSURLErrorTimedOut)
        XCTAssertTrue(outcome.error?.localizedDescription.contains("timeoutIntervalForResource") ?? false,
                      outcome.error?.localizedDescription ?? "no error")
        XCTAssertEqual(outcome.error?.afnetworking.kind, .timedOut)
        operation.cancel()
    }
}
