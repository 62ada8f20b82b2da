@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

// The fake engine and front-end every driver test shares (RequestDriverTests,
// the interceptor, phase and task-output tests, the event grid): a driver runs
// between them with no socket and no curl transfer.

extension XCTestCase {
    /// A driver (no cache) between a `FakeFrontend` and a `FakeEngine`; the
    /// front-end lets go of a pending expectation when the test ends.
    func makeDriverOnFakeEngine(divertible: Bool = false, keepsQueuedBodyOnCancel: Bool = false) -> (RequestDriver, FakeEngine, FakeFrontend) {
        let engine = FakeEngine()
        var configuration = TransferStateMachine.Configuration()
        configuration.consultsCache = false
        let driver = RequestDriver(configuration: configuration, engine: engine)
        let frontend = FakeFrontend(driver: driver, divertible: divertible, keepsQueuedBodyOnCancel: keepsQueuedBodyOnCancel)
        driver.attach(frontend)
        addTeardownBlock { [frontend] in frontend.release() }
        return (driver, engine, frontend)
    }
}

extension TransferStateMachine.Outcome {
    /// A plain 200 for `url`, as a machine delivers it.
    static func succeeded(for url: URL) -> Self {
        var machine = TransferStateMachine(configuration: .init(consultsCache: false))
        _ = machine.start(URLRequest(url: url), bodyInMemory: true)
        let head = ReceivedResponse(url: url, statusCode: 200, statusLine: "HTTP/1.1 200 OK", fields: [])
        _ = machine.headReceived(1, head)
        guard case .deliver(let outcome) = machine.transferCompleted(1, response: head, error: nil) else {
            preconditionFailure("a plain 200 is delivered")
        }
        return outcome
    }
}

/// An engine that runs nothing: it records the driver's commands and lets
/// the test deliver a transfer's reports as the network thread would.
final class FakeEngine: TransferEngine, @unchecked Sendable {
    // @unchecked: every field is behind a LockedState.
    enum Command: Equatable {
        case start(UInt64)
        case abort(UInt64)
        case suspend(UInt64, Bool)
        case resume(UInt64, Bool)
        case resumeReceiving(UInt64)
    }

    private let state = LockedState<(commands: [Command], transfers: [UInt64: Transfer], suspended: Set<UInt64>)>(([], [:], []))
    private let reporter = LockedState<pthread_t?>(nil)
    /// Transfers whose completion was reported: as the real `Transfer` lets
    /// go of its delegate before it reports the end, nothing of theirs is
    /// reported again (the machine traps on a report after the end).
    private let ended = LockedState<Set<UInt64>>([])
    private let changed = NSCondition()

    var commands: [Command] { state.withLock { $0.commands } }

    var isReportingThread: Bool {
        reporter.withLock { thread in thread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    func start(_ transfer: Transfer) { record(.start(transfer.tag), transfer) }
    func abort(_ transfer: Transfer, reason: AbortReason) { record(.abort(transfer.tag)) }
    func resumeReceiving(_ transfer: Transfer) { record(.resumeReceiving(transfer.tag)) }
    func setSuspended(_ transfer: Transfer, _ suspended: Bool) {
        let wasSuspended = state.withLock { $0.suspended.contains(transfer.tag) }
        state.withLock { if suspended { $0.suspended.insert(transfer.tag) } else { $0.suspended.remove(transfer.tag) } }
        record(suspended || !wasSuspended ? .suspend(transfer.tag, suspended) : .resume(transfer.tag, false))
    }

    private func record(_ command: Command, _ transfer: Transfer? = nil) {
        changed.lock()
        state.withLock { state in
            state.commands.append(command)
            if let transfer { state.transfers[transfer.tag] = transfer }
        }
        changed.broadcast()
        changed.unlock()
    }

    func transfer(tag: UInt64) -> Transfer? { state.withLock { $0.transfers[tag] } }

    /// Waits (bounded) until `command` was recorded.
    func waitForCommand(_ command: Command, timeout: TimeInterval) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        changed.lock()
        defer { changed.unlock() }
        while !commands.contains(command) {
            guard changed.wait(until: deadline) else { return commands.contains(command) }
        }
        return true
    }

    // Reports, delivered as the engine's thread would.

    /// Runs `body` as if on the engine's thread.
    func asEngineThread(_ body: () -> Void) { reporting(body) }

    private func reporting<T>(_ body: () -> T) -> T {
        reporter.withLock { $0 = pthread_self() }
        defer { reporter.withLock { $0 = nil } }
        return body()
    }

    func head(_ transfer: Transfer, status: Int, fields: [(name: String, value: String)] = []) -> NSError? {
        let head = ReceivedResponse(url: transfer.options.request.url!, statusCode: status, statusLine: "HTTP/1.1 \(status) X", fields: fields)
        guard !hasEnded(transfer) else { return nil }
        return reporting { transfer.delegate?.transfer(transfer, didReceiveHead: head) }
    }

    func body(_ transfer: Transfer, _ text: String) -> BodyDisposition? {
        let data = Data(text.utf8)
        guard !hasEnded(transfer) else { return nil }
        return reporting { data.withUnsafeBytes { transfer.delegate?.transfer(transfer, didReceiveBodyBytes: $0) } }
    }

    func complete(_ transfer: Transfer, status: Int, fields: [(name: String, value: String)] = [], redirectTo: URL? = nil) {
        let head = ReceivedResponse(url: transfer.options.request.url!, statusCode: status, statusLine: "HTTP/1.1 \(status) X",
                                    fields: fields, redirectURL: redirectTo)
        guard ended.withLock({ $0.insert(transfer.tag).inserted }) else { return }
        reporting {
            // The delegate holds the transfer's owner.
            transfer.delegate?.transfer(transfer, didCompleteWithResponse: head, error: nil)
        }
    }

    private func hasEnded(_ transfer: Transfer) -> Bool { ended.withLock { $0.contains(transfer.tag) } }
}

extension BodyDisposition {
    var isAccepted: Bool {
        if case .accepted = self { return true }
        return false
    }

    var isAbort: Bool {
        if case .abort = self { return true }
        return false
    }
}

/// A front-end that records what the driver tells it and ends completion
/// work at once.
final class FakeFrontend: RequestFrontend, @unchecked Sendable {
    // @unchecked: every mutable field is behind a LockedState.
    private let record = LockedState<Record>(Record())
    private weak var driver: RequestDriver?
    let outputMayBeDiverted: Bool
    private let announcing = LockedState((now: 0, most: 0, changes: [PhaseChange](), delay: 0.0, prepared: [Bool]()))
    private let proxySetting = LockedState<Result<ProxyConfiguration, NSError>?>(nil)

    struct Record {
        var phases: [TransferStateMachine.Phase] = []
        var redirects: [TransferStateMachine.RedirectQuestion] = []
        var challenges: [TransferStateMachine.ChallengeQuestion] = []
        var progress: [TransferStateMachine.Progress] = []
        var completions = 0
        var outcome: TransferStateMachine.Outcome?
        var completion: XCTestExpectation?
    }

    /// As a download task: bytes queued for the writer when the request is
    /// cancelled are still written (its resume data counts them).
    let keepsQueuedBodyOnCancel: Bool
    var dropsQueuedBodyOnCancel: Bool { !keepsQueuedBodyOnCancel }

    init(driver: RequestDriver, divertible: Bool, keepsQueuedBodyOnCancel: Bool = false) {
        self.driver = driver
        outputMayBeDiverted = divertible
        self.keepsQueuedBodyOnCancel = keepsQueuedBodyOnCancel
    }

    var proxies: Result<ProxyConfiguration, NSError>? {
        get { proxySetting.withLock { $0 } }
        set { proxySetting.withLock { $0 = newValue } }
    }
    var phases: [TransferStateMachine.Phase] { record.withLock { $0.phases } }
    var redirects: [TransferStateMachine.RedirectQuestion] { record.withLock { $0.redirects } }
    var challenges: [TransferStateMachine.ChallengeQuestion] { record.withLock { $0.challenges } }
    var progress: [TransferStateMachine.Progress] { record.withLock { $0.progress } }
    var completions: Int { record.withLock { $0.completions } }
    var completedOutcome: TransferStateMachine.Outcome? { record.withLock { $0.outcome } }

    func expectCompletion(_ test: XCTestCase) -> XCTestExpectation {
        let expectation = test.expectation(description: "completion")
        let already = record.withLock { record -> Bool in
            record.completion = expectation
            return record.completions > 0
        }
        if already { expectation.fulfill() }
        return expectation
    }

    func release() {
        record.withLock { $0.completion = nil }
    }

    func transferEnvironment(for url: URL?) -> TransferEnvironment {
        var environment = TransferEnvironment()
        environment.cookieStorage = nil
        environment.credentialStorage = nil
        environment.cache = nil
        environment.proxies = proxies
        return environment
    }

    func prepareRequest(_ request: URLRequest, consumedBodyStream: Bool,
                        ready: @escaping @Sendable (Result<URLRequest, NSError>) -> Void) {
        let onEngineThread = driver?.engine.isReportingThread ?? false
        announcing.withLock { $0.prepared.append(onEngineThread) }
        ready(.success(request))
    }

    var announceDelay: TimeInterval {
        get { announcing.withLock { $0.delay } }
        set { announcing.withLock { $0.delay = newValue } }
    }
    var mostAnnouncingAtOnce: Int { announcing.withLock { $0.most } }
    var changes: [PhaseChange] { announcing.withLock { $0.changes } }
    var preparedOnEngineThread: [Bool] { announcing.withLock { $0.prepared } }

    func announce(_ change: PhaseChange) {
        let delay = announcing.withLock { state -> TimeInterval in
            state.now += 1
            state.most = max(state.most, state.now)
            state.changes.append(change)
            return state.delay
        }
        if delay > 0 { Thread.sleep(forTimeInterval: delay) }
        announcing.withLock { $0.now -= 1 }
        record.withLock { $0.phases.append(change.after) }
    }
    func askRedirect(_ question: TransferStateMachine.RedirectQuestion) { record.withLock { $0.redirects.append(question) } }
    func askChallenge(_ question: TransferStateMachine.ChallengeQuestion) { record.withLock { $0.challenges.append(question) } }

    func runCompletion(_ outcome: TransferStateMachine.Outcome) {
        let expectation = record.withLock { record -> XCTestExpectation? in
            record.completions += 1
            record.outcome = outcome
            return record.completion
        }
        driver?.handle(.completionFinished)
        expectation?.fulfill()
    }

    func didReceiveHead(_ response: ReceivedResponse, route: TransferStateMachine.BodyRoute, writer: ResponseBodyWriter?) {}
    func didReceiveBody(_ bytes: UnsafeRawBufferPointer, progress: TransferStateMachine.Progress, writer: ResponseBodyWriter?) {
        record.withLock { $0.progress.append(progress) }
    }
    func didSendBody(bytes: Int, total: Int64, expected: Int64) {}
    func outputDidClose(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome { outcome }
    var activityLogger: Logger? { nil }
}
