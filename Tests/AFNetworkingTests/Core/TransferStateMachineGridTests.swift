@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Every event in every state of the transfer state machine: each pair either
/// has a transition, is a named race the machine tolerates (and then changes
/// nothing at all), or cannot happen and traps. The tables below are written
/// by hand, not computed by the machine's own rules; one test runs this test
/// binary again to watch an impossible event trap.
final class TransferStateMachineGridTests: XCTestCase {
    typealias Machine = TransferStateMachine
    let url = URL(string: "http://127.0.0.1:9/grid")!

    /// What an event does in a state.
    enum Expect: Equatable {
        case handled
        case tolerated(Machine.Tolerated)
        case traps
    }

    /// One reachable state, built by events, and what its late events do.
    struct Row {
        let name: String
        let machine: Machine
        /// A report from the newest transfer the machine started.
        let newestTransferReport: Expect
        /// The question the state waits for, if any.
        let pending: Machine.Question?
        /// An answer to the newest question when nothing is pending.
        let newestAnswer: Expect
        /// Calls (see `Call`): whether each changes the machine.
        let changes: Set<Call>
    }

    enum Call: String, CaseIterable {
        case start, cancel, pause, resume, suspend, unsuspend, fail
    }

    private static let questions: [Machine.Question] = [.cacheLookup, .redirect, .challenge, .adaptedRequest, .retrierDecision, .retryTimer]
    private static let whileInFlight: Set<Call> = [.cancel, .pause, .suspend, .fail]

    // MARK: - The grid

    /// Reports from transfers and answers to questions, in every state.
    func testEveryLateEventInEveryStateIsHandledToleratedOrImpossible() {
        for row in rows() {
            let machine = row.machine
            let newestTag = machine.nextTag
            check(row, .transferReport(newestTag), expect: row.newestTransferReport)
            check(row, .transferReport(newestTag + 1), expect: .traps, "a transfer never started")
            check(row, .transferReport(0), expect: .traps, "tag 0 is never handed out")
            for question in Self.questions {
                let token = machine.nextToken
                let expect: Expect
                if let pending = row.pending {
                    XCTAssertEqual(machine.pendingQuestion?.token, token, "\(row.name): the pending question is the newest")
                    expect = pending == question ? .handled : .traps
                } else {
                    expect = token == 0 ? .traps : row.newestAnswer
                }
                check(row, .answer(token, question), expect: expect)
                check(row, .answer(token + 1, question), expect: .traps, "a question never asked")
            }
        }
    }

    /// The callers' calls in every state: a call that has no transition
    /// changes nothing (a tolerated `redundantCall`, `afterOutcome` or
    /// `failureBeforeStart`); the others move the machine.
    func testEveryCallInEveryStateEitherMovesTheMachineOrChangesNothing() {
        for row in rows() {
            for call in Call.allCases {
                var machine = row.machine
                let before = String(describing: machine)
                let action = perform(call, on: &machine)
                let changed = String(describing: machine) != before || !isNone(action)
                XCTAssertEqual(changed, row.changes.contains(call), "\(row.name): \(call)")
                if !changed { XCTAssertTrue(isNone(action), "\(row.name): \(call) asks for nothing") }
            }
            // A second suspend, or a resume of what is not suspended: redundant everywhere.
            var suspended = row.machine
            _ = suspended.suspend()
            let before = String(describing: suspended)
            XCTAssertTrue(isNone(suspended.suspend()), row.name)
            XCTAssertEqual(String(describing: suspended), before, "\(row.name): a second suspend")
        }
    }

    /// One impossible event, fired for real in a child process (this test
    /// binary, run for this test alone): the machine traps and names the pair.
    func testAnImpossibleEventTrapsNamingTheEventAndTheState() throws {
        if ProcessInfo.processInfo.environment["AFN_GRID_TRAP"] == "1" {
            var machine = Machine(configuration: .init(consultsCache: false))
            _ = machine.start(URLRequest(url: url), bodyInMemory: true)
            _ = machine.headReceived(7, head(200))
            XCTFail("the machine took a report from a transfer it never started")
            return
        }
        let executable = try XCTUnwrap(Bundle.main.executableURL, "the test binary")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-grid-trap-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: output) }
        XCTAssertTrue(FileManager.default.createFile(atPath: output.path, contents: nil))
        let log = try FileHandle(forWritingTo: output)
        let child = Process()
        // No core file; Swift's backtracer off (it would take seconds to symbolicate).
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", "ulimit -c 0; exec \"$0\" \"$1\"", executable.path,
                           "AFNetworkingTests.TransferStateMachineGridTests/testAnImpossibleEventTrapsNamingTheEventAndTheState"]
        var environment = ProcessInfo.processInfo.environment
        environment["AFN_GRID_TRAP"] = "1"
        environment["SWIFT_BACKTRACE"] = "enable=no"
        child.environment = environment
        child.standardOutput = log
        child.standardError = log
        let exited = DispatchSemaphore(value: 0)
        child.terminationHandler = { _ in exited.signal() }
        try child.run()
        if exited.wait(timeout: .now() + 60) == .timedOut {
            child.terminate()
            XCTFail("the child did not end within 60 s")
            return
        }
        try log.close()
        let text = try String(contentsOf: output, encoding: .utf8)
        XCTAssertEqual(child.terminationReason, .uncaughtSignal, "it traps rather than exits: \(text)")
        XCTAssertTrue(text.contains("TransferStateMachine: a report from transfer 7, which the machine never started (last tag 1), in state running"),
                      text)
    }

    // MARK: - Checking one pair

    private func check(_ row: Row, _ event: Machine.LateEvent, expect: Expect, _ note: String = "",
                       file: StaticString = #filePath, line: UInt = #line) {
        let context = "\(row.name): \(event) \(note)"
        let disposition = row.machine.disposition(of: event)
        switch (expect, disposition) {
        case (.handled, .handled):
            var machine = row.machine
            let before = String(describing: machine)
            fire(event, on: &machine)
            XCTAssertNotEqual(String(describing: machine), before, "\(context): handled, so it moves the machine", file: file, line: line)
        case (.tolerated(let expected), .tolerated(let reason)):
            XCTAssertEqual(reason, expected, context, file: file, line: line)
            var machine = row.machine
            let before = String(describing: machine)
            fire(event, on: &machine)
            XCTAssertEqual(String(describing: machine), before, "\(context): tolerated, so nothing changes", file: file, line: line)
        case (.traps, .impossible(let why)):
            XCTAssertTrue(why.contains("in state \(row.machine.stateName)"), "\(context): the trap names the state: \(why)", file: file, line: line)
        default:
            XCTFail("\(context): expected \(expect), the machine says \(disposition)", file: file, line: line)
        }
    }

    /// Fires `event` through the machine's real event functions (every kind of report for a transfer report).
    private func fire(_ event: Machine.LateEvent, on machine: inout Machine) {
        switch event {
        case .transferReport(let tag):
            if case .handled = machine.disposition(of: event) {
                _ = machine.headReceived(tag, head(200))
                return
            }
            let action = machine.headReceived(tag, head(200))
            guard case .ignore = action else { return XCTFail("a late head is ignored, got \(action)") }
            let refused = Data("late".utf8).withUnsafeBytes { machine.bodyReceived(tag, $0) }
            guard case .refuse = refused else { return XCTFail("a late piece of body is refused, got \(refused)") }
            XCTAssertTrue(isNone(machine.transferCompleted(tag, response: head(200), error: nil)))
            XCTAssertTrue(isNone(machine.transferCouldNotStart(tag, error: NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL))))
        case .answer(let token, let question):
            let disposition = machine.disposition(of: event)
            let action: Machine.Action
            switch question {
            case .cacheLookup: action = machine.cacheLookupFinished(token: token, .load)
            case .redirect: action = machine.redirectDecided(token: token, nil)
            case .challenge: action = machine.challengeAnswered(token: token, .continueWithoutCredential)
            case .adaptedRequest: action = machine.adapted(token: token, .success(URLRequest(url: url)))
            case .retrierDecision: action = machine.retryDecided(token: token, .doNotRetry(nil))
            case .retryTimer: action = machine.retryDue(token: token)
            }
            if case .tolerated = disposition { XCTAssertTrue(isNone(action), "a tolerated answer asks for nothing") }
        }
    }

    private func perform(_ call: Call, on machine: inout Machine) -> Machine.Action {
        switch call {
        case .start: return machine.start(URLRequest(url: url), bodyInMemory: true)
        case .cancel: return machine.cancel(URLRequest(url: url))
        case .pause: return machine.pause()
        case .resume: return machine.resume(with: URLRequest(url: url), bodyInMemory: true)
        case .suspend: return machine.suspend()
        case .unsuspend: return machine.unsuspend()
        case .fail: return machine.fail(NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotWriteToFile))
        }
    }

    // MARK: - The states, each reached by events

    private func rows() -> [Row] {
        let request = URLRequest(url: url)
        let noCache = Machine.Configuration(consultsCache: false)
        var rows: [Row] = []
        func add(_ name: String, _ machine: Machine, report: Expect, pending: Machine.Question? = nil, answer: Expect = .traps,
                 changes: Set<Call>) {
            XCTAssertEqual(machine.stateName, name, "the row is built into the state it names")
            rows.append(Row(name: name, machine: machine, newestTransferReport: report, pending: pending, newestAnswer: answer,
                            changes: changes))
        }

        let waiting = Machine(configuration: noCache)
        add("waiting", waiting, report: .traps, changes: [.start, .cancel, .pause, .suspend])

        var cancelledBeforeStart = waiting
        _ = cancelledBeforeStart.cancel(request)
        add("waiting(cancelled)", cancelledBeforeStart, report: .traps, changes: [.start, .suspend])

        var pausedBeforeStart = waiting
        _ = pausedBeforeStart.pause()
        add("pausedBeforeStart", pausedBeforeStart, report: .traps, changes: [.start, .cancel, .resume, .suspend])

        var startedWhilePaused = pausedBeforeStart
        _ = startedWhilePaused.start(request, bodyInMemory: true)
        // A second start changes nothing: the queue already counts it started.
        add("pausedBeforeStart(started)", startedWhilePaused, report: .traps, changes: [.cancel, .resume, .suspend])

        var lookingUp = Machine()
        _ = lookingUp.start(request, bodyInMemory: true)
        add("lookingUpCache", lookingUp, report: .traps, pending: .cacheLookup, changes: Self.whileInFlight)

        var running = waiting
        _ = running.start(request, bodyInMemory: true)
        add("running", running, report: .handled, answer: .traps, changes: Self.whileInFlight)

        var lookedUp = lookingUp
        _ = lookedUp.cacheLookupFinished(token: lookedUp.nextToken, .load)
        // The lookup's answer was taken: answered again, it is withdrawn.
        add("running", lookedUp, report: .handled, answer: .tolerated(.withdrawnQuestion), changes: Self.whileInFlight)

        var redirected = running
        let found = head(302, fields: [("Location", "/next")], redirectTo: URL(string: "http://127.0.0.1:9/next"))
        _ = redirected.headReceived(1, found)
        _ = redirected.transferCompleted(1, response: found, error: nil)
        // The transfer that asked ended: a report from it cannot come.
        add("awaitingFollowUp", redirected, report: .traps, pending: .redirect, changes: Self.whileInFlight)

        var challenged = running
        let unauthorized = head(401, fields: [("WWW-Authenticate", "Basic realm=\"grid\"")])
        _ = challenged.headReceived(1, unauthorized)
        _ = challenged.transferCompleted(1, response: unauthorized, error: nil)
        add("awaitingFollowUp", challenged, report: .traps, pending: .challenge, changes: Self.whileInFlight)

        var paused = running
        _ = paused.pause()
        // The pause aborted transfer 1; its reports on their way are tolerated.
        add("paused", paused, report: .tolerated(.supersededTransfer), changes: [.cancel, .resume, .suspend, .fail])

        var pausedAtRedirect = redirected
        _ = pausedAtRedirect.pause()
        add("paused", pausedAtRedirect, report: .traps, answer: .tolerated(.withdrawnQuestion), changes: [.cancel, .resume, .suspend, .fail])

        var retrying = Machine(configuration: noCache)
        _ = retrying.start(request, bodyInMemory: true, retry: retryPlan())
        _ = retrying.headReceived(1, head(503))
        _ = retrying.transferCompleted(1, response: head(503), error: nil)
        add("waitingToRetry", retrying, report: .traps, pending: .retryTimer, changes: Self.whileInFlight)

        let interception = Machine.Interception(original: request)
        var adapting = Machine(configuration: noCache)
        _ = adapting.start(request, bodyInMemory: true, interception: interception)
        add("adapting", adapting, report: .traps, pending: .adaptedRequest, changes: Self.whileInFlight)

        var deciding = adapting
        _ = deciding.adapted(token: deciding.nextToken, .success(request))
        _ = deciding.transferCompleted(1, response: nil, error: NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost))
        add("decidingRetry", deciding, report: .traps, pending: .retrierDecision, changes: Self.whileInFlight)

        var cancelledMidTransfer = running
        _ = cancelledMidTransfer.cancel(request)
        // The cancel aborted transfer 1: its reports are tolerated.
        add("delivering", cancelledMidTransfer, report: .tolerated(.supersededTransfer), changes: [.suspend])

        var delivering = running
        _ = delivering.headReceived(1, head(200))
        guard case .deliver(let outcome) = delivering.transferCompleted(1, response: head(200), error: nil) else {
            XCTFail("a 200 is delivered")
            return rows
        }
        add("delivering", delivering, report: .traps, changes: [.suspend])

        var completing = delivering
        completing.outputFinished(outcome)
        add("completing", completing, report: .traps, changes: [.suspend])

        var finished = completing
        finished.completionFinished()
        add("finished", finished, report: .traps, changes: [.suspend])

        var cancelledWhileAsking = redirected
        _ = cancelledWhileAsking.cancel(request)
        // The redirect question was withdrawn by the cancel.
        add("delivering", cancelledWhileAsking, report: .traps, answer: .tolerated(.withdrawnQuestion), changes: [.suspend])

        var finishedAfterAnswer = lookedUp
        _ = finishedAfterAnswer.headReceived(1, head(200))
        if case .deliver(let answered) = finishedAfterAnswer.transferCompleted(1, response: head(200), error: nil) {
            finishedAfterAnswer.outputFinished(answered)
            finishedAfterAnswer.completionFinished()
        }
        add("finished", finishedAfterAnswer, report: .traps, answer: .tolerated(.withdrawnQuestion), changes: [.suspend])
        return rows
    }

    // MARK: - Helpers

    private func head(_ status: Int, fields: [(name: String, value: String)] = [], redirectTo: URL? = nil) -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: status, statusLine: "HTTP/1.1 \(status) X", fields: fields, redirectURL: redirectTo)
    }

    private func retryPlan() -> Machine.RetryPlan {
        var policy = RetryPolicy()
        policy.maximumAttempts = 3
        return Machine.RetryPlan(policy: policy, bodyCanBeResent: true)
    }

    private func isNone(_ action: Machine.Action) -> Bool {
        if case .none = action { return true }
        return false
    }
}
