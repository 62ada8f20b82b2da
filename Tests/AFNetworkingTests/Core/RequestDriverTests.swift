@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The request driver between its front-end and a fake engine: no socket,
/// no curl transfer ever runs. The test plays the engine's reports (heads,
/// body, completion — late ones included) and checks what the driver asks
/// of the engine and tells its front-end.
final class RequestDriverTests: XCTestCase {
    let url = URL(string: "http://127.0.0.1:9/file")!

    // MARK: - A plain exchange

    func testAnExchangeStartsOneTransferAndDeliversItsBodyOnce() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        XCTAssertEqual(engine.commands, [.start(1)])
        XCTAssertNil(engine.head(transfer, status: 200))
        XCTAssertEqual(engine.body(transfer, "hello")?.isAccepted, true)
        engine.complete(transfer, status: 200)
        let outcome = try XCTUnwrap(frontend.completedOutcome)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.memoryBody, Data("hello".utf8))
        XCTAssertEqual(frontend.completions, 1)
        XCTAssertEqual(frontend.phases, [.executing, .finished])
        XCTAssertEqual(driver.phase, .finished)
    }

    func testProgressIsReportedPerPieceWithTheEntityTotal() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 200, fields: [("Content-Length", "6")])
        _ = engine.body(transfer, "abc")
        _ = engine.body(transfer, "def")
        XCTAssertEqual(frontend.progress.map(\.total), [3, 6])
        XCTAssertEqual(frontend.progress.map(\.expected), [6, 6])
        engine.complete(transfer, status: 200)
    }

    func testTheFrontEndIsHeldOnlyWhileTheRequestIsInFlight() throws {
        let (driver, engine, frontend) = make()
        XCTAssertNil(driver.frontend, "not held before it starts: a front-end never started can be freed")
        driver.handle(.pause)
        XCTAssertEqual(frontend.phases, [.paused], "an event before the start still reaches the front-end")
        XCTAssertNil(driver.frontend, "and is let go again: paused before it ever ran")
        driver.handle(.resume(request(), output: nil))
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        XCTAssertTrue(driver.frontend === frontend, "held while in flight")
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        XCTAssertNil(engine.head(transfer, status: 200))
        engine.complete(transfer, status: 200)
        XCTAssertEqual(frontend.completions, 1)
        XCTAssertNil(driver.frontend, "let go once the request is over")
        driver.handle(.cancel(request()))
        XCTAssertNil(driver.frontend, "late events after the end hold nothing")
        XCTAssertEqual(frontend.completions, 1)
    }

    // MARK: - Cancel at every phase

    func testCancelBeforeStartSendsNothingAndEndsWhenStarted() {
        let (driver, engine, frontend) = make()
        driver.handle(.cancel(request()))
        XCTAssertEqual(driver.phase, .ready)
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: true))
        XCTAssertEqual(engine.commands, [])
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(driver.phase, .finished)
    }

    func testCancelMidTransferAbortsItAndItsLateReportsChangeNothing() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 200)
        _ = engine.body(transfer, "part")
        driver.handle(.cancel(request()))
        XCTAssertEqual(engine.commands, [.start(1), .abort(1)])
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
        // The engine reports what was already on its way: all ignored.
        XCTAssertEqual(engine.body(transfer, "more")?.isAbort, true)
        XCTAssertNotNil(engine.head(transfer, status: 200), "a late head is refused")
        engine.complete(transfer, status: 200)
        XCTAssertEqual(frontend.completions, 1)
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
    }

    func testCancelWhileTheTransferIsBeingBuiltNeverHandsItToTheEngine() {
        let (driver, engine, frontend) = make()
        let cancel = request()
        TestHooks.beforeSubmittingTransfer.withLock { $0 = { driver.handle(.cancel(cancel)) } }
        defer { TestHooks.beforeSubmittingTransfer.withLock { $0 = nil } }
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        XCTAssertEqual(engine.commands, [], "a transfer built after the cancel is freed, never started")
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
    }

    func testCancelWhileARedirectIsUndecidedEndsAndALateAnswerSendsNothing() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 302, fields: [("Location", "/next")])
        engine.complete(transfer, status: 302, fields: [("Location", "/next")], redirectTo: URL(string: "http://127.0.0.1:9/next"))
        let question = try XCTUnwrap(frontend.redirects.first)
        driver.handle(.cancel(request()))
        driver.handle(.redirectDecided(token: question.token, question.proposed))
        XCTAssertEqual(engine.commands, [.start(1)])
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(frontend.completions, 1)
    }

    // MARK: - Follow-ups

    func testARedirectIsAskedAndItsAnswerStartsTheNextHopWhileTheOldHopsReportsAreIgnored() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let first = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(first, status: 302, fields: [("Location", "/next")])
        XCTAssertEqual(engine.body(first, "moved")?.isAccepted, true)
        engine.complete(first, status: 302, fields: [("Location", "/next")], redirectTo: URL(string: "http://127.0.0.1:9/next"))
        let question = try XCTUnwrap(frontend.redirects.first)
        XCTAssertEqual(question.proposed.url?.path, "/next")
        driver.handle(.redirectDecided(token: question.token, question.proposed))
        driver.handle(.redirectDecided(token: question.token, question.proposed))
        XCTAssertEqual(engine.commands, [.start(1), .start(2)], "a second answer to the same question changes nothing")
        let second = try XCTUnwrap(engine.transfer(tag: 2))
        XCTAssertEqual(second.options.request.url?.path, "/next")
        engine.complete(first, status: 302)
        _ = engine.head(second, status: 200)
        _ = engine.body(second, "there")
        engine.complete(second, status: 200)
        let outcome = try XCTUnwrap(frontend.completedOutcome)
        XCTAssertEqual(outcome.memoryBody, Data("there".utf8), "the redirect's own body is not the output")
        XCTAssertEqual(outcome.redirects, 1)
    }

    func testAChallengeAnsweredWithACredentialSendsItOnTheNextHop() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let first = try XCTUnwrap(engine.transfer(tag: 1))
        let challenge: [(name: String, value: String)] = [("WWW-Authenticate", "Basic realm=\"r\"")]
        _ = engine.head(first, status: 401, fields: challenge)
        engine.complete(first, status: 401, fields: challenge)
        let question = try XCTUnwrap(frontend.challenges.first)
        XCTAssertEqual(question.protectionSpace.realm, "r")
        let credential = URLCredential(user: "u", password: "p", persistence: .none)
        driver.handle(.challengeAnswered(token: question.token, .use(credential)))
        let second = try XCTUnwrap(engine.transfer(tag: 2))
        XCTAssertEqual(second.options.credentials?.user, "u")
        engine.complete(second, status: 200)
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 200)
    }

    func testAChallengeAnsweredWithoutACredentialDeliversThe401WithItsBody() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let first = try XCTUnwrap(engine.transfer(tag: 1))
        let challenge: [(name: String, value: String)] = [("WWW-Authenticate", "Basic realm=\"r\"")]
        _ = engine.head(first, status: 401, fields: challenge)
        _ = engine.body(first, "denied")
        engine.complete(first, status: 401, fields: challenge)
        let question = try XCTUnwrap(frontend.challenges.first)
        driver.handle(.challengeAnswered(token: question.token, .continueWithoutCredential))
        XCTAssertEqual(engine.commands, [.start(1)])
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 401)
        XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("denied".utf8))
    }

    // MARK: - Pause, resume, suspend

    func testPauseAbortsTheTransferAndResumeAsksForTheRestWithRange() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let first = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(first, status: 200, fields: [("Content-Length", "6"), ("ETag", "\"v1\"")])
        _ = engine.body(first, "abc")
        let paused = driver.handle(.pause)
        XCTAssertEqual(paused.after, .paused)
        XCTAssertEqual(engine.commands, [.start(1), .abort(1)])
        XCTAssertEqual(engine.body(first, "late")?.isAbort, true, "bytes of the aborted hop are refused")
        var ranged = request()
        ranged.setValue("bytes=3-", forHTTPHeaderField: "Range")
        driver.handle(.resume(ranged, output: nil))
        let second = try XCTUnwrap(engine.transfer(tag: 2))
        XCTAssertEqual(second.options.request.value(forHTTPHeaderField: "Range"), "bytes=3-")
        _ = engine.head(second, status: 206, fields: [("Content-Range", "bytes 3-5/6")])
        _ = engine.body(second, "def")
        engine.complete(second, status: 206)
        XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("abcdef".utf8))
        XCTAssertEqual(frontend.phases, [.executing, .paused, .executing, .finished])
    }

    func testSuspendAndResumeOfARunningTaskReachTheEngineInOrder() throws {
        let (driver, engine, _) = make()
        var transitions: [(URLSessionTask.State, URLSessionTask.State)] = []
        driver.handle(.resumeTask(request(), bodyInMemory: true, retry: nil, budget: nil, admitted: true)) { transitions.append(($0.before, $0.after)) }
        XCTAssertNotNil(engine.transfer(tag: 1))
        driver.handle(.suspendTask) { transitions.append(($0.before, $0.after)) }
        driver.handle(.suspendTask) { transitions.append(($0.before, $0.after)) }
        driver.handle(.resumeTask(request(), bodyInMemory: true, retry: nil, budget: nil, admitted: true)) { transitions.append(($0.before, $0.after)) }
        XCTAssertEqual(engine.commands, [.start(1), .suspend(1, true), .resume(1, false)])
        XCTAssertEqual(transitions.map { "\($0.0.rawValue)>\($0.1.rawValue)" },
                       ["1>0", "0>1", "1>1", "1>0"], "suspended=1, running=0: the second suspend changes nothing")
        driver.handle(.cancelTask(request(), bodyInMemory: true))
        XCTAssertEqual(engine.commands.last, .abort(1))
    }

    func testATaskSuspendedWhileItsHopIsBuiltStartsSuspended() throws {
        let (driver, engine, _) = make()
        TestHooks.beforeSubmittingTransfer.withLock { $0 = { driver.handle(.suspendTask) } }
        defer { TestHooks.beforeSubmittingTransfer.withLock { $0 = nil } }
        driver.handle(.resumeTask(request(), bodyInMemory: true, retry: nil, budget: nil, admitted: true))
        XCTAssertEqual(engine.commands, [.suspend(1, true), .start(1)], "held out of curl before its start")
        driver.handle(.cancelTask(request(), bodyInMemory: true))
    }

    func testATaskNotAdmittedBySessionEndsCancelledWhenResumed() {
        let (driver, engine, frontend) = make()
        driver.handle(.resumeTask(request(), bodyInMemory: true, retry: nil, budget: nil, admitted: false))
        XCTAssertEqual(engine.commands, [])
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
    }

    // MARK: - Output

    func testAMemoryBodyDivertedToAStreamMidTransferKeepsEveryByteInOrder() throws {
        let (driver, engine, frontend) = make(divertible: true)
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 200)
        _ = engine.body(transfer, "kept-")
        let stream = OutputStream.toMemory()
        XCTAssertTrue(driver.divertOutput(to: stream))
        _ = engine.body(transfer, "forwarded")
        let done = frontend.expectCompletion(self)
        engine.complete(transfer, status: 200)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("kept-forwarded".utf8))
        XCTAssertFalse(driver.divertOutput(to: OutputStream.toMemory()), "after the outcome nothing is diverted")
    }

    func testAFullWriterPausesTheTransferAndTheEngineIsToldWhenItDrained() throws {
        let (driver, engine, frontend) = make()
        let stream = SlowMemoryStream()
        driver.handle(.start(request(), output: stream, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 200)
        let piece = String(repeating: "x", count: 64 << 10)
        var sent = 0
        var paused = false
        for _ in 0..<64 where !paused {
            switch engine.body(transfer, piece) {
            case .accepted?: sent += 1
            case .pause?: paused = true
            default: XCTFail("unexpected disposition")
            }
        }
        XCTAssertTrue(paused, "the writer's high-water mark pauses the transfer")
        stream.gate.signal()
        XCTAssertTrue(engine.waitForCommand(.resumeReceiving(1), timeout: 10), "the drained writer resumes the transfer through the engine")
        let done = frontend.expectCompletion(self)
        engine.complete(transfer, status: 200)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(stream.written.value, sent * piece.utf8.count)
    }

    func testACancelRacingThePiecesLeavesTheOutputWithExactlyTheBytesProgressReported() throws {
        // A download keeps the bytes queued when it is cancelled (its resume
        // data counts them). Counting a piece and queuing it are one step, so
        // a cancel racing the pieces never falls between the two: progress
        // never reports a byte the output did not get.
        for _ in 0..<30 {
            let (driver, engine, frontend) = make(keepsQueuedBodyOnCancel: true)
            let completed = frontend.expectCompletion(self)
            driver.handle(.start(request(), output: OutputStream(toMemory: ()), retry: nil, budget: nil, cancelled: false))
            let transfer = try XCTUnwrap(engine.transfer(tag: 1))
            XCTAssertNil(engine.head(transfer, status: 200))
            let sent = expectation(description: "pieces sent")
            let cancel = request()
            DispatchQueue.global().async {
                for index in 0..<500 {
                    if index == 20 { DispatchQueue.global().async { driver.handle(.cancel(cancel)) } }
                    guard engine.body(transfer, "0123456789")?.isAccepted == true else { break }
                }
                sent.fulfill()
            }
            wait(for: [sent, completed], timeout: 10)
            let reported = frontend.progress.last?.total ?? 0
            XCTAssertGreaterThanOrEqual(reported, 200)
            XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
            XCTAssertEqual(Int64(frontend.completedOutcome?.memoryBody?.count ?? -1), reported)
        }
    }

    func testAnOutputThatFailsEndsTheRequestWithItsError() throws {
        let (driver, engine, frontend) = make()
        let stream = SlowMemoryStream(failing: true)
        stream.gate.signal()
        driver.handle(.start(request(), output: stream, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        let done = frontend.expectCompletion(self)
        _ = engine.head(transfer, status: 200)
        _ = engine.body(transfer, "doomed")
        wait(for: [done], timeout: 10)
        XCTAssertEqual(engine.commands, [.start(1), .abort(1)])
        XCTAssertNotNil(frontend.completedOutcome?.error)
    }

    // MARK: - Retry

    func testA503UnderARetryPolicyIsSentAgainAfterTheTimer() throws {
        let (driver, engine, frontend) = make()
        driver.handle(.start(request(), output: nil, retry: retryPlan(), budget: nil, cancelled: false))
        let first = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(first, status: 503)
        _ = engine.body(first, "busy")
        engine.complete(first, status: 503)
        XCTAssertTrue(driver.isWaitingToRetry)
        XCTAssertTrue(engine.waitForCommand(.start(2), timeout: 10), "the retry timer starts the second attempt")
        let second = try XCTUnwrap(engine.transfer(tag: 2))
        _ = engine.head(second, status: 200)
        _ = engine.body(second, "ok")
        // The timer's thread may still be running the driver's effects: the
        // completion then runs there, after this report returned.
        let done = frontend.expectCompletion(self)
        engine.complete(second, status: 200)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("ok".utf8), "the provisional 503 body is not part of the output")
    }

    func testCancelWhileWaitingToRetrySendsNothingMore() throws {
        let (driver, engine, frontend) = make()
        var plan = retryPlan()
        plan = TransferStateMachine.RetryPlan(policy: { var p = plan.policy; p.baseDelay = 0.3; return p }(), bodyCanBeResent: true)
        driver.handle(.start(request(), output: nil, retry: plan, budget: nil, cancelled: false))
        let first = try XCTUnwrap(engine.transfer(tag: 1))
        engine.complete(first, status: 503)
        XCTAssertTrue(driver.isWaitingToRetry)
        driver.handle(.cancel(request()))
        XCTAssertFalse(driver.isWaitingToRetry)
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
        // Longer than the backoff: the cancelled timer never fires a second start.
        XCTAssertFalse(engine.waitForCommand(.start(2), timeout: 1.2))
    }

    func testAHopThatCannotBeBuiltFailsTheRequestWithoutATransfer() {
        let (driver, engine, frontend) = make()
        frontend.proxies = .failure(NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL))
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        XCTAssertEqual(engine.commands, [])
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorBadURL)
    }

    func testTheMetricsAndTrailersOfTheFinalHopAreKeptOnceDecided() throws {
        let (driver, engine, _) = make()
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        XCTAssertNil(driver.finishedMetrics)
        XCTAssertEqual(driver.trailerFields, [:])
        engine.complete(transfer, status: 200)
        XCTAssertEqual(driver.trailerFields, [:], "a response without trailers has none")
        XCTAssertEqual(driver.finalOutcome?.statusCode, 200)
    }

    // MARK: - One executor per request

    func testEffectsNeverRunConcurrentlyAndAnnouncementsFollowTheMachinesOrder() throws {
        let (driver, engine, frontend) = make()
        frontend.announceDelay = 0.0005
        driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false))
        let group = DispatchGroup()
        let again = request()
        for worker in 0..<8 {
            DispatchQueue.global().async(group: group) {
                for round in 0..<40 {
                    if (worker + round) % 2 == 0 { driver.handle(.pause) } else { driver.handle(.resume(again, output: nil)) }
                }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        driver.handle(.cancel(request()))
        let changes = frontend.changes
        XCTAssertEqual(frontend.mostAnnouncingAtOnce, 1, "two effects of one request ran at the same time")
        for (earlier, later) in zip(changes, changes.dropFirst()) {
            XCTAssertEqual(later.before, earlier.after, "announced out of the machine's order: \(changes.map { "\($0.before)>\($0.after)" })")
        }
        XCTAssertEqual(changes.last?.after, .finished)
        XCTAssertEqual(frontend.completions, 1)
        XCTAssertGreaterThan(engine.commands.count, 2)
    }

    func testTheEnginesThreadHandsStartingAHopToAnotherThread() throws {
        let (driver, engine, frontend) = make()
        engine.asEngineThread { driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: false)) }
        XCTAssertTrue(engine.waitForCommand(.start(1), timeout: 10))
        XCTAssertEqual(frontend.preparedOnEngineThread, [false], "the hop's request was prepared off the engine's thread")
    }

    // MARK: - Total time budget

    func testASpentBudgetAbortsTheTransferAndFailsWithATimeout() throws {
        let (driver, engine, frontend) = make()
        let budget = ResourceBudget(limit: 0.2, url: url, description: "a test budget")
        let done = frontend.expectCompletion(self)
        driver.handle(.start(request(), output: nil, retry: nil, budget: budget, cancelled: false))
        XCTAssertNotNil(engine.transfer(tag: 1))
        wait(for: [done], timeout: 10)
        XCTAssertEqual(engine.commands, [.start(1), .abort(1)], "the budget's timer ends the transfer")
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorTimedOut)
        XCTAssertEqual(frontend.completedOutcome?.error?.localizedDescription, "The request timed out (a test budget).")
    }

    // MARK: - Helpers

    private func make(divertible: Bool = false, keepsQueuedBodyOnCancel: Bool = false) -> (RequestDriver, FakeEngine, FakeFrontend) {
        makeDriverOnFakeEngine(divertible: divertible, keepsQueuedBodyOnCancel: keepsQueuedBodyOnCancel)
    }

    private func request() -> URLRequest {
        URLRequest(url: url)
    }

    private func retryPlan() -> TransferStateMachine.RetryPlan {
        var policy = RetryPolicy()
        policy.maximumAttempts = 3
        policy.baseDelay = 0.01
        policy.maximumDelay = 5
        policy.jitter = 0
        return TransferStateMachine.RetryPlan(policy: policy, bodyCanBeResent: true)
    }
}

/// A memory stream whose writes wait until `gate` is signalled (so the
/// writer's backlog grows), or that refuses every write.
final class SlowMemoryStream: OutputStream {
    // `gateOpened` is touched only by the writer's drain job.
    let gate = DispatchSemaphore(value: 0)
    let written = Locked(0)
    private let failing: Bool
    private var gateOpened = false
    private let status = Locked(Stream.Status.notOpen)

    init(failing: Bool = false) {
        self.failing = failing
        super.init(toMemory: ())
    }

    required init(toMemory: ()) {
        failing = false
        super.init(toMemory: ())
    }

    override func open() { status.value = .open }
    override func close() { status.value = .closed }
    override var streamStatus: Stream.Status { status.value }
    override var hasSpaceAvailable: Bool { true }
    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }
    override var streamError: Error? { failing ? NSError(domain: NSPOSIXErrorDomain, code: Int(ENOSPC)) : nil }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        if !gateOpened {
            // Bounded: a test that never opens the gate fails instead of hanging.
            _ = gate.wait(timeout: .now() + 20)
            gateOpened = true
        }
        if failing { return -1 }
        written.withLock { $0 += len }
        return len
    }
}
