@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The session layer's value machines without I/O: a task's `state` as read
/// off the transfer machine, the session's task registry and invalidation,
/// the machine's output diversion (`.becomeDownload`), and the activity
/// indicator's debouncing.
final class SessionStateMachineTests: XCTestCase {
    typealias Machine = TransferStateMachine
    private let url = URL(string: "http://127.0.0.1:9/file")!

    // MARK: - Task state

    func testATaskIsSuspendedUntilResumedThenRunningAndSuspendable() {
        var machine = Machine(configuration: .init(consultsCache: false))
        XCTAssertEqual(machine.taskState, .suspended)
        XCTAssertFalse(machine.hasStarted)
        _ = machine.start(URLRequest(url: url), bodyInMemory: true)
        XCTAssertEqual(machine.taskState, .running)
        XCTAssertTrue(machine.hasStarted)
        guard case .suspendTransfer(1, true) = machine.suspend() else { return XCTFail("the running transfer is suspended") }
        XCTAssertEqual(machine.taskState, .suspended)
        guard case .none = machine.suspend() else { return XCTFail("a second suspend does nothing") }
        guard case .suspendTransfer(1, false) = machine.unsuspend() else { return XCTFail("the transfer continues") }
        XCTAssertEqual(machine.taskState, .running)
    }

    func testCancelShowsCancelingUntilTheOutputIsFinalThenCompleted() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(URLRequest(url: url), bodyInMemory: true)
        guard case .abortAndDeliver(1, let outcome) = machine.cancel(URLRequest(url: url)) else { return XCTFail("abort") }
        XCTAssertEqual(machine.taskState, .canceling)
        machine.outputFinished(outcome)
        XCTAssertEqual(machine.taskState, .completed, "completed before the completion handler runs")
        machine.completionFinished()
        XCTAssertEqual(machine.taskState, .completed)
    }

    func testCancelBeforeResumeCompletesWithoutATransfer() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.cancel(URLRequest(url: url))
        XCTAssertEqual(machine.taskState, .canceling)
        guard case .deliver(let outcome) = machine.start(URLRequest(url: url), bodyInMemory: true) else { return XCTFail("delivers") }
        XCTAssertTrue(outcome.isCancellation)
    }

    func testANaturalEndShowsRunningWhileDelivering() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(URLRequest(url: url), bodyInMemory: true)
        let head = ReceivedResponse(url: url, statusCode: 200, statusLine: "HTTP/1.1 200 OK", fields: [])
        _ = machine.headReceived(1, head)
        guard case .deliver = machine.transferCompleted(1, response: head, error: nil) else { return XCTFail("delivers") }
        XCTAssertEqual(machine.taskState, .running)
    }

    func testACancelledTaskKeepsTheHeadOfTheEntityAsItsResponse() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(URLRequest(url: url), bodyInMemory: false)
        let head = ReceivedResponse(url: url, statusCode: 200, statusLine: "HTTP/1.1 200 OK", fields: [("ETag", "\"v1\"")])
        _ = machine.headReceived(1, head)
        guard case .abortAndDeliver(_, let outcome) = machine.cancel(URLRequest(url: url)) else { return XCTFail("abort") }
        XCTAssertEqual(outcome.response?.received?.value(forField: "etag"), "\"v1\"", "resume data needs the validator")
    }

    // MARK: - Diverting the output (.becomeDownload)

    func testDivertingHandsOverTheBodyKeptSoFarAndForwardsTheRest() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(URLRequest(url: url), bodyInMemory: true)
        _ = machine.headReceived(1, ReceivedResponse(url: url, statusCode: 200, statusLine: "HTTP/1.1 200 OK", fields: []))
        let first = Data("abc".utf8)
        first.withUnsafeBytes { _ = machine.bodyReceived(1, $0) }
        XCTAssertEqual(machine.divertOutput(), first)
        let second = Data("def".utf8)
        guard case .forward(let progress) = second.withUnsafeBytes({ machine.bodyReceived(1, $0) }) else {
            return XCTFail("after diverting, the body goes to the writer")
        }
        XCTAssertEqual(progress.total, 6, "progress counts the whole entity")
        XCTAssertNil(machine.divertOutput(), "a second divert has nothing to hand over")
    }

    func testDivertingAfterTheOutcomeChangesNothing() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(URLRequest(url: url), bodyInMemory: true)
        _ = machine.cancel(URLRequest(url: url))
        XCTAssertNil(machine.divertOutput())
    }

    // MARK: - Session registry

    func testInvalidationWithoutTasksBecomesInvalidAtOnce() {
        var registry = SessionRegistry<String>()
        guard case .becameInvalid = registry.invalidate(cancelling: false) else { return XCTFail("invalid at once") }
        XCTAssertEqual(registry.phase, .invalidated)
        guard case .none = registry.invalidate(cancelling: true) else { return XCTFail("a second call does nothing") }
        XCTAssertFalse(registry.add("late", identifier: 9), "no task joins an invalidated session")
    }

    func testInvalidationCancellingHandsOutTheTasksAndEndsWithTheLast() {
        var registry = SessionRegistry<String>()
        XCTAssertTrue(registry.add("b", identifier: 2))
        XCTAssertTrue(registry.add("a", identifier: 1))
        XCTAssertEqual(registry.tasks, ["a", "b"], "creation order")
        guard case .cancel(let tasks) = registry.invalidate(cancelling: true) else { return XCTFail("cancel them") }
        XCTAssertEqual(tasks, ["a", "b"])
        XCTAssertEqual(registry.phase, .invalidating)
        XCTAssertFalse(registry.add("c", identifier: 3), "no new task while invalidating")
        guard case .none = registry.remove(identifier: 1) else { return XCTFail("one left") }
        guard case .becameInvalid = registry.remove(identifier: 2) else { return XCTFail("the last one ends it") }
        guard case .none = registry.remove(identifier: 2) else { return XCTFail("an unknown task changes nothing") }
    }

    func testFinishingInvalidationWaitsForRunningTasks() {
        var registry = SessionRegistry<String>()
        _ = registry.add("a", identifier: 1)
        guard case .none = registry.invalidate(cancelling: false) else { return XCTFail("nothing is cancelled") }
        guard case .becameInvalid = registry.remove(identifier: 1) else { return XCTFail("invalid after the last task") }
    }

    func testReplacingATaskKeepsItRegisteredUnderItsNewIdentifier() {
        var registry = SessionRegistry<String>()
        _ = registry.add("data", identifier: 1)
        registry.replace(identifier: 1, with: "download", newIdentifier: 5)
        XCTAssertEqual(registry.tasks, ["download"])
        _ = registry.invalidate(cancelling: false)
        guard case .none = registry.remove(identifier: 1) else { return XCTFail("the old identifier is gone") }
        guard case .becameInvalid = registry.remove(identifier: 5) else { return XCTFail("the new one ends it") }
    }

    // MARK: - Activity indicator

    typealias Indicator = ActivityIndicatorStateMachine

    func testActivityShowsAfterTheActivationDelayAndHidesAfterTheCompletionDelay() {
        var indicator = Indicator()
        XCTAssertEqual(indicator.activityChanged(count: 1), .startActivationTimer(token: 1))
        XCTAssertEqual(indicator.activityChanged(count: 2), .none, "waiting for the timer")
        XCTAssertEqual(indicator.activationTimerFired(token: 1, activityCount: 2), .setVisible(true))
        XCTAssertEqual(indicator.activityChanged(count: 0), .startCompletionTimer(token: 2))
        XCTAssertEqual(indicator.completionTimerFired(token: 2), .setVisible(false))
        XCTAssertFalse(indicator.isVisible)
    }

    func testShortActivityNeverShows() {
        var indicator = Indicator()
        _ = indicator.activityChanged(count: 1)
        XCTAssertEqual(indicator.activityChanged(count: 0), .none)
        XCTAssertEqual(indicator.activationTimerFired(token: 1, activityCount: 0), .none, "never visible, so no change")
        XCTAssertEqual(indicator.state, .notActive)
    }

    func testActivityResumingBeforeTheCompletionDelayKeepsItVisible() {
        var indicator = Indicator()
        _ = indicator.activityChanged(count: 1)
        _ = indicator.activationTimerFired(token: 1, activityCount: 1)
        _ = indicator.activityChanged(count: 0)
        XCTAssertEqual(indicator.activityChanged(count: 1), .none)
        XCTAssertEqual(indicator.completionTimerFired(token: 2), .none, "a stale timer changes nothing")
        XCTAssertTrue(indicator.isVisible)
    }

    func testDisablingHidesAtOnceAndStaleTimersAreIgnored() {
        var indicator = Indicator()
        _ = indicator.activityChanged(count: 1)
        _ = indicator.activationTimerFired(token: 1, activityCount: 1)
        XCTAssertEqual(indicator.disable(), .setVisible(false))
        XCTAssertEqual(indicator.disable(), .none)
        XCTAssertEqual(indicator.activationTimerFired(token: 1, activityCount: 1), .none)
    }

    // MARK: - Response decision

    private func outcome() -> Machine.Outcome {
        .succeeded(for: url)
    }

    func testNothingIsAskedWhenOnlyAllowCouldComeBack() {
        var decision = ResponseDecision()
        XCTAssertFalse(decision.responseArrived(mustAsk: false))
        XCTAssertNotNil(decision.outcomeFinal(outcome()), "the end is not held")
        guard case .none = decision.decide(.cancel) else { return XCTFail("no question, no answer") }
    }

    func testAnEndBeforeTheAnswerIsParkedAndReleasedByIt() {
        var decision = ResponseDecision()
        XCTAssertTrue(decision.responseArrived(mustAsk: true))
        XCTAssertFalse(decision.responseArrived(mustAsk: true), "asked once")
        XCTAssertNil(decision.outcomeFinal(outcome()), "parked")
        guard case .proceed(let released) = decision.decide(.allow) else { return XCTFail("released") }
        XCTAssertNil(released.error)
        guard case .none = decision.decide(.cancel) else { return XCTFail("the first answer counts") }
    }

    func testALateCancelTurnsAParkedEndIntoACancellation() {
        var decision = ResponseDecision()
        _ = decision.responseArrived(mustAsk: true)
        XCTAssertNil(decision.outcomeFinal(outcome()))
        guard case .proceed(let released) = decision.decide(.cancel) else { return XCTFail("released") }
        XCTAssertEqual(released.error?.code, NSURLErrorCancelled)
        XCTAssertNil(released.memoryBody, "a refused response's body is not delivered")
    }

    func testCancelBeforeTheEndCancelsTheTaskAndCancelsItsEnd() {
        var decision = ResponseDecision()
        _ = decision.responseArrived(mustAsk: true)
        guard case .cancelTask = decision.decide(.cancel) else { return XCTFail("the running task is cancelled") }
        XCTAssertFalse(decision.deliversData)
        XCTAssertEqual(decision.outcomeFinal(outcome())?.error?.code, NSURLErrorCancelled)
    }

    /// (`.becomeDownload`, spelled by its raw value: FoundationNetworking deprecates the name.)
    func testBecomingADownloadCarriesAParkedEndAlong() {
        var decision = ResponseDecision()
        _ = decision.responseArrived(mustAsk: true)
        XCTAssertNil(decision.outcomeFinal(outcome()))
        guard case .becomeDownload = decision.decide(URLSession.ResponseDisposition(rawValue: 2)!) else { return XCTFail("becomes a download") }
        XCTAssertTrue(decision.becameDownload)
        XCTAssertFalse(decision.deliversData)
        XCTAssertNotNil(decision.downloadAnnounced(), "the parked end continues once the download task is announced")
        XCTAssertNotNil(decision.outcomeFinal(outcome()), "nothing is held back after that")
    }

    /// The end that comes after the answer but before the download task was
    /// announced waits for the announcement: the delegate must hear of the
    /// download task before its did-finish-downloading and did-complete calls.
    func testAnEndBeforeTheDownloadIsAnnouncedWaitsForTheAnnouncement() {
        var decision = ResponseDecision()
        _ = decision.responseArrived(mustAsk: true)
        guard case .becomeDownload = decision.decide(URLSession.ResponseDisposition(rawValue: 2)!) else { return XCTFail("becomes a download") }
        XCTAssertNil(decision.outcomeFinal(outcome()), "parked until the did-become call has run")
        XCTAssertNotNil(decision.downloadAnnounced(), "released by the announcement")
    }

    func testAnEndAfterTheAnnouncementContinuesAtOnce() {
        var decision = ResponseDecision()
        _ = decision.responseArrived(mustAsk: true)
        _ = decision.decide(URLSession.ResponseDisposition(rawValue: 2)!)
        XCTAssertNil(decision.downloadAnnounced(), "nothing parked")
        XCTAssertNotNil(decision.outcomeFinal(outcome()))
    }

    func testCancelWhileAskingCountsAsTheAnswer() {
        var decision = ResponseDecision()
        guard case .none = decision.cancelWhileAsking() else { return XCTFail("nothing asked yet") }
        _ = decision.responseArrived(mustAsk: true)
        XCTAssertNil(decision.outcomeFinal(outcome()))
        guard case .proceed(let released) = decision.cancelWhileAsking() else { return XCTFail("released, cancelled") }
        XCTAssertEqual(released.error?.code, NSURLErrorCancelled)
    }
}
