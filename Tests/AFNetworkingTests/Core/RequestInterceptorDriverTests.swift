@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The request interceptor inside the request driver, against the fake engine
/// (no socket): adapt before every attempt, the retrier's decisions, and
/// cancels while the interceptor has not answered. The test answers the
/// interceptor's parked questions itself, so every step is in its hands.
final class RequestInterceptorDriverTests: XCTestCase {
    let url = URL(string: "http://127.0.0.1:9/data")!

    func testTheFirstAttemptIsAdaptedBeforeAnyTransferIsBuilt() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        XCTAssertEqual(engine.commands, [], "nothing is sent before the adapter answered")
        XCTAssertEqual(driver.phase, .executing)
        let adapt = try XCTUnwrap(interceptor.waitForAdapts(1))
        adapt.completion(.success(Self.bearer(adapt.request, "good")))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        XCTAssertEqual(transfer.options.request.value(forHTTPHeaderField: "Authorization"), "Bearer good")
        _ = engine.head(transfer, status: 200)
        _ = engine.body(transfer, "ok")
        engine.complete(transfer, status: 200)
        XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("ok".utf8))
        XCTAssertEqual(interceptor.retries.count, 0, "a success is not offered to the retrier")
        adapt.completion(.success(adapt.request))
        XCTAssertEqual(engine.commands, [.start(1)], "a second answer to the same question changes nothing")
    }

    func testAnAdaptErrorFailsTheRequestWithItAndSendsNothing() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.failure(NSError(domain: "TokenStore", code: 7)))
        XCTAssertEqual(engine.commands, [])
        XCTAssertEqual(frontend.completedOutcome?.error?.domain, "TokenStore")
        XCTAssertEqual(frontend.completedOutcome?.error?.code, 7)
        XCTAssertEqual(frontend.completions, 1)
    }

    func testA401IsOfferedToTheRetrierAndTheRetryIsAdaptedAgainWithTheNewToken() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        let first = try XCTUnwrap(interceptor.waitForAdapts(1))
        first.completion(.success(Self.bearer(first.request, "stale")))
        let attempt1 = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(attempt1, status: 401)
        _ = engine.body(attempt1, "denied")
        engine.complete(attempt1, status: 401)
        let question = try XCTUnwrap(interceptor.waitForRetries(1))
        XCTAssertEqual(question.response?.statusCode, 401)
        XCTAssertEqual(question.retryCount, 0)
        XCTAssertEqual(question.request.value(forHTTPHeaderField: "Authorization"), "Bearer stale", "the attempt as sent")
        XCTAssertEqual((question.error as NSError).domain, AFURLResponseSerializationErrorDomain)
        XCTAssertNil(frontend.completedOutcome, "nothing is delivered while the retrier decides")
        question.completion(.retry)
        let second = try XCTUnwrap(interceptor.waitForAdapts(2))
        XCTAssertNil(second.request.value(forHTTPHeaderField: "Authorization"), "each attempt adapts the caller's request")
        second.completion(.success(Self.bearer(second.request, "fresh")))
        XCTAssertTrue(engine.waitForCommand(.start(2), timeout: 10))
        let attempt2 = try XCTUnwrap(engine.transfer(tag: 2))
        XCTAssertEqual(attempt2.options.request.value(forHTTPHeaderField: "Authorization"), "Bearer fresh")
        _ = engine.head(attempt2, status: 200)
        _ = engine.body(attempt2, "ok")
        let done = frontend.expectCompletion(self)
        engine.complete(attempt2, status: 200)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("ok".utf8), "the 401's body is discarded")
        XCTAssertEqual(frontend.completions, 1)
    }

    func testRetryWithDelayWaitsOnTheRetryTimer() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        engine.complete(try XCTUnwrap(engine.transfer(tag: 1)), status: 503)
        let started = Date()
        try XCTUnwrap(interceptor.waitForRetries(1)).completion(.retryWithDelay(0.3))
        XCTAssertTrue(driver.isWaitingToRetry)
        let second = try XCTUnwrap(interceptor.waitForAdapts(2), "the timer adapts the next attempt")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.25)
        second.completion(.success(second.request))
        XCTAssertTrue(engine.waitForCommand(.start(2), timeout: 10))
        let done = frontend.expectCompletion(self)
        engine.complete(try XCTUnwrap(engine.transfer(tag: 2)), status: 200)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 200)
    }

    func testAnEndlessDelayIsNoRetry() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        engine.complete(try XCTUnwrap(engine.transfer(tag: 1)), status: 503)
        let done = frontend.expectCompletion(self)
        try XCTUnwrap(interceptor.waitForRetries(1)).completion(.retryWithDelay(.infinity))
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 503)
        XCTAssertFalse(driver.isWaitingToRetry)
    }

    func testDoNotRetryDeliversTheFailedResponseWithItsBody() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 500)
        _ = engine.body(transfer, "boom")
        engine.complete(transfer, status: 500)
        let done = frontend.expectCompletion(self)
        try XCTUnwrap(interceptor.waitForRetries(1)).completion(.doNotRetry)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 500)
        XCTAssertNil(frontend.completedOutcome?.error, "the serializer decides what a 500 means")
        XCTAssertEqual(frontend.completedOutcome?.memoryBody, Data("boom".utf8))
    }

    func testDoNotRetryWithErrorDeliversTheFailedAttemptWithThatError() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        _ = engine.head(transfer, status: 401)
        engine.complete(transfer, status: 401)
        let done = frontend.expectCompletion(self)
        try XCTUnwrap(interceptor.waitForRetries(1)).completion(.doNotRetryWithError(NSError(domain: "Login", code: 3)))
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.error?.domain, "Login")
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 401)
        XCTAssertEqual(engine.commands, [.start(1)])
    }

    func testATransportErrorIsOfferedToTheRetrier() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        engine.fail(try XCTUnwrap(engine.transfer(tag: 1)), code: NSURLErrorNetworkConnectionLost)
        let question = try XCTUnwrap(interceptor.waitForRetries(1))
        XCTAssertNil(question.response)
        XCTAssertEqual((question.error as NSError).code, NSURLErrorNetworkConnectionLost)
        question.completion(.retry)
        try XCTUnwrap(interceptor.waitForAdapts(2)).completion(.success(URLRequest(url: url)))
        XCTAssertTrue(engine.waitForCommand(.start(2), timeout: 10))
        let done = frontend.expectCompletion(self)
        engine.complete(try XCTUnwrap(engine.transfer(tag: 2)), status: 200)
        wait(for: [done], timeout: 10)
        XCTAssertNil(frontend.completedOutcome?.error)
    }

    func testARetryPolicyIsConsultedBeforeTheRetrier() throws {
        let (driver, engine, frontend, interceptor) = make()
        var policy = RetryPolicy()
        policy.maximumAttempts = 2
        policy.baseDelay = 0.01
        policy.jitter = 0
        let retry = TransferStateMachine.RetryPlan(policy: policy, bodyCanBeResent: true)
        driver.handle(.start(URLRequest(url: url), output: nil, retry: retry, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        engine.complete(try XCTUnwrap(engine.transfer(tag: 1)), status: 503)
        try XCTUnwrap(interceptor.waitForAdapts(2), "the policy's retry is adapted too").completion(.success(URLRequest(url: url)))
        XCTAssertTrue(engine.waitForCommand(.start(2), timeout: 10))
        XCTAssertEqual(interceptor.retries.count, 0, "the policy retried: the retrier was not asked")
        engine.complete(try XCTUnwrap(engine.transfer(tag: 2)), status: 503)
        let question = try XCTUnwrap(interceptor.waitForRetries(1), "the policy is spent: the retrier is asked")
        XCTAssertEqual(question.retryCount, 1, "the retries made so far, the policy's included (API.md)")
        let done = frontend.expectCompletion(self)
        question.completion(.doNotRetry)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 503)
    }

    func testAStatusTheSerializerRejectsIsOfferedAndOneItAcceptsIsNot() throws {
        let (driver, engine, frontend, interceptor) = make()
        let narrow = InterceptionPlan(interceptor: interceptor, serializerAcceptableStatusCodes: IndexSet(integer: 200))
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: narrow))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        engine.complete(try XCTUnwrap(engine.transfer(tag: 1)), status: 204)
        let done = frontend.expectCompletion(self)
        try XCTUnwrap(interceptor.waitForRetries(1), "204 is not among the serializer's statuses").completion(.doNotRetry)
        wait(for: [done], timeout: 10)

        let (other, otherEngine, otherFrontend, otherInterceptor) = make()
        other.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(otherInterceptor)))
        try XCTUnwrap(otherInterceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        otherEngine.complete(try XCTUnwrap(otherEngine.transfer(tag: 1)), status: 204)
        XCTAssertEqual(otherFrontend.completedOutcome?.statusCode, 204)
        XCTAssertEqual(otherInterceptor.retries.count, 0)
    }

    // MARK: - Cancel while the interceptor has not answered

    func testCancelWhileAdaptingEndsAtOnceAndALateAnswerSendsNothing() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        let adapt = try XCTUnwrap(interceptor.waitForAdapts(1))
        driver.handle(.cancel(URLRequest(url: url)))
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled, "ended without waiting for the adapter")
        adapt.completion(.success(adapt.request))
        XCTAssertEqual(engine.commands, [])
        XCTAssertEqual(frontend.completions, 1)
    }

    func testCancelWhileTheRetrierDecidesEndsAtOnceAndALateRetrySendsNothing() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        engine.complete(try XCTUnwrap(engine.transfer(tag: 1)), status: 401)
        let question = try XCTUnwrap(interceptor.waitForRetries(1))
        // The thread that asked the retrier may still be draining: the end can run there.
        let done = frontend.expectCompletion(self)
        driver.handle(.cancel(URLRequest(url: url)))
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
        question.completion(.retry)
        XCTAssertEqual(interceptor.adapts.count, 1, "a late retry adapts nothing")
        XCTAssertEqual(engine.commands, [.start(1)])
        XCTAssertEqual(frontend.completions, 1)
    }

    func testCancelDuringARetrierDelaySendsNothingMore() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        try XCTUnwrap(interceptor.waitForAdapts(1)).completion(.success(URLRequest(url: url)))
        engine.complete(try XCTUnwrap(engine.transfer(tag: 1)), status: 503)
        try XCTUnwrap(interceptor.waitForRetries(1)).completion(.retryWithDelay(0.3))
        let done = frontend.expectCompletion(self)
        driver.handle(.cancel(URLRequest(url: url)))
        wait(for: [done], timeout: 10)
        XCTAssertEqual(frontend.completedOutcome?.error?.code, NSURLErrorCancelled)
        XCTAssertNil(interceptor.waitForAdapts(2, timeout: 0.8), "the cancelled timer adapts nothing")
        XCTAssertEqual(engine.commands, [.start(1)])
    }

    func testAnOperationPausedWhileAdaptingIgnoresTheLateAnswerAndAdaptsAgainWhenResumed() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.start(URLRequest(url: url), output: nil, retry: nil, budget: nil, cancelled: false, interception: plan(interceptor)))
        let first = try XCTUnwrap(interceptor.waitForAdapts(1))
        driver.handle(.pause)
        XCTAssertEqual(driver.phase, .paused)
        first.completion(.success(Self.bearer(first.request, "late")))
        XCTAssertEqual(engine.commands, [], "an answer for the paused attempt sends nothing")
        driver.handle(.resume(URLRequest(url: url), output: nil))
        let second = try XCTUnwrap(interceptor.waitForAdapts(2))
        second.completion(.success(Self.bearer(second.request, "good")))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        XCTAssertEqual(transfer.options.request.value(forHTTPHeaderField: "Authorization"), "Bearer good")
        engine.complete(transfer, status: 200)
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 200)
    }

    func testASessionTaskIsAdaptedWhenResumed() throws {
        let (driver, engine, frontend, interceptor) = make()
        driver.handle(.resumeTask(URLRequest(url: url), bodyInMemory: true, retry: nil, budget: nil, admitted: true,
                                  interception: plan(interceptor)))
        XCTAssertEqual(driver.taskState, .running)
        let adapt = try XCTUnwrap(interceptor.waitForAdapts(1))
        adapt.completion(.success(Self.bearer(adapt.request, "good")))
        let transfer = try XCTUnwrap(engine.transfer(tag: 1))
        XCTAssertEqual(transfer.options.request.value(forHTTPHeaderField: "Authorization"), "Bearer good")
        engine.complete(transfer, status: 200)
        XCTAssertEqual(frontend.completedOutcome?.statusCode, 200)
    }

    // MARK: - Helpers

    private func make() -> (RequestDriver, FakeEngine, FakeFrontend, ParkingInterceptor) {
        let (driver, engine, frontend) = makeDriverOnFakeEngine()
        return (driver, engine, frontend, ParkingInterceptor())
    }

    private func plan(_ interceptor: ParkingInterceptor) -> InterceptionPlan {
        InterceptionPlan(interceptor: interceptor, serializerAcceptableStatusCodes: nil)
    }

    static func bearer(_ request: URLRequest, _ token: String) -> URLRequest {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }
}

/// An interceptor that keeps every question for the test to answer.
final class ParkingInterceptor: RequestInterceptor {
    struct Adapt: Sendable {
        let request: URLRequest
        let completion: @Sendable (Result<URLRequest, Error>) -> Void
    }

    struct Retry: Sendable {
        let request: URLRequest
        let response: HTTPURLResponse?
        let error: Error
        let retryCount: Int
        let completion: @Sendable (RetryResult) -> Void
    }

    private let parked = LockedState<(adapts: [Adapt], retries: [Retry])>(([], []))
    private let changed = NSCondition()

    var adapts: [Adapt] { parked.withLock { $0.adapts } }
    var retries: [Retry] { parked.withLock { $0.retries } }

    func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        record { $0.adapts.append(Adapt(request: urlRequest, completion: completion)) }
    }

    func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
               completion: @escaping @Sendable (RetryResult) -> Void) {
        record { $0.retries.append(Retry(request: request, response: response, error: error, retryCount: retryCount, completion: completion)) }
    }

    private func record(_ change: (inout (adapts: [Adapt], retries: [Retry])) -> Void) {
        changed.lock()
        parked.withLock { change(&$0) }
        changed.broadcast()
        changed.unlock()
    }

    /// The `count`th adapt question, waiting (bounded) for it: the driver
    /// asks from another thread after a report on the engine's thread or a timer.
    func waitForAdapts(_ count: Int, timeout: TimeInterval = 10) -> Adapt? {
        waitFor(timeout) { $0.adapts.count >= count ? $0.adapts[count - 1] : nil }
    }

    func waitForRetries(_ count: Int, timeout: TimeInterval = 10) -> Retry? {
        waitFor(timeout) { $0.retries.count >= count ? $0.retries[count - 1] : nil }
    }

    private func waitFor<T>(_ timeout: TimeInterval, _ found: ((adapts: [Adapt], retries: [Retry])) -> T?) -> T? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        changed.lock()
        defer { changed.unlock() }
        while true {
            if let value = parked.withLock({ found($0) }) { return value }
            guard changed.wait(until: deadline) else { return parked.withLock { found($0) } }
        }
    }
}

extension FakeEngine {
    /// Ends `transfer` with a transport error, as the engine's thread would.
    func fail(_ transfer: Transfer, code: Int) {
        let error = NSError(domain: NSURLErrorDomain, code: code)
        asEngineThread { transfer.delegate?.transfer(transfer, didCompleteWithResponse: nil, error: error) }
    }
}
