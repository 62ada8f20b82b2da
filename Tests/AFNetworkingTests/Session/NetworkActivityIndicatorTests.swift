@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// NetworkActivityIndicatorManager: 2.7's and 3.2.1's activity tests (visible
/// on, visible off, the delays, overlapping requests) and the counting rules
/// beyond them (each object counted once, never below zero, counting while
/// disabled, operations as well as tasks).
final class NetworkActivityIndicatorTests: SessionTasksTestCase {
    private var indicator: NetworkActivityIndicatorManager!

    override func setUpWithError() throws {
        try super.setUpWithError()
        indicator = NetworkActivityIndicatorManager()
        indicator.isEnabled = true
    }

    override func tearDown() {
        indicator?.setNetworkingActivityActionWithBlock(nil)
        indicator = nil
        super.tearDown()
    }

    /// What the action block was called with; `shown`/`hidden` are fulfilled
    /// by its `true`/`false` calls and fail the test when fulfilled twice.
    private final class Visibility: @unchecked Sendable {
        // @unchecked: `changes` is a Locked box; the expectations are only fulfilled.
        struct Change {
            let visible: Bool
            let at: Date
            let onMainThread: Bool
        }

        let changes = Locked<[Change]>([])
        let shown: XCTestExpectation
        let hidden: XCTestExpectation

        init(shown: XCTestExpectation, hidden: XCTestExpectation) {
            shown.assertForOverFulfill = true
            hidden.assertForOverFulfill = true
            self.shown = shown
            self.hidden = hidden
        }

        var block: @Sendable (Bool) -> Void {
            { [changes, shown, hidden] visible in
                changes.append(Change(visible: visible, at: Date(), onMainThread: Thread.isMainThread))
                (visible ? shown : hidden).fulfill()
            }
        }

        var values: [Bool] { changes.value.map(\.visible) }
        var allOnMainThread: Bool { changes.value.allSatisfy(\.onMainThread) }
        func time(of visible: Bool) -> Date? { changes.value.first { $0.visible == visible }?.at }
    }

    private func watchVisibility() -> Visibility {
        let visibility = Visibility(shown: expectation(description: "indicator shown"),
                                    hidden: expectation(description: "indicator hidden"))
        indicator.setNetworkingActivityActionWithBlock(visibility.block)
        return visibility
    }

    private func immediate() {
        indicator.activationDelay = 0
        indicator.completionDelay = 0
    }

    /// A route whose answer waits until `condition` holds (at most 30 s): the
    /// request certainly runs while the indicator shows it or the test counts
    /// it, instead of racing the indicator's main-queue work against a delay.
    private func routeHeld(_ path: String, status: Int = 200, until condition: @escaping @Sendable () -> Bool) {
        server.route(path) { _ in
            [.waitUntil(condition, timeout: 30),
             .head(status: status, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
             .body(Data("{}".utf8)), .end]
        }
    }

    // MARK: On and off (3.2.1)

    func testTurnsOnAndOffWhenARequestSucceeds() {
        let manager = makeHTTPManager(baseURL: server.baseURL)
        immediate()
        let visibility = watchVisibility()
        // Answered once the indicator is shown: "visible" comes before the end whatever the machine's load.
        routeHeld("/held", until: { visibility.values.contains(true) })
        let call = verbCall()
        manager.get("held", parameters: nil, success: call.success, failure: call.failure)
        wait(for: [visibility.shown, call.expectation, visibility.hidden], timeout: 15, enforceOrder: true)
        XCTAssertEqual(call.outcome.value.successes, 1)
        drainMainQueue()
        XCTAssertEqual(visibility.values, [true, false])
        XCTAssertTrue(visibility.allOnMainThread, "the action block runs on the main queue")
        XCTAssertFalse(indicator.isNetworkActivityIndicatorVisible)
        XCTAssertEqual(indicator.activityCount, 0)
    }

    func testTurnsOnAndOffWhenARequestFailsWith404() {
        assertOnAndOffForAFailure(status: 404)
    }

    func testTurnsOnAndOffWhenARequestFailsWith500() {
        assertOnAndOffForAFailure(status: 500)
    }

    /// The failing request is answered by the scripted server only once the
    /// indicator is shown, so that with zero delays "visible" is reached
    /// before the request ends whatever the machine's load (httpbin's
    /// /status/N answers in a few milliseconds; a fixed delay is a race).
    private func assertOnAndOffForAFailure(status: Int, file: StaticString = #filePath, line: UInt = #line) {
        let manager = makeHTTPManager(baseURL: server.baseURL)
        immediate()
        let visibility = watchVisibility()
        routeHeld("/status/\(status)", status: status, until: { visibility.values.contains(true) })
        let call = verbCall()
        manager.get("status/\(status)", parameters: nil, success: call.success, failure: call.failure)
        wait(for: [visibility.shown, call.expectation, visibility.hidden], timeout: 15, enforceOrder: true)
        XCTAssertEqual(call.outcome.value.failures, 1, file: file, line: line)
        drainMainQueue()
        XCTAssertEqual(visibility.values, [true, false], file: file, line: line)
        XCTAssertEqual(indicator.activityCount, 0, file: file, line: line)
    }

    func testVisibilityDelaysAreApplied() throws {
        let manager = makeHTTPManager(baseURL: server.baseURL)
        indicator.activationDelay = 1.0
        indicator.completionDelay = 1.0
        let visibility = watchVisibility()
        // Answered once the indicator is shown: it certainly shows before the
        // request ends (a 2 s server delay raced the 1 s activation timer).
        routeHeld("/held", until: { visibility.values.contains(true) })
        let succeededAt = Locked<Date?>(nil)
        let succeeded = expectation(description: "success")
        let start = Date()
        manager.get("held", parameters: nil, success: { _, _ in
            succeededAt.value = Date()
            succeeded.fulfill()
        }, failure: nil)
        wait(for: [visibility.shown, succeeded, visibility.hidden], timeout: 20, enforceOrder: true)
        let shownAt = try XCTUnwrap(visibility.time(of: true))
        let hiddenAt = try XCTUnwrap(visibility.time(of: false))
        let finishedAt = try XCTUnwrap(succeededAt.value)
        // Dispatch timers never fire early; the small margin covers clock granularity only.
        XCTAssertGreaterThan(shownAt.timeIntervalSince(start), 0.99, "shown only after activationDelay")
        XCTAssertGreaterThan(hiddenAt.timeIntervalSince(finishedAt), 0.99, "hidden only after completionDelay")
    }

    /// A request that ends within the activation delay (1 s by default) is
    /// never shown. The indicator sees a request through the main queue (its
    /// notifications are posted there, the indicator's timers run there), so
    /// the test keeps the main queue from running until the request has ended
    /// and its resume and completion both wait there: as the indicator sees
    /// it, the request is certainly shorter than the delay, however slow the
    /// machine (a quick request that had to end within a second of wall time
    /// was not). That the delay itself is waited out before anything shows
    /// is `testVisibilityDelaysAreApplied`'s part.
    func testTheDefaultActivationDelayKeepsShortRequestsInvisible() {
        server.respond("/quick", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let manager = makeHTTPManager(baseURL: server.baseURL)
        // Off the main queue, which the test does not run until the request has ended.
        manager.completionQueue = DispatchQueue(label: "quick-request")
        XCTAssertEqual(indicator.activationDelay, 1.0)
        let called = expectation(description: "action block")
        called.isInverted = true
        indicator.setNetworkingActivityActionWithBlock { _ in called.fulfill() }
        drainMainQueue()
        let ended = DispatchSemaphore(value: 0)
        let succeeded = Locked(false)
        manager.get("quick", parameters: nil, success: { _, _ in
            succeeded.value = true
            ended.signal()
        }, failure: { _, _ in ended.signal() })
        XCTAssertEqual(ended.wait(timeout: .now() + 10), .success, "the request ended")
        XCTAssertTrue(succeeded.value)
        // The completion is posted just after the success block: wait (bounded,
        // without running the main queue) until it waits beside the resume.
        let deadline = Date().addingTimeInterval(10)
        while MainQueueNotifier.shared.waiting.count < 2 && Date() < deadline { usleep(1_000) }
        XCTAssertGreaterThanOrEqual(MainQueueNotifier.shared.waiting.count, 2, "the resume and the completion wait for the main queue")
        // Past the activation delay (counted from when the main queue ran
        // again): the request had ended, so nothing was shown.
        wait(for: [called], timeout: 2)
        XCTAssertEqual(indicator.activityCount, 0)
        XCTAssertFalse(indicator.isNetworkActivityIndicatorVisible)
    }

    /// Two overlapping requests, with 1 s delays: shown once while both run,
    /// still shown when one has ended, hidden only after the other ended. The
    /// scripted server holds each answer until the test lets it go, so the
    /// overlap and the order of the ends are certain, not a matter of seconds.
    func testOverlappingRequestsShowAndHideOnce() {
        let releaseShort = Locked(false), releaseLong = Locked(false)
        routeHeld("/short", until: { releaseShort.value })
        routeHeld("/long", until: { releaseLong.value })
        let manager = makeHTTPManager(baseURL: server.baseURL)
        indicator.activationDelay = 1.0
        indicator.completionDelay = 1.0
        let visibility = watchVisibility()
        let long = verbCall("long request")
        let short = verbCall("short request")
        manager.get("long", parameters: nil, success: long.success, failure: long.failure)
        manager.get("short", parameters: nil, success: short.success, failure: short.failure)
        // Shown while both run (neither has an answer yet).
        wait(for: [visibility.shown], timeout: 15)
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 2 }), "both requests are counted")
        // One ends: the other still runs, so the indicator stays.
        releaseShort.value = true
        wait(for: [short.expectation], timeout: 10)
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }))
        drainMainQueue()
        XCTAssertEqual(visibility.values, [true], "still shown while the other request runs")
        XCTAssertTrue(indicator.isNetworkActivityIndicatorVisible)
        // The other ends: hidden, after it.
        releaseLong.value = true
        wait(for: [long.expectation, visibility.hidden], timeout: 15, enforceOrder: true)
        XCTAssertEqual(long.outcome.value.successes, 1)
        XCTAssertEqual(short.outcome.value.successes, 1)
        drainMainQueue()
        XCTAssertEqual(visibility.values, [true, false], "one true and one false for overlapping requests")
        XCTAssertEqual(indicator.activityCount, 0)
    }

    // MARK: Counting each object once (beyond 2.7)

    func testNotificationsForObjectsThatAreNotCountedChangeNothing() {
        let manager = makeManager()
        indicator.incrementActivityCount()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }))

        // A task cancelled while never resumed completes, but was never counted.
        let completes = observe(.AFNetworkingTaskDidComplete)
        let probe = makeProbe("never resumed")
        let never = manager.dataTask(with: request("/never"), completionHandler: probe.data)
        probe.task.value = never
        never.cancel()
        wait(for: [probe.expectation], timeout: 10)
        XCTAssertTrue(spin(until: { completes.count(for: never) == 1 }))
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 1, "completing a never-resumed task cancels no one's activity")

        // Fake notifications for objects that are not counted.
        let other = manager.dataTask(with: request("/other"), completionHandler: nil)
        NotificationCenter.default.post(name: .AFNetworkingTaskDidComplete, object: never)
        NotificationCenter.default.post(name: .AFNetworkingTaskDidSuspend, object: never)
        NotificationCenter.default.post(name: .AFNetworkingTaskDidComplete, object: other)
        NotificationCenter.default.post(name: .AFNetworkingOperationDidFinish, object: other)
        NotificationCenter.default.post(name: .AFNetworkingTaskDidResume, object: NSObject())
        NotificationCenter.default.post(name: .AFNetworkingTaskDidResume, object: nil)
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 1)

        // A real task is counted while it runs, once (answered only once counted).
        let counting: NetworkActivityIndicatorManager = self.indicator
        routeHeld("/slow", until: { counting.activityCount == 2 })
        let runningProbe = makeProbe("running")
        let running = manager.dataTask(with: request("/slow"), completionHandler: runningProbe.data)
        runningProbe.task.value = running
        running.resume()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 2 }))
        wait(for: [runningProbe.expectation], timeout: 10)
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }))

        // Extra notifications for the completed task change nothing either.
        NotificationCenter.default.post(name: .AFNetworkingTaskDidComplete, object: running)
        NotificationCenter.default.post(name: .AFNetworkingTaskDidSuspend, object: running)
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 1)

        indicator.decrementActivityCount()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 0 }))
    }

    func testASuspendedTaskStopsCountingAndResumingCountsItAgain() {
        // Never answered while the test runs (it cancels the task): the task
        // runs whenever the test looks, however slow the machine.
        routeSlowly("/slow", delay: 30)
        let manager = makeManager()
        let task = manager.dataTask(with: request("/slow", timeout: 60), completionHandler: nil)
        task.resume()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }))
        task.suspend()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 0 }))
        task.suspend()
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 0)
        task.resume()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }))
        task.cancel()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 0 }))
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 0)
    }

    func testDecrementNeverGoesBelowZero() {
        indicator.decrementActivityCount()
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 0)
        indicator.incrementActivityCount()
        indicator.decrementActivityCount()
        indicator.decrementActivityCount()
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 0)
        indicator.incrementActivityCount()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }), "one increment after the extra decrements counts")
        indicator.decrementActivityCount()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 0 }))
    }

    // MARK: Enabled or not

    func testCountingHappensWhileDisabledButTheBlockIsNotCalled() {
        indicator.isEnabled = false
        immediate()
        let called = expectation(description: "action block")
        called.isInverted = true
        indicator.setNetworkingActivityActionWithBlock { _ in called.fulfill() }

        indicator.incrementActivityCount()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }))

        // Answered only once counted: the count is seen while the task runs.
        let counting: NetworkActivityIndicatorManager = self.indicator
        routeHeld("/slow", until: { counting.activityCount == 2 })
        let manager = makeManager()
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/slow"), completionHandler: probe.data)
        probe.task.value = task
        task.resume()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 2 }), "tasks are counted while disabled")
        wait(for: [probe.expectation], timeout: 10)
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 1 }))
        indicator.decrementActivityCount()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 0 }))

        wait(for: [called], timeout: 0.5)
        XCTAssertFalse(indicator.isNetworkActivityIndicatorVisible)
    }

    func testDisablingWhileVisibleHidesAtOnce() {
        immediate()
        let visibility = watchVisibility()
        indicator.incrementActivityCount()
        wait(for: [visibility.shown], timeout: 5)
        XCTAssertTrue(indicator.isNetworkActivityIndicatorVisible)

        indicator.isEnabled = false
        XCTAssertFalse(indicator.isNetworkActivityIndicatorVisible, "hidden at once")
        wait(for: [visibility.hidden], timeout: 5)
        XCTAssertEqual(indicator.activityCount, 1, "disabling does not reset the count")

        indicator.decrementActivityCount()
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 0 }))
        drainMainQueue()
        XCTAssertEqual(visibility.values, [true, false])
    }

    // MARK: Operations (2.7 counted them too)

    func testOperationsAreCounted() {
        immediate()
        let visibility = watchVisibility()
        routeHeld("/operation", until: { visibility.values.contains(true) })
        let operation = HTTPRequestOperation(request: request("/operation"))
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        wait(for: [visibility.shown, visibility.hidden], timeout: 10, enforceOrder: true)
        XCTAssertTrue(spin(until: { self.indicator.activityCount == 0 }))
        drainMainQueue()
        XCTAssertEqual(visibility.values, [true, false])
    }

    // MARK: Instances

    func testSharedIsOneInstanceAndInitMakesIndependentOnes() {
        XCTAssertTrue(NetworkActivityIndicatorManager.shared() === NetworkActivityIndicatorManager.shared())
        let fresh = NetworkActivityIndicatorManager()
        XCTAssertFalse(fresh === NetworkActivityIndicatorManager.shared())
        XCTAssertFalse(fresh === indicator)
        fresh.incrementActivityCount()
        XCTAssertTrue(spin(until: { fresh.activityCount == 1 }))
        drainMainQueue()
        XCTAssertEqual(indicator.activityCount, 0, "instances count independently")
        fresh.decrementActivityCount()
    }

    func testDefaults() {
        let fresh = NetworkActivityIndicatorManager()
        XCTAssertFalse(fresh.isEnabled)
        XCTAssertFalse(fresh.isNetworkActivityIndicatorVisible)
        XCTAssertEqual(fresh.activityCount, 0)
        XCTAssertEqual(fresh.activationDelay, 1.0)
        XCTAssertEqual(fresh.completionDelay, 0.17, accuracy: 0.0001)
    }
}
