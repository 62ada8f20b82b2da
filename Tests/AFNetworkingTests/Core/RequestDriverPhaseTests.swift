@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Cancel, pause and suspend at every phase a request can be in, on a fake
/// engine (no socket), each followed by every late report that phase could
/// still receive: the table below reaches a phase, the tests apply the event
/// to each row and check the same invariants — one completion at most,
/// nothing started after a cancel, late reports change nothing.
final class RequestDriverPhaseTests: XCTestCase {
    private let url = URL(string: "http://127.0.0.1:9/file")!

    /// A phase, and whether a hop's transfer is live in it.
    private struct Phase {
        let name: String
        let hasLiveTransfer: Bool
        let isOver: Bool
        let reach: (RequestDriverPhaseTests, RequestDriver, FakeEngine, FakeFrontend) throws -> Void
    }

    private var phases: [Phase] {
        [
            Phase(name: "not started", hasLiveTransfer: false, isOver: false) { _, _, _, _ in },
            Phase(name: "hop started, no head yet", hasLiveTransfer: true, isOver: false) { test, driver, _, _ in
                test.start(driver)
            },
            Phase(name: "mid-body", hasLiveTransfer: true, isOver: false) { test, driver, engine, _ in
                test.start(driver)
                let transfer = try XCTUnwrap(engine.transfer(tag: 1))
                XCTAssertNil(engine.head(transfer, status: 200))
                XCTAssertEqual(engine.body(transfer, "part")?.isAccepted, true)
            },
            Phase(name: "redirect asked", hasLiveTransfer: false, isOver: false) { test, driver, engine, frontend in
                test.start(driver)
                let transfer = try XCTUnwrap(engine.transfer(tag: 1))
                _ = engine.head(transfer, status: 302, fields: [("Location", "/next")])
                engine.complete(transfer, status: 302, fields: [("Location", "/next")], redirectTo: URL(string: "http://127.0.0.1:9/next"))
                XCTAssertEqual(frontend.redirects.count, 1)
            },
            Phase(name: "challenge asked", hasLiveTransfer: false, isOver: false) { test, driver, engine, frontend in
                test.start(driver)
                let transfer = try XCTUnwrap(engine.transfer(tag: 1))
                let challenge: [(name: String, value: String)] = [("WWW-Authenticate", "Basic realm=\"r\"")]
                _ = engine.head(transfer, status: 401, fields: challenge)
                engine.complete(transfer, status: 401, fields: challenge)
                XCTAssertEqual(frontend.challenges.count, 1)
            },
            Phase(name: "waiting to retry", hasLiveTransfer: false, isOver: false) { test, driver, engine, _ in
                test.start(driver, retry: test.slowRetry())
                let transfer = try XCTUnwrap(engine.transfer(tag: 1))
                _ = engine.head(transfer, status: 503)
                engine.complete(transfer, status: 503)
                XCTAssertTrue(driver.isWaitingToRetry)
            },
            Phase(name: "paused mid-body", hasLiveTransfer: false, isOver: false) { test, driver, engine, _ in
                test.start(driver)
                let transfer = try XCTUnwrap(engine.transfer(tag: 1))
                _ = engine.head(transfer, status: 200)
                _ = engine.body(transfer, "part")
                driver.handle(.pause)
                XCTAssertEqual(driver.phase, .paused)
            },
            Phase(name: "finished", hasLiveTransfer: false, isOver: true) { test, driver, engine, frontend in
                test.start(driver)
                let transfer = try XCTUnwrap(engine.transfer(tag: 1))
                _ = engine.head(transfer, status: 200)
                _ = engine.body(transfer, "all")
                engine.complete(transfer, status: 200)
                XCTAssertEqual(frontend.completions, 1)
            },
        ]
    }

    // MARK: - Cancel

    func testCancelAtEveryPhaseEndsOnceAndLateReportsChangeNothing() throws {
        for phase in phases {
            let (driver, engine, frontend) = make()
            try phase.reach(self, driver, engine, frontend)
            let startsBefore = starts(engine)
            driver.handle(.cancel(request()))
            if phase.name == "not started" {
                // An operation cancelled before its queue starts it ends when started.
                XCTAssertEqual(frontend.completions, 0, phase.name)
                driver.handle(.start(request(), output: nil, retry: nil, budget: nil, cancelled: true))
            }
            XCTAssertEqual(frontend.completions, 1, "\(phase.name): one completion")
            if phase.isOver {
                XCTAssertNil(frontend.completedOutcome?.error, "\(phase.name): a cancel after the end changes nothing")
            } else {
                XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled, phase.name)
            }
            if phase.hasLiveTransfer {
                XCTAssertEqual(engine.commands.last, .abort(1), "\(phase.name): the live transfer is aborted")
            }
            playLateReports(driver, engine, frontend)
            XCTAssertEqual(starts(engine), startsBefore, "\(phase.name): nothing is started after the cancel")
            XCTAssertEqual(frontend.completions, 1, "\(phase.name): late reports deliver nothing more")
            XCTAssertEqual(driver.phase, .finished, phase.name)
            frontend.release()
        }
    }

    // MARK: - Pause

    func testPauseAtEveryPhaseHoldsTheEndAndResumeCompletesOnce() throws {
        for phase in phases {
            let (driver, engine, frontend) = make()
            try phase.reach(self, driver, engine, frontend)
            if phase.name == "not started" {
                driver.handle(.pause)
                XCTAssertEqual(driver.phase, .paused, phase.name)
                XCTAssertEqual(engine.commands, [], phase.name)
                driver.handle(.resume(request(), output: nil))
                XCTAssertEqual(driver.phase, .ready, "\(phase.name): back to waiting for its queue")
                start(driver)
            } else {
                driver.handle(.pause)
                if phase.isOver {
                    XCTAssertEqual(driver.phase, .finished, "\(phase.name): nothing to pause")
                    frontend.release()
                    continue
                }
                XCTAssertEqual(driver.phase, .paused, phase.name)
                if phase.hasLiveTransfer { XCTAssertEqual(engine.commands.last, .abort(1), "\(phase.name): the transfer stops") }
                let startsWhilePaused = starts(engine)
                playLateReports(driver, engine, frontend)
                XCTAssertEqual(starts(engine), startsWhilePaused, "\(phase.name): late reports start nothing while paused")
                XCTAssertEqual(frontend.completions, 0, "\(phase.name): a paused request has no end")
                XCTAssertEqual(driver.phase, .paused, phase.name)
                driver.handle(.resume(request(), output: nil))
            }
            // The resumed request starts one new hop, which ends it.
            let last = try XCTUnwrap(engine.lastStartedTag, phase.name)
            let transfer = try XCTUnwrap(engine.transfer(tag: last), phase.name)
            _ = engine.head(transfer, status: 200)
            _ = engine.body(transfer, "whole")
            engine.complete(transfer, status: 200)
            XCTAssertEqual(frontend.completions, 1, phase.name)
            XCTAssertNil(frontend.completedOutcome?.error, phase.name)
            XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("whole".utf8), "\(phase.name): only the resumed hop's body")
            frontend.release()
        }
    }

    // MARK: - Suspend

    func testSuspendAtEveryTaskPhaseHoldsEveryHopOutOfCurlUntilResumed() throws {
        // A suspended task's next hop starts suspended, whenever it starts.
        for phase in phases where !phase.isOver && phase.name != "paused mid-body" {
            let (driver, engine, frontend) = make()
            try phase.reach(self, driver, engine, frontend)
            if phase.name == "not started" {
                driver.handle(.suspendTask)
                XCTAssertEqual(driver.taskState, .suspended, "\(phase.name): a task not resumed is suspended already")
                driver.handle(.resumeTask(request(), bodyInMemory: true, retry: nil, budget: nil, admitted: true))
                XCTAssertEqual(engine.commands, [.start(1)], phase.name)
                frontend.release()
                continue
            }
            driver.handle(.suspendTask)
            XCTAssertEqual(driver.taskState, .suspended, phase.name)
            if phase.hasLiveTransfer { XCTAssertEqual(engine.commands.last, .suspend(1, true), phase.name) }
            // The follow-up that was pending is answered while suspended.
            if let question = frontend.redirects.first { driver.handle(.redirectDecided(token: question.token, question.proposed)) }
            if let question = frontend.challenges.first {
                driver.handle(.challengeAnswered(token: question.token, .use(URLCredential(user: "u", password: "p", persistence: .none))))
            }
            if let next = engine.lastStartedTag, next > 1 {
                XCTAssertEqual(Array(engine.commands.suffix(2)), [.suspend(next, true), .start(next)],
                               "\(phase.name): the next hop is held out of curl before it starts")
            }
            driver.handle(.resumeTask(request(), bodyInMemory: true, retry: nil, budget: nil, admitted: true))
            XCTAssertEqual(driver.taskState, .running, phase.name)
            if let live = engine.lastStartedTag, phase.hasLiveTransfer || live > 1 {
                XCTAssertTrue(engine.commands.last == .suspend(live, false) || engine.commands.last == .resume(live, false),
                              "\(phase.name): the live hop is let go: \(engine.commands)")
            }
            driver.handle(.cancelTask(request(), bodyInMemory: true))
            XCTAssertEqual(frontend.completions, 1, phase.name)
            frontend.release()
        }
    }

    // MARK: - Helpers

    /// Every report a request could still receive from an earlier step: the
    /// first hop's body and completion, answers to questions asked before,
    /// a retry timer and a budget timer.
    private func playLateReports(_ driver: RequestDriver, _ engine: FakeEngine, _ frontend: FakeFrontend) {
        if let first = engine.transfer(tag: 1) {
            _ = engine.head(first, status: 200)
            _ = engine.body(first, "late")
            engine.complete(first, status: 200)
        }
        for question in frontend.redirects { driver.handle(.redirectDecided(token: question.token, question.proposed)) }
        for question in frontend.challenges { driver.handle(.challengeAnswered(token: question.token, .use(URLCredential(user: "late", password: "p", persistence: .none)))) }
        // Every question asked so far, answered as a timer would (an answer
        // to a question never asked cannot happen: the machine traps on it).
        let asked = driver.lastToken
        if asked > 0 { for token in UInt64(1)...asked { driver.handle(.retryDue(token: token)) } }
        driver.handle(.budgetSpent(run: 1))
    }

    private func start(_ driver: RequestDriver, retry: TransferStateMachine.RetryPlan? = nil) {
        driver.handle(.start(request(), output: nil, retry: retry, budget: nil, cancelled: false))
    }

    private func starts(_ engine: FakeEngine) -> Int {
        engine.commands.filter { if case .start = $0 { return true }; return false }.count
    }

    /// A retry that waits a minute: the test sees the waiting phase, never the timer.
    private func slowRetry() -> TransferStateMachine.RetryPlan {
        var policy = RetryPolicy()
        policy.maximumAttempts = 3
        policy.baseDelay = 60
        policy.maximumDelay = 60
        policy.jitter = 0
        return TransferStateMachine.RetryPlan(policy: policy, bodyCanBeResent: true)
    }

    private func make() -> (RequestDriver, FakeEngine, FakeFrontend) {
        makeDriverOnFakeEngine()
    }

    private func request() -> URLRequest {
        URLRequest(url: url)
    }
}

private extension FakeEngine {
    /// The tag of the transfer started last.
    var lastStartedTag: UInt64? {
        commands.reversed().lazy.compactMap { if case .start(let tag) = $0 { return tag }; return nil }.first
    }
}
