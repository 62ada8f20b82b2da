@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Base class of the session-layer suites (URLSessionManager, its delegate
/// blocks, HTTPSessionManager, the activity indicator): the scripted server
/// and isolated cache of `OperationTestCase`, plus managers, notification logs
/// and temporary files that are cleaned up after every test.
class SessionTasksTestCase: OperationTestCase {
    private var managers: [URLSessionManager] = []
    private var logs: [TaskNotificationLog] = []
    private var temporaryItems: [URL] = []

    override func tearDown() {
        // Cancel whatever a test left behind and let the cancellations finish
        // (bounded) while the test's servers are still up, so no completion of
        // this test runs during the next one.
        for manager in managers { manager.invalidateSessionCancelingTasks(true) }
        let managers = self.managers
        _ = spin(until: { managers.allSatisfy { $0.tasks.isEmpty } }, timeout: 5)
        drainMainQueue()
        self.managers = []
        for log in logs { log.stop() }
        logs = []
        for item in temporaryItems { try? FileManager.default.removeItem(at: item) }
        temporaryItems = []
        super.tearDown()
    }

    // MARK: Servers

    func httpbinURL(_ path: String) throws -> URL {
        try SharedServers.httpbin().baseURL.appendingPathComponent(path)
    }

    /// A `scheme://host:port` URL on which nothing listens.
    func refusedURL(_ path: String = "refused") -> URL {
        URL(string: "http://127.0.0.1:\(Fixtures.refusedPort)/\(path)")!
    }

    /// A route on the scripted server that answers only after `delay` (so a
    /// task stays running long enough to suspend or cancel it).
    func routeSlowly(_ path: String, delay: TimeInterval = 5, status: Int = 200, body: Data = Data("{}".utf8),
                     contentType: String = "application/json") {
        server.route(path) { _ in
            [.wait(delay),
             .head(status: status, headers: [("Content-Type", contentType), ("Content-Length", "\(body.count)")]),
             .body(body), .end]
        }
    }

    // MARK: Managers

    /// A manager that is invalidated (cancelling its tasks) after the test.
    func makeManager(configuration: URLSessionConfiguration? = nil) -> URLSessionManager {
        track(URLSessionManager(sessionConfiguration: configuration))
    }

    func makeHTTPManager(baseURL: URL?, configuration: URLSessionConfiguration? = nil) -> HTTPSessionManager {
        track(HTTPSessionManager(baseURL: baseURL, sessionConfiguration: configuration))
    }

    /// Registers `manager` for invalidation after the test and returns it.
    @discardableResult
    func track<Manager: URLSessionManager>(_ manager: Manager) -> Manager {
        managers.append(manager)
        return manager
    }

    // MARK: Notifications and queues

    /// Records every notification named `name` until the end of the test.
    /// `snapshot` runs when each notification arrives and its result is kept
    /// with it (to tell what had happened by then).
    func observe(_ name: Notification.Name, snapshot: (@Sendable () -> Bool)? = nil) -> TaskNotificationLog {
        let log = TaskNotificationLog(name, snapshot: snapshot)
        logs.append(log)
        return log
    }

    /// Waits (bounded) until whatever is queued on the main queue now, and
    /// what that enqueues on it in turn, has run.
    func drainMainQueue() {
        for _ in 0..<2 {
            let fence = expectation(description: "main queue fence")
            DispatchQueue.main.async { fence.fulfill() }
            wait(for: [fence], timeout: 10)
        }
    }

    /// Waits (bounded) until the work queued on `queue` now has run.
    func drain(_ queue: OperationQueue) {
        let fence = expectation(description: "operation queue fence")
        queue.addOperation { fence.fulfill() }
        wait(for: [fence], timeout: 10)
    }

    // MARK: Completion probes

    func makeProbe(_ description: String = "completion handler") -> TaskCompletionProbe {
        TaskCompletionProbe(expectation(description: description))
    }

    /// Resumes `task` (through a `URLSessionTask` reference) and waits for `probe`'s handler.
    @discardableResult
    func run(_ task: URLSessionTask, _ probe: TaskCompletionProbe, timeout: TimeInterval = 20) -> TaskCompletionProbe.Outcome {
        probe.task.value = task
        task.resume()
        wait(for: [probe.expectation], timeout: timeout)
        return probe.outcome.value
    }

    func verbCall(_ description: String = "success or failure") -> VerbCallProbe {
        VerbCallProbe(expectation(description: description))
    }

    // MARK: Files

    /// A path in the temporary directory that does not exist yet and is removed after the test.
    func temporaryFileURL(_ label: String = "download") -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("afn-session-\(label)-\(UUID().uuidString)")
        temporaryItems.append(url)
        return url
    }

    /// Removes `url` after the test (for files the package created for a test).
    func removeAfterTest(_ url: URL) {
        temporaryItems.append(url)
    }

    // MARK: JSON

    func json(_ object: Any?) -> [String: Any]? { object as? [String: Any] }

    func form(_ object: Any?) -> [String: String]? { json(object)?["form"] as? [String: String] }

    func args(_ object: Any?) -> [String: String]? { json(object)?["args"] as? [String: String] }
}

/// What one task's completion handler received, and how often it ran.
final class TaskCompletionProbe: @unchecked Sendable {
    // @unchecked: the mutable parts are `Locked` boxes.
    struct Outcome {
        var calls = 0
        var response: URLResponse?
        var object: Any?
        var fileURL: URL?
        var error: NSError?
        /// `task.state` as the handler saw it.
        var stateInHandler: URLSessionTask.State?
        var onMainThread = false
        /// Whether the handler ran on the queue named by `expectedQueueKey`.
        var onExpectedQueue = false
        /// Whether `expectedGroup` had work outstanding while the handler ran.
        var insideExpectedGroup = false
    }

    let outcome = Locked(Outcome())
    /// The task the handler belongs to (set before it is resumed).
    let task = Locked<URLSessionTask?>(nil)
    let expectation: XCTestExpectation
    /// Optional checks made inside the handler.
    let expectedQueueKey = Locked<DispatchSpecificKey<String>?>(nil)
    let expectedGroup = Locked<DispatchGroup?>(nil)

    init(_ expectation: XCTestExpectation) {
        expectation.assertForOverFulfill = true
        self.expectation = expectation
    }

    private func record(response: URLResponse, object: Any?, fileURL: URL?, error: Error?) {
        let state = task.value?.state
        let key = expectedQueueKey.value
        let onQueue = key.map { DispatchQueue.getSpecific(key: $0) != nil } ?? false
        let group = expectedGroup.value
        // The handler's own block holds the group, so a zero wait times out inside it.
        let inside = group.map { $0.wait(timeout: .now()) == .timedOut } ?? false
        outcome.withLock {
            $0.calls += 1
            $0.response = response
            $0.object = object
            $0.fileURL = fileURL
            $0.error = error.map { $0 as NSError }
            $0.stateInHandler = state
            $0.onMainThread = Thread.isMainThread
            $0.onExpectedQueue = onQueue
            $0.insideExpectedGroup = inside
        }
        expectation.fulfill()
    }

    /// For data and upload tasks.
    var data: @Sendable (URLResponse, Any?, Error?) -> Void {
        { [self] response, object, error in record(response: response, object: object, fileURL: nil, error: error) }
    }

    /// For download tasks.
    var download: @Sendable (URLResponse, URL?, Error?) -> Void {
        { [self] response, fileURL, error in record(response: response, object: nil, fileURL: fileURL, error: error) }
    }
}

/// What an HTTPSessionManager verb's success or failure block received.
final class VerbCallProbe: @unchecked Sendable {
    // @unchecked: the mutable parts are `Locked` boxes.
    struct Outcome {
        var successes = 0
        var failures = 0
        var task: URLSessionDataTask?
        var object: Any?
        var error: NSError?
        var onMainThread = false
        var stateInBlock: URLSessionTask.State?
    }

    let outcome = Locked(Outcome())
    let expectation: XCTestExpectation

    init(_ expectation: XCTestExpectation) {
        expectation.assertForOverFulfill = true
        self.expectation = expectation
    }

    var success: @Sendable (URLSessionDataTask, Any?) -> Void {
        { [outcome, expectation] task, object in
            let state = task.state
            outcome.withLock {
                $0.successes += 1
                $0.task = task
                $0.object = object
                $0.onMainThread = Thread.isMainThread
                $0.stateInBlock = state
            }
            expectation.fulfill()
        }
    }

    /// HEAD's success block has no response object.
    var headSuccess: @Sendable (URLSessionDataTask) -> Void {
        let success = self.success
        return { task in success(task, nil) }
    }

    var failure: @Sendable (URLSessionDataTask?, Error) -> Void {
        { [outcome, expectation] task, error in
            let state = task?.state
            outcome.withLock {
                $0.failures += 1
                $0.task = task
                $0.error = error as NSError
                $0.onMainThread = Thread.isMainThread
                $0.stateInBlock = state
            }
            expectation.fulfill()
        }
    }
}

/// Records the notifications of one name (synchronously, on the posting thread).
final class TaskNotificationLog: @unchecked Sendable {
    // @unchecked: the mutable parts are `Locked` boxes.
    struct Entry {
        let object: AnyObject?
        let userInfo: [AnyHashable: Any]
        let onMainThread: Bool
        /// The log's snapshot at the time of the notification (false without one).
        let snapshot: Bool
    }

    let name: Notification.Name
    private let recorded = Locked<[Entry]>([])
    private let token = Locked<NSObjectProtocol?>(nil)

    init(_ name: Notification.Name, snapshot: (@Sendable () -> Bool)? = nil) {
        self.name = name
        let recorded = self.recorded
        token.value = NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
            let entry = Entry(object: note.object.map { $0 as AnyObject }, userInfo: note.userInfo ?? [:],
                              onMainThread: Thread.isMainThread, snapshot: snapshot?() ?? false)
            recorded.append(entry)
        }
    }

    func stop() {
        let observer = token.withLock { current -> NSObjectProtocol? in
            defer { current = nil }
            return current
        }
        if let observer { NotificationCenter.default.removeObserver(observer) }
    }

    var entries: [Entry] { recorded.value }

    func entries(for object: AnyObject) -> [Entry] { recorded.value.filter { $0.object === object } }

    func count(for object: AnyObject) -> Int { entries(for: object).count }
}

/// Spellings that are deprecated on purpose (2.7 names, `.becomeDownload`),
/// reached through a protocol so that using them here raises no warning.
protocol SessionLegacySpellings {
    var taskDidStart: Notification.Name { get }
    var taskDidFinish: Notification.Name { get }
    var finishSerializedResponseKey: String { get }
    var finishResponseSerializerKey: String { get }
    var finishResponseDataKey: String { get }
    var finishErrorKey: String { get }
    var finishAssetPathKey: String { get }
    var becomeDownload: URLSession.ResponseDisposition { get }
    var sessionManagerType: AnyClass { get }
    var httpSessionManagerType: AnyClass { get }
    var activityIndicatorManagerType: AnyClass { get }
}

struct SessionLegacyNames: SessionLegacySpellings {
    @available(*, deprecated)
    var taskDidStart: Notification.Name { .AFNetworkingTaskDidStart }
    @available(*, deprecated)
    var taskDidFinish: Notification.Name { .AFNetworkingTaskDidFinish }
    @available(*, deprecated)
    var finishSerializedResponseKey: String { AFNetworkingTaskDidFinishSerializedResponseKey }
    @available(*, deprecated)
    var finishResponseSerializerKey: String { AFNetworkingTaskDidFinishResponseSerializerKey }
    @available(*, deprecated)
    var finishResponseDataKey: String { AFNetworkingTaskDidFinishResponseDataKey }
    @available(*, deprecated)
    var finishErrorKey: String { AFNetworkingTaskDidFinishErrorKey }
    @available(*, deprecated)
    var finishAssetPathKey: String { AFNetworkingTaskDidFinishAssetPathKey }
    @available(*, deprecated)
    var becomeDownload: URLSession.ResponseDisposition { .becomeDownload }
    @available(*, deprecated)
    var sessionManagerType: AnyClass { AFURLSessionManager.self }
    @available(*, deprecated)
    var httpSessionManagerType: AnyClass { AFHTTPSessionManager.self }
    @available(*, deprecated)
    var activityIndicatorManagerType: AnyClass { AFNetworkActivityIndicatorManager.self }

    /// Through the protocol, so callers see no deprecation.
    static var current: SessionLegacySpellings { SessionLegacyNames() }
}
