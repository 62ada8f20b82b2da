@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `RetryPolicy`: first the state machine's retry states without sockets or
/// clocks (the `.provisional` route, `.scheduleRetry`, `retryDue(token:)`,
/// `.waitingToRetry`), then real retries against the scripted server, for
/// operations and session tasks, then the policy's arithmetic.
final class RetryPolicyTests: OperationTestCase {
    typealias Machine = TransferStateMachine
    private let machineURL = URL(string: "http://127.0.0.1:9/retry")!

    // MARK: - Machine: routing

    func testA503IsProvisionalAndItsBodyHeldWhenAPolicyApplies() {
        var machine = started(get(), retry: plan())
        guard case .proceed(.provisional, restartOutput: false) = machine.headReceived(1, head(503, ["Content-Length": "12"])) else {
            return XCTFail("a retryable answer must wait apart")
        }
        guard case .kept = machine.bodyReceived(1, bytes(12)) else { return XCTFail("its body is held, not forwarded") }
        XCTAssertEqual(machine.entityBytesInOutput, 0, "nothing of the 503 reaches the output")
    }

    func testWithoutAPolicyA503IsTheOutput() {
        var machine = started(get(), retry: nil)
        guard case .proceed(.output, _) = machine.headReceived(1, head(503)) else { return XCTFail("no policy: the 503 is the entity") }
        guard case .keptWithProgress = machine.bodyReceived(1, bytes(5)) else { return XCTFail("its body is the output") }
    }

    func testAStatusOutsideTheRetryableSetIsTheOutput() {
        var machine = started(get(), retry: plan())
        guard case .proceed(.output, _) = machine.headReceived(1, head(500)) else { return XCTFail("500 is not in [429, 503]") }
        var custom = fastPolicy()
        custom.retryableStatusCodes = [500]
        var retrying = started(get(), retry: plan(custom))
        guard case .proceed(.provisional, _) = retrying.headReceived(1, head(500)) else { return XCTFail("500 was made retryable") }
    }

    func testA429IsRetryableByDefault() {
        var machine = started(get(), retry: plan(RetryPolicy()))
        guard case .proceed(.provisional, _) = machine.headReceived(1, head(429)) else { return XCTFail("429 is in the defaults") }
    }

    // MARK: - Machine: scheduling and firing

    func testTheCompleted503SchedulesARetryWithTheBackoff() {
        var policy = fastPolicy()
        policy.baseDelay = 0.25
        var machine = started(get(), retry: plan(policy))
        _ = machine.headReceived(1, head(503))
        _ = machine.bodyReceived(1, bytes(7))
        guard let wait = retryWait(machine.transferCompleted(1, response: head(503), error: nil)) else { return }
        XCTAssertEqual(wait.backoff, 0.25, "the first retry waits baseDelay")
        XCTAssertNil(wait.retryAfter)
        XCTAssertEqual(machine.phase, .executing, "waiting to retry is still executing")
        guard case .waitingToRetry(_, let token) = machine.state else { return XCTFail("not waiting to retry: \(machine.state)") }
        XCTAssertEqual(token, wait.token)
        XCTAssertNil(machine.outcome)
        XCTAssertFalse(machine.isCurrent(1), "the 503's transfer is over")
    }

    func testRetryAfterSecondsAreHandedToTheAdapter() {
        var machine = started(get(), retry: plan())
        let busy = head(503, ["Retry-After": "2"])
        _ = machine.headReceived(1, busy)
        guard let wait = retryWait(machine.transferCompleted(1, response: busy, error: nil)) else { return }
        XCTAssertEqual(wait.retryAfter, 2)
    }

    func testARetryAfterLongerThanMaximumDelayDeliversThe503WithItsBody() {
        var policy = fastPolicy()
        policy.maximumDelay = 5
        var machine = started(get(), retry: plan(policy))
        let busy = head(503, ["Retry-After": "60"])
        _ = machine.headReceived(1, busy)
        _ = machine.bodyReceived(1, bytes(9))
        guard let outcome = delivered(machine.transferCompleted(1, response: busy, error: nil)) else { return }
        XCTAssertNil(outcome.error, "the 503 itself is the answer")
        XCTAssertEqual(outcome.statusCode, 503)
        XCTAssertEqual(outcome.memoryBody?.count, 9, "its held body becomes the output")
    }

    /// A delay-seconds too large for an `Int` is a wait past any cap — not an
    /// unreadable field after which the policy's own backoff resends at once —
    /// and an unbounded cap takes no endless wait either.
    func testAnOverflowingRetryAfterIsTooLongNotAbsent() {
        let huge = head(503, ["Retry-After": "99999999999999999999"])
        XCTAssertEqual(RetryRules.retryAfter(in: huge), .infinity)
        XCTAssertNil(RetryRules.retryAfter(in: head(503, ["Retry-After": "+5"])), "delay-seconds is digits only")
        for maximumDelay in [5, TimeInterval.infinity] {
            var policy = fastPolicy()
            policy.maximumDelay = maximumDelay
            var machine = started(get(), retry: plan(policy))
            _ = machine.headReceived(1, huge)
            _ = machine.bodyReceived(1, bytes(9))
            guard let outcome = delivered(machine.transferCompleted(1, response: huge, error: nil)) else { continue }
            XCTAssertEqual(outcome.statusCode, 503, "cap \(maximumDelay): the 503 is the answer")
            XCTAssertEqual(outcome.memoryBody?.count, 9)
        }
    }

    func testRetryDueWithTheRightTokenSendsTheRequestAgainAndAStaleOneNothing() {
        var machine = started(get(), retry: plan())
        _ = machine.headReceived(1, head(503))
        guard let wait = retryWait(machine.transferCompleted(1, response: head(503), error: nil)) else { return }
        let second = hop(machine.retryDue(token: wait.token))
        XCTAssertEqual(second?.tag, 2)
        XCTAssertEqual(second?.request.url, machineURL)
        XCTAssertEqual(second?.request.httpMethod ?? "GET", "GET")
        XCTAssertTrue(machine.isCurrent(2))
        XCTAssertNone(machine.retryDue(token: wait.token), "a token fires once: fired again, it is stale and changes nothing")
        XCTAssertTrue(machine.isCurrent(2))
    }

    func testTheRetriedAnswerIsTheOnlyOutput() {
        var machine = started(get(), retry: plan())
        _ = machine.headReceived(1, head(503))
        _ = machine.bodyReceived(1, bytes(30))
        guard let wait = retryWait(machine.transferCompleted(1, response: head(503), error: nil)) else { return }
        _ = machine.retryDue(token: wait.token)
        guard case .proceed(.output, _) = machine.headReceived(2, head(200, ["Content-Length": "4"])) else { return XCTFail("the 200 is the entity") }
        _ = machine.bodyReceived(2, bytes(4))
        guard let outcome = delivered(machine.transferCompleted(2, response: head(200), error: nil)) else { return }
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.statusCode, 200)
        XCTAssertEqual(outcome.memoryBody?.count, 4, "the 503's 30 bytes are not in it")
    }

    func testBackoffDoublesAndTheLastAllowedAttemptIsDelivered() {
        var policy = fastPolicy(attempts: 3)
        policy.baseDelay = 1
        var machine = started(get(), retry: plan(policy))
        var backoffs: [TimeInterval] = []
        for tag in UInt64(1)...2 {
            _ = machine.headReceived(tag, head(503))
            guard let wait = retryWait(machine.transferCompleted(tag, response: head(503), error: nil)) else { return }
            backoffs.append(wait.backoff)
            XCTAssertEqual(hop(machine.retryDue(token: wait.token))?.tag, tag + 1)
        }
        XCTAssertEqual(backoffs, [1, 2])
        guard case .proceed(.output, _) = machine.headReceived(3, head(503)) else {
            return XCTFail("the last allowed attempt's answer is the entity")
        }
        _ = machine.bodyReceived(3, bytes(6))
        guard let outcome = delivered(machine.transferCompleted(3, response: head(503), error: nil)) else { return }
        XCTAssertEqual(outcome.statusCode, 503)
        XCTAssertEqual(outcome.memoryBody?.count, 6)
    }

    func testMaximumAttemptsOfOneNeverRetries() {
        var machine = started(get(), retry: plan(fastPolicy(attempts: 1)))
        guard case .proceed(.output, _) = machine.headReceived(1, head(503)) else { return XCTFail("one attempt in all: no retry") }
        let failure = NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)
        var other = started(get(), retry: plan(fastPolicy(attempts: 1)))
        XCTAssertEqual(delivered(other.transferCompleted(1, response: nil, error: failure))?.error?.code, NSURLErrorNetworkConnectionLost)
    }

    // MARK: - Machine: cancel, pause, fail while waiting

    func testCancelWhileWaitingToRetryDeliversTheCancellation() {
        var machine = started(get(), retry: plan())
        _ = machine.headReceived(1, head(503))
        guard let wait = retryWait(machine.transferCompleted(1, response: head(503), error: nil)) else { return }
        guard let outcome = delivered(machine.cancel(get())) else { return }
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(outcome.error?.userInfo[NSURLErrorFailingURLErrorKey] as? URL, machineURL)
        XCTAssertNone(machine.retryDue(token: wait.token), "the timer firing after the cancel is moot")
        XCTAssertEqual(machine.outcome?.error?.code, NSURLErrorCancelled)
    }

    func testPauseWhileWaitingToRetryStopsTheTimerAndResumeSendsItAgain() {
        var machine = started(get(), retry: plan())
        _ = machine.headReceived(1, head(503))
        guard let wait = retryWait(machine.transferCompleted(1, response: head(503), error: nil)) else { return }
        XCTAssertNone(machine.pause(), "no transfer to abort while waiting")
        XCTAssertEqual(machine.phase, .paused)
        XCTAssertNone(machine.retryDue(token: wait.token), "a paused request is not sent by the timer")
        XCTAssertEqual(machine.phase, .paused)
        let resumed = hop(machine.resume(with: get(cachePolicy: .reloadIgnoringLocalCacheData), bodyInMemory: true))
        XCTAssertEqual(resumed?.tag, 2)
        XCTAssertEqual(machine.phase, .executing)
    }

    func testTheAttemptsSpentSurviveAPause() {
        var machine = started(get(), retry: plan(fastPolicy(attempts: 2)))
        _ = machine.headReceived(1, head(503))
        guard retryWait(machine.transferCompleted(1, response: head(503), error: nil)) != nil else { return }
        _ = machine.pause()
        _ = machine.resume(with: get(cachePolicy: .reloadIgnoringLocalCacheData), bodyInMemory: true)
        guard case .proceed(.output, _) = machine.headReceived(2, head(503)) else {
            return XCTFail("two attempts in all were spent: the second 503 is the answer")
        }
    }

    func testFailWhileWaitingToRetryDeliversThatError() {
        // What the resource deadline does when it expires between attempts.
        var machine = started(get(), retry: plan())
        _ = machine.headReceived(1, head(503))
        guard let wait = retryWait(machine.transferCompleted(1, response: head(503), error: nil)) else { return }
        let timedOut = NSError(domain: NSURLErrorDomain, code: NSURLErrorTimedOut)
        XCTAssertEqual(delivered(machine.fail(timedOut))?.error?.code, NSURLErrorTimedOut)
        XCTAssertNone(machine.retryDue(token: wait.token))
    }

    // MARK: - Machine: what is never retried

    func testPOSTIsNeverRetried() {
        var machine = started(request(method: "POST"), retry: plan())
        guard case .proceed(.output, _) = machine.headReceived(1, head(503)) else { return XCTFail("a POST's 503 is its answer") }
        let lost = NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)
        var failing = started(request(method: "POST"), retry: plan())
        XCTAssertEqual(delivered(failing.transferCompleted(1, response: nil, error: lost))?.error?.code, NSURLErrorNetworkConnectionLost)
    }

    func testAnAnswerWhoseRetryAfterIsTooLongGoesToTheOutputFromItsHead() {
        var policy = fastPolicy()
        policy.maximumDelay = 2
        var machine = started(get(), retry: plan(policy))
        guard case .proceed(.output, _) = machine.headReceived(1, head(503, ["Retry-After": "3600"])) else {
            return XCTFail("an answer that will not be retried is not held")
        }
        var soon = started(get(), retry: plan(policy))
        guard case .proceed(.provisional, _) = soon.headReceived(1, head(503, ["Retry-After": "1"])) else {
            return XCTFail("a Retry-After within maximumDelay is retried")
        }
    }

    func testPATCHIsNeverRetriedButPUTAndDELETEAre() {
        var patch = started(request(method: "PATCH"), retry: plan())
        guard case .proceed(.output, _) = patch.headReceived(1, head(503)) else { return XCTFail("PATCH is not idempotent") }
        for method in ["PUT", "DELETE", "HEAD", "OPTIONS", "get"] {
            var machine = started(request(method: method), retry: plan())
            guard case .proceed(.provisional, _) = machine.headReceived(1, head(503)) else { return XCTFail("\(method) is idempotent") }
        }
    }

    func testARangedRequestIsNeverRetried() {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(ranged(from: 40), bodyInMemory: false, retry: plan())
        guard case .proceed(.aside, _) = machine.headReceived(1, head(503)) else { return XCTFail("a resumed request's 503 is kept aside, not retried") }
        let lost = NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)
        var failing = Machine(configuration: .init(consultsCache: false))
        _ = failing.start(ranged(from: 40), bodyInMemory: false, retry: plan())
        XCTAssertEqual(delivered(failing.transferCompleted(1, response: nil, error: lost))?.error?.code, NSURLErrorNetworkConnectionLost)
    }

    func testABodyThatCannotBeResentIsNeverRetried() {
        var machine = started(request(method: "PUT"), retry: plan(resendable: false))
        guard case .proceed(.output, _) = machine.headReceived(1, head(503)) else { return XCTFail("the body cannot be sent again") }
    }

    // MARK: - Machine: transport errors

    func testARetryableTransportErrorIsRetriedAndOthersAreDelivered() {
        var machine = started(get(), retry: plan())
        let lost = NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)
        guard let wait = retryWait(machine.transferCompleted(1, response: nil, error: lost)) else { return }
        XCTAssertNil(wait.retryAfter)
        XCTAssertEqual(hop(machine.retryDue(token: wait.token))?.tag, 2)

        var other = started(get(), retry: plan())
        let bad = NSError(domain: NSURLErrorDomain, code: NSURLErrorBadServerResponse)
        XCTAssertEqual(delivered(other.transferCompleted(1, response: nil, error: bad))?.error?.code, NSURLErrorBadServerResponse)

        var foreign = started(get(), retry: plan())
        let posix = NSError(domain: NSPOSIXErrorDomain, code: Int(ETIMEDOUT))
        XCTAssertEqual(delivered(foreign.transferCompleted(1, response: nil, error: posix))?.error?.domain, NSPOSIXErrorDomain,
                       "only NSURLErrorDomain codes are retried")
    }

    func testAFailureAfterPartOfTheBodyArrivedIsNotRetried() {
        var machine = started(get(), retry: plan())
        _ = machine.headReceived(1, head(200, ["Content-Length": "100"]))
        _ = machine.bodyReceived(1, bytes(40))
        XCTAssertEqual(machine.entityBytesInOutput, 40)
        let lost = NSError(domain: NSURLErrorDomain, code: NSURLErrorNetworkConnectionLost)
        XCTAssertEqual(delivered(machine.transferCompleted(1, response: nil, error: lost))?.error?.code, NSURLErrorNetworkConnectionLost,
                       "what the caller already received is never taken back by a retry")
    }

    func testTheRetriedHopAsksForAFreshBodyStream() {
        var put = request(method: "PUT")
        put.httpBodyStream = InputStream(data: Data("body".utf8))
        var machine = started(put, retry: plan())
        _ = machine.headReceived(1, head(503))
        guard let wait = retryWait(machine.transferCompleted(1, response: head(503), error: nil)) else { return }
        let second = hop(machine.retryDue(token: wait.token))
        XCTAssertEqual(second?.needsFreshBodyStream, true, "the first attempt consumed the stream")
    }

    // MARK: - Retry-After

    func testRetryAfterInSeconds() {
        XCTAssertEqual(RetryRules.retryAfter(in: head(503, ["Retry-After": "120"])), 120)
        XCTAssertEqual(RetryRules.retryAfter(in: head(503, ["Retry-After": " 3 "])), 3)
        XCTAssertEqual(RetryRules.retryAfter(in: head(503, ["Retry-After": "0"])), 0)
        XCTAssertNil(RetryRules.retryAfter(in: head(503, ["Retry-After": "-1"])))
        XCTAssertNil(RetryRules.retryAfter(in: head(503, ["Retry-After": "soon"])))
        XCTAssertNil(RetryRules.retryAfter(in: head(503, ["Retry-After": ""])))
        XCTAssertNil(RetryRules.retryAfter(in: head(503)))
    }

    func testRetryAfterAsAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000) // Tue, 14 Nov 2023 22:13:20 GMT
        XCTAssertEqual(RetryRules.retryAfter(in: head(503, ["Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT"]), now: now), 30)
        XCTAssertEqual(RetryRules.retryAfter(in: head(503, ["Retry-After": "Tue, 14 Nov 2023 21:56:40 GMT"]), now: now), 0,
                       "a date in the past means now")
        XCTAssertNil(RetryRules.retryAfter(in: head(503, ["Retry-After": "Tue, 14 Nov 2023 22:13:50"]), now: now))
    }

    // MARK: - Against the scripted server

    func test503ThenSuccessIsRetriedAndOnlyTheFinalBodyIsDelivered() {
        answerInTurn("/flaky", [answer(503, "busy-busy-busy"), answer(200, "fine")])
        let operation = HTTPRequestOperation(request: request("/flaky"))
        operation.retryPolicy = fastPolicy()
        let progress = Locked<[Int64]>([])
        operation.setDownloadProgressBlock { _, total, _ in progress.append(total) }
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.calls, 1, "the blocks run once, for the final attempt")
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(operation.responseString, "fine")
        XCTAssertFalse(operation.responseString?.contains("busy") ?? true)
        XCTAssertTrue(progress.value.allSatisfy { $0 <= 4 }, "no progress was reported for the 503's body: \(progress.value)")
    }

    /// A refused answer's `Set-Cookie` (a load balancer's affinity, a rate
    /// limiter's ticket) is stored before the retry goes out, as a
    /// redirect's is: the retry carries it.
    func testTheRetriedRequestCarriesTheCookieTheRefusedAnswerSet() {
        let name = "retry-affinity-\(UUID().uuidString.prefix(8))"
        addTeardownBlock {
            for cookie in HTTPCookieStorage.shared.cookies ?? [] where cookie.name == name { HTTPCookieStorage.shared.deleteCookie(cookie) }
        }
        answerInTurn("/sticky", [answer(503, "busy", headers: [("Set-Cookie", "\(name)=node7; Path=/")]), answer(200, "fine")])
        let operation = HTTPRequestOperation(request: request("/sticky"))
        operation.retryPolicy = fastPolicy()
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertFalse(server.requests.first?.headers.first(name: "cookie")?.contains(name) ?? false, "not before it was set")
        XCTAssertTrue(server.requests.last?.headers.first(name: "cookie")?.contains("\(name)=node7") == true,
                      "the retry carries the cookie: \(String(describing: server.requests.last?.headers))")
    }

    func testWithoutAPolicyNothingIsRetried() {
        answerInTurn("/flaky", [answer(503, "busy"), answer(200, "fine")])
        let operation = HTTPRequestOperation(request: request("/flaky"))
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(operation.response?.statusCode, 503)
        XCTAssertEqual(server.requests.count, 1)
    }

    func testRetryAfterOneSecondIsHonoured() {
        answerInTurn("/later", [answer(503, "later", headers: [("Retry-After", "1")]), answer(200, "now")])
        let operation = HTTPRequestOperation(request: request("/later"))
        operation.retryPolicy = fastPolicy()
        let started = Date()
        let outcome = run(operation, timeout: 15)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, "now")
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertGreaterThanOrEqual(elapsed, 0.9, "Retry-After: 1 was not waited for (backoff alone is 0.05 s)")
        XCTAssertLessThan(elapsed, 6)
    }

    func testRetryAfterLongerThanMaximumDelayMakesThe503TheResult() {
        answerInTurn("/much-later", [answer(503, "come back tomorrow", headers: [("Retry-After", "3600")]), answer(200, "never")])
        let operation = HTTPRequestOperation(request: request("/much-later"))
        var policy = fastPolicy()
        policy.maximumDelay = 2
        operation.retryPolicy = policy
        // No stopwatch: the server's count shows no retry, and the bounded run fails a wait of an hour.
        let outcome = run(operation)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(outcome.error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(operation.response?.statusCode, 503)
        XCTAssertEqual(operation.responseString, "come back tomorrow", "the 503's body is the result's body")
    }

    func testAlways503GivesUpAfterMaximumAttempts() {
        answerInTurn("/down", [answer(503, "down")])
        let operation = HTTPRequestOperation(request: request("/down"))
        operation.retryPolicy = fastPolicy(attempts: 3)
        let outcome = run(operation)
        XCTAssertEqual(server.requests.count, 3)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual((outcome.error?.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse)?.statusCode, 503)
        XCTAssertEqual(operation.responseString, "down")
    }

    func testADroppedConnectionIsRetried() {
        let body = ModernSupport.pattern(100)
        let count = Locked(0)
        server.route("/dropped") { _ in
            if count.increment() == 1 {
                // The connection drops before any answer.
                return [.close]
            }
            return [.head(status: 200, headers: [("Content-Length", "100")]), .body(body), .end]
        }
        let operation = HTTPRequestOperation(request: request("/dropped"))
        operation.retryPolicy = fastPolicy()
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(operation.responseData, body)
    }

    func testAPOSTAnswered303IsNotSentAgainWhenTheGETGetsA503() {
        server.route("/form") { _ in [.head(status: 303, headers: [("Location", "/after"), ("Content-Length", "0")]), .end] }
        answerInTurn("/after", [answer(503, "busy")])
        var post = request("/form")
        post.httpMethod = "POST"
        post.httpBody = Data("a=1".utf8)
        let operation = HTTPRequestOperation(request: post)
        operation.retryPolicy = fastPolicy()
        let outcome = run(operation)
        XCTAssertEqual(server.requests.map(\.method), ["POST", "GET"], "a retry would send the POST again")
        XCTAssertEqual(operation.response?.statusCode, 503)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
    }

    func testAConnectionDroppedAfterTheHeadIsNotRetried() {
        server.route("/headonly") { _ in [.head(status: 200, headers: [("Content-Length", "100")]), .close] }
        let operation = HTTPRequestOperation(request: request("/headonly"))
        operation.retryPolicy = fastPolicy()
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.code, NSURLErrorNetworkConnectionLost, "the head already reached the caller")
        XCTAssertEqual(server.requests.count, 1)
    }

    func testAConnectionDroppedMidBodyIsNotRetried() {
        let body = ModernSupport.pattern(100)
        server.route("/broken") { _ in
            [.head(status: 200, headers: [("Content-Length", "100")]), .body(body.prefix(10)), .close]
        }
        let operation = HTTPRequestOperation(request: request("/broken"))
        operation.retryPolicy = fastPolicy()
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.code, NSURLErrorNetworkConnectionLost,
                       "bytes already handed to the output are never taken back by a retry")
        XCTAssertEqual(server.requests.count, 1)
    }

    func testARefusedConnectionIsRetriedWithBackoff() {
        var refused = URLRequest(url: URL(string: "http://127.0.0.1:\(Fixtures.refusedPort)/nobody")!)
        refused.timeoutInterval = 5
        let operation = HTTPRequestOperation(request: refused)
        var policy = fastPolicy(attempts: 3)
        policy.baseDelay = 0.3
        operation.retryPolicy = policy
        let recorder = ModernLogRecorder()
        operation.logger = recorder.logger(level: .debug)
        let started = Date()
        let outcome = run(operation)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotConnectToHost)
        XCTAssertEqual(outcome.calls, 1, "one failure, after the last attempt")
        // The evidence of the retries: each attempt is a hop of its own, logged as it is sent.
        RequestLog.flush()
        let attempts = recorder.records.filter { $0.level == .debug && $0.message == "GET \(refused.url!.absoluteString)" }
        XCTAssertEqual(attempts.count, 3, "three attempts, all refused: \(recorder.records)")
        XCTAssertEqual(Set(attempts.compactMap { $0.metadata["hop"] }).count, 3, "each attempt its own hop: \(attempts)")
        // Deadline semantics only: a retry timer never fires before its delay, so both waits (0.3 s,
        // then 0.6 s) come before the last failure; the upper bound is 9 times their sum.
        XCTAssertGreaterThanOrEqual(elapsed, 0.85, "two waits, 0.3 s then 0.6 s, come before the last failure")
        XCTAssertLessThan(elapsed, 8)
    }

    func testARetryAfterARefusalReachesAServerThatCameUpMeanwhile() throws {
        // Server-side evidence: nothing listens when the first attempt is sent, so it is refused;
        // once the operation is seen waiting to retry, a server comes up on that port, and only a
        // retry can reach it.
        let port = Fixtures.freePort()
        var late = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/late")!)
        late.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: late)
        var policy = fastPolicy(attempts: 3)
        policy.baseDelay = 1 // the server binds in milliseconds; a second retry (after 2 s more) is allowed too
        operation.retryPolicy = policy
        let outcome = Locked(Outcome())
        let done = expectation(description: "completion")
        record(operation, into: outcome) { done.fulfill() }
        let queue = OperationQueue()
        queue.addOperation(operation)
        XCTAssertTrue(spin(until: { Self.isWaitingToRetry(operation) || operation.isFinished }, timeout: 10),
                      "the refused first attempt schedules a retry")
        XCTAssertFalse(operation.isFinished, "a refusal under a retry policy is not the result")
        let server = try ScriptedServer(port: port)
        defer { server.shutdown() }
        server.respond("/late", body: Data("up now".utf8))
        wait(for: [done], timeout: 15)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(outcome.value.calls, 1)
        XCTAssertEqual(operation.responseString, "up now")
        XCTAssertEqual(server.requests.map(\.uri), ["/late"], "the retry, and only it, reached the server")
    }

    /// Whether the operation's machine is waiting to send its request again.
    private static func isWaitingToRetry(_ operation: URLConnectionOperation) -> Bool {
        operation.driver.isWaitingToRetry
    }

    func testPOSTWithA503IsNotRetried() {
        answerInTurn("/submit", [answer(503, "busy"), answer(200, "accepted")])
        var post = request("/submit", method: "POST")
        post.httpBody = Data("order=1".utf8)
        let operation = HTTPRequestOperation(request: post)
        operation.retryPolicy = fastPolicy()
        let outcome = run(operation)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(operation.response?.statusCode, 503)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
    }

    func testDELETEWithA503IsRetried() {
        answerInTurn("/resource", [answer(503, "busy"), answer(200, "deleted")])
        let operation = HTTPRequestOperation(request: request("/resource", method: "DELETE"))
        operation.retryPolicy = fastPolicy()
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(server.requests.map(\.method), ["DELETE", "DELETE"])
        XCTAssertEqual(operation.responseString, "deleted")
    }

    func testABodyStreamThatCannotBeCopiedIsNotRetried() {
        answerInTurn("/put", [answer(503, "busy"), answer(200, "stored")])
        let payload = Data("streamed body".utf8)
        var put = request("/put", method: "PUT")
        let stream = InputStream(data: payload)
        XCTAssertFalse((stream as AnyObject) is NSCopying, "the premise: a plain InputStream cannot copy itself")
        put.httpBodyStream = stream
        put.setValue("\(payload.count)", forHTTPHeaderField: "Content-Length")
        let operation = HTTPRequestOperation(request: put)
        operation.retryPolicy = fastPolicy()
        let outcome = run(operation)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(server.requests.first?.body, payload)
        XCTAssertEqual(operation.response?.statusCode, 503)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
    }

    func testAMultipartBodyIsRetriedWhole() throws {
        answerInTurn("/form", [answer(503, "busy"), answer(200, "stored")])
        let part = ModernSupport.pattern(50_000, salt: 9)
        let put = try HTTPRequestSerializer().multipartFormRequest(withMethod: "PUT", urlString: url("/form").absoluteString,
                                                                    parameters: ["field": "field-value"]) { form in
            form.appendPart(withFileData: part, name: "file", fileName: "part.bin", mimeType: "application/octet-stream")
        }
        XCTAssertTrue((put.httpBodyStream as AnyObject?) is NSCopying, "the premise: the multipart body copies itself")
        let operation = HTTPRequestOperation(request: put)
        operation.retryPolicy = fastPolicy()
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, "stored")
        let requests = server.requests
        XCTAssertEqual(requests.count, 2)
        guard requests.count == 2 else { return }
        XCTAssertGreaterThan(requests[1].body.count, part.count)
        XCTAssertEqual(requests[0].body, requests[1].body, "the retry sends the whole body again")
        XCTAssertNotNil(requests[1].body.range(of: part))
        XCTAssertNotNil(requests[1].body.range(of: Data("field-value".utf8)))
    }

    func testTheManagerCopiesItsPolicyToItsOperations() {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        XCTAssertNil(manager.retryPolicy, "nothing is retried unless asked")
        var policy = RetryPolicy()
        policy.maximumAttempts = 5
        manager.retryPolicy = policy
        let operation = manager.httpRequestOperation(with: request("/x"), success: nil, failure: nil)
        XCTAssertEqual(operation.retryPolicy, policy)
        XCTAssertEqual((operation.copy() as? HTTPRequestOperation)?.retryPolicy, policy, "copy() keeps the policy")
        XCTAssertNil(HTTPRequestOperation(request: request("/x")).retryPolicy)
    }

    func testTheManagerRetriesItsVerbs() {
        answerInTurn("/flaky", [answer(503, "busy"), answer(200, "fine")])
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.retryPolicy = fastPolicy()
        let done = expectation(description: "get")
        let body = Locked<Data?>(nil)
        manager.get("flaky", parameters: nil, success: { _, object in
            body.value = object as? Data
            done.fulfill()
        }, failure: { _, error in
            XCTFail("\(error)")
            done.fulfill()
        })
        wait(for: [done], timeout: 15)
        XCTAssertEqual(body.value, Data("fine".utf8))
        XCTAssertEqual(server.requests.count, 2)
    }

    func testASessionDataTaskSeesOnlyTheFinalAnswer() {
        let final = Data(#"{"ok":true}"#.utf8)
        answerInTurn("/flaky", [answer(503, "busy-busy"), answer(200, String(decoding: final, as: UTF8.self),
                                                                  contentType: "application/json")])
        let manager = URLSessionManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        manager.completionQueue = ModernSupport.completionQueue("retry-session")
        manager.retryPolicy = fastPolicy()
        let statuses = Locked<[Int]>([])
        let received = Locked(Data())
        manager.setDataTaskDidReceiveResponseBlock { _, _, response in
            statuses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
            return .allow
        }
        manager.setDataTaskDidReceiveDataBlock { _, _, data in received.withLock { $0.append(data) } }
        let done = expectation(description: "completion")
        let outcome = Locked<(status: Int, error: NSError?, ok: Bool)>((0, nil, false))
        let task = manager.dataTask(with: request("/flaky")) { response, object, error in
            outcome.value = ((response as? HTTPURLResponse)?.statusCode ?? 0, error.map { $0 as NSError },
                             ModernSupport.jsonObject(object)["ok"] as? Bool ?? false)
            done.fulfill()
        }
        task.resume()
        wait(for: [done], timeout: 15)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(outcome.value.status, 200)
        XCTAssertTrue(outcome.value.ok)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertEqual(received.value, final, "didReceiveData saw only the final body")
        XCTAssertEqual(statuses.value, [200], "didReceiveResponse saw only the final answer")
    }

    func testASessionDataTaskWhoseBodyBrokeOffIsNotRetried() {
        // The first attempt's 200 head and 10 bytes reach the delegate before
        // the connection drops: a retry would show it a second response and
        // the body again, so there is none ("an answer that is retried never
        // reaches your code" — and one that reached it is not retried).
        let body = ModernSupport.pattern(100, salt: 1)
        server.route("/dropped") { _ in
            [.head(status: 200, headers: [("Content-Length", "100")]), .body(body.prefix(10)), .close]
        }
        let manager = URLSessionManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        manager.completionQueue = ModernSupport.completionQueue("retry-dropped-session")
        manager.responseSerializer = HTTPResponseSerializer()
        manager.retryPolicy = fastPolicy()
        let received = Locked(Data())
        manager.setDataTaskDidReceiveDataBlock { _, _, data in received.withLock { $0.append(data) } }
        let done = expectation(description: "completion")
        let outcome = Locked<NSError?>(nil)
        let task = manager.dataTask(with: request("/dropped")) { _, _, error in
            outcome.value = error.map { $0 as NSError }
            done.fulfill()
        }
        task.resume()
        wait(for: [done], timeout: 15)
        XCTAssertEqual(outcome.value?.code, NSURLErrorNetworkConnectionLost)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertEqual(received.value, body.prefix(10))
    }

    func testASessionManagerWithoutAPolicyDoesNotRetry() {
        answerInTurn("/flaky", [answer(503, "busy"), answer(200, "fine")])
        let manager = URLSessionManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        manager.completionQueue = ModernSupport.completionQueue("no-retry-session")
        manager.responseSerializer = HTTPResponseSerializer()
        XCTAssertNil(manager.retryPolicy)
        let done = expectation(description: "completion")
        let status = Locked(0)
        let task = manager.dataTask(with: request("/flaky")) { response, _, _ in
            status.value = (response as? HTTPURLResponse)?.statusCode ?? 0
            done.fulfill()
        }
        task.resume()
        wait(for: [done], timeout: 15)
        XCTAssertEqual(status.value, 503)
        XCTAssertEqual(server.requests.count, 1)
    }

    // MARK: - RetryPolicy arithmetic

    func testDefaults() {
        let policy = RetryPolicy()
        XCTAssertEqual(policy, RetryPolicy.default)
        XCTAssertEqual(policy.maximumAttempts, 3)
        XCTAssertEqual(policy.baseDelay, 0.5)
        XCTAssertEqual(policy.maximumDelay, 30)
        XCTAssertEqual(policy.jitter, 0.2)
        XCTAssertEqual(policy.retryableStatusCodes, [429, 503])
        XCTAssertTrue(policy.retryableErrorCodes.isSuperset(of: [NSURLErrorTimedOut, NSURLErrorCannotConnectToHost,
                                                                NSURLErrorNetworkConnectionLost, NSURLErrorCannotFindHost]))
        XCTAssertFalse(policy.retryableErrorCodes.contains(NSURLErrorCancelled))
        XCTAssertEqual(RetryPolicy.idempotentMethods, ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])
        var changed = policy
        changed.jitter = 0
        XCTAssertNotEqual(changed, policy)
    }

    func testBackoffDoublesFromTheBaseDelayUpToTheMaximum() {
        var policy = RetryPolicy()
        policy.baseDelay = 0.5
        policy.maximumDelay = 30
        XCTAssertEqual(policy.backoff(afterAttempts: 1), 0.5)
        XCTAssertEqual(policy.backoff(afterAttempts: 2), 1)
        XCTAssertEqual(policy.backoff(afterAttempts: 3), 2)
        XCTAssertEqual(policy.backoff(afterAttempts: 4), 4)
        XCTAssertEqual(policy.backoff(afterAttempts: 7), 30, "capped at maximumDelay")
        XCTAssertEqual(policy.backoff(afterAttempts: 10_000), 30, "no overflow for absurd counts")
        XCTAssertEqual(policy.backoff(afterAttempts: 0), 0.5, "no attempt yet waits the base delay")
        policy.baseDelay = -1
        XCTAssertEqual(policy.backoff(afterAttempts: 3), 0, "a negative base delay waits nothing")
    }

    func testJitterVariesTheDelayWithinItsSpreadAndTheBounds() {
        var policy = RetryPolicy()
        policy.jitter = 0.2
        policy.maximumDelay = 30
        XCTAssertEqual(policy.jittered(10, random: 1), 12, accuracy: 1e-9)
        XCTAssertEqual(policy.jittered(10, random: -1), 8, accuracy: 1e-9)
        XCTAssertEqual(policy.jittered(10, random: 0), 10, accuracy: 1e-9)
        XCTAssertEqual(policy.jittered(29, random: 1), 30, "never above maximumDelay")
        for _ in 0..<200 {
            let delay = policy.jittered(10)
            XCTAssertGreaterThanOrEqual(delay, 8 - 1e-9)
            XCTAssertLessThanOrEqual(delay, 12 + 1e-9)
        }
        policy.jitter = 5
        XCTAssertEqual(policy.jittered(10, random: -1), 0, "a spread over 100 % is clamped, and no wait is negative")
        XCTAssertEqual(policy.jittered(10, random: 1), 20, accuracy: 1e-9)
        policy.jitter = -1
        XCTAssertEqual(policy.jittered(10, random: 1), 10, "a negative spread means none")
    }

    // MARK: - Helpers

    private func fastPolicy(attempts: Int = 3) -> RetryPolicy {
        var policy = RetryPolicy()
        policy.maximumAttempts = attempts
        policy.baseDelay = 0.05
        policy.maximumDelay = 5
        policy.jitter = 0
        return policy
    }

    private func plan(_ policy: RetryPolicy? = nil, resendable: Bool = true) -> Machine.RetryPlan {
        Machine.RetryPlan(policy: policy ?? fastPolicy(), bodyCanBeResent: resendable)
    }

    private func get(cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> URLRequest {
        var request = URLRequest(url: machineURL)
        request.cachePolicy = cachePolicy
        return request
    }

    private func request(method: String) -> URLRequest {
        var request = URLRequest(url: machineURL)
        request.httpMethod = method
        return request
    }

    private func ranged(from offset: Int64) -> URLRequest {
        var request = get()
        request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        return request
    }

    /// A machine without a cache whose first hop (tag 1) is in flight.
    private func started(_ request: URLRequest, retry: Machine.RetryPlan?) -> Machine {
        var machine = Machine(configuration: .init(consultsCache: false))
        _ = machine.start(request, bodyInMemory: true, retry: retry)
        return machine
    }

    private func head(_ status: Int, _ fields: [String: String] = [:]) -> ReceivedResponse {
        ReceivedResponse(url: machineURL, statusCode: status, statusLine: "HTTP/1.1 \(status) X", fields: fields.map { ($0.key, $0.value) })
    }

    private func bytes(_ count: Int) -> UnsafeRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 1)
        buffer.initializeMemory(as: UInt8.self, repeating: 5)
        addTeardownBlock { buffer.deallocate() }
        return UnsafeRawBufferPointer(rebasing: buffer[0..<count])
    }

    private func retryWait(_ action: Machine.Action, file: StaticString = #filePath, line: UInt = #line) -> Machine.RetryWait? {
        guard case .scheduleRetry(let wait) = action else {
            XCTFail("expected a retry to be scheduled, got \(action)", file: file, line: line)
            return nil
        }
        return wait
    }

    private func hop(_ action: Machine.Action, file: StaticString = #filePath, line: UInt = #line) -> Machine.HopStart? {
        guard case .startTransfer(let hop) = action else {
            XCTFail("expected a transfer to start, got \(action)", file: file, line: line)
            return nil
        }
        return hop
    }

    private func delivered(_ action: Machine.Action, file: StaticString = #filePath, line: UInt = #line) -> Machine.Outcome? {
        switch action {
        case .deliver(let outcome), .abortAndDeliver(_, let outcome): return outcome
        default:
            XCTFail("expected a delivery, got \(action)", file: file, line: line)
            return nil
        }
    }

    private func XCTAssertNone(_ action: Machine.Action, _ message: String = "", file: StaticString = #filePath, line: UInt = #line) {
        guard case .none = action else {
            return XCTFail("expected no action, got \(action) \(message)", file: file, line: line)
        }
    }

    /// One complete scripted answer.
    private func answer(_ status: Int, _ body: String, headers: [(String, String)] = [],
                        contentType: String = "text/plain") -> [ScriptedServer.Step] {
        let data = Data(body.utf8)
        return [.head(status: status, headers: headers + [("Content-Type", contentType), ("Content-Length", "\(data.count)")]),
                .body(data), .end]
    }

    /// `path` gives the answers in turn, the last one again and again.
    private func answerInTurn(_ path: String, _ answers: [[ScriptedServer.Step]]) {
        let count = Locked(0)
        server.route(path) { _ in
            let index = count.increment() - 1
            return answers[min(index, answers.count - 1)]
        }
    }
}
