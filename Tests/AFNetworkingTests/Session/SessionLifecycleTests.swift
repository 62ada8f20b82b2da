@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOHTTP1
import NIOPosix
import XCTest

/// The managed session's life: invalidation (with and without cancelling,
/// from a blocked main thread — 2.7 dispatched it to the main queue — twice,
/// with `resetSession:`), tasks after invalidation, `session` as a real
/// `URLSession` driven by the manager, and the configuration fields the
/// engine honours (headers, timeouts, cookies, cache, per-host limit).
final class SessionLifecycleTests: SessionTransferTestCase {
    /// A route that answers only after `seconds` (tests cancel or time out before).
    private func serveStall(_ path: String = "/stall", seconds: TimeInterval = 10) {
        server.route(path) { _ in [.wait(seconds), .head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end] }
    }

    /// Records each keyed completion handler's errors and fulfils its expectation.
    private final class Completions: @unchecked Sendable {
        private let calls = Locked<[String: [NSError?]]>([:])
        private var expectations: [String: XCTestExpectation] = [:]  // written before any task runs, then only read

        func expect(_ key: String, in testCase: XCTestCase) {
            expectations[key] = testCase.expectation(description: "completion of \(key)")
        }

        func data(_ key: String) -> @Sendable (URLResponse, Any?, Error?) -> Void {
            let expectation = expectations[key]
            return { _, _, error in
                self.calls.withLock { $0[key, default: []].append(error.map { $0 as NSError }) }
                expectation?.fulfill()
            }
        }

        func download(_ key: String) -> @Sendable (URLResponse, URL?, Error?) -> Void {
            let expectation = expectations[key]
            return { _, _, error in
                self.calls.withLock { $0[key, default: []].append(error.map { $0 as NSError }) }
                expectation?.fulfill()
            }
        }

        var all: [XCTestExpectation] { Array(expectations.values) }
        var errors: [String: [NSError?]] { calls.value }
    }

    /// The `AFURLSessionDidInvalidate` notifications naming `session`, in `events`.
    private func observeInvalidation(of session: URLSession, into events: Locked<[String]>,
                                     fulfilling expectation: XCTestExpectation? = nil) -> NSObjectProtocol {
        let identity = ObjectIdentifier(session)
        let observer = NotificationCenter.default.addObserver(forName: .AFURLSessionDidInvalidate, object: nil, queue: nil) { note in
            guard let object = note.object as AnyObject?, ObjectIdentifier(object) == identity else { return }
            events.append("notification")
            expectation?.fulfill()
        }
        addTeardownBlock { NotificationCenter.default.removeObserver(observer) }
        return observer
    }

    private func headers(in object: Any?) -> [String: String] {
        let raw = (object as? [String: Any])?["headers"] as? [String: Any] ?? [:]
        var headers: [String: String] = [:]
        for (name, value) in raw { headers[name.lowercased()] = value as? String }
        return headers
    }

    // MARK: Invalidation

    func testInvalidateCancelingTasksCancelsEveryUnfinishedTaskThenReportsInvalidation() throws {
        serveStall()
        let manager = makeManager()
        let session = manager.session
        let events = Locked<[String]>([])
        manager.setTaskDidCompleteBlock { _, task, _ in events.append("complete \(task.taskIdentifier)") }
        struct Invalid { var calls = 0; var error: Error?; var session: ObjectIdentifier?; var onQueue = false }
        let invalid = Locked(Invalid())
        manager.setSessionDidBecomeInvalidBlock { session, error in
            let onQueue = OperationQueue.current === manager.operationQueue
            invalid.withLock { $0.calls += 1; $0.error = error; $0.session = ObjectIdentifier(session); $0.onQueue = onQueue }
            events.append("invalid")
        }
        let notified = expectation(description: "AFURLSessionDidInvalidate")
        _ = observeInvalidation(of: session, into: events, fulfilling: notified)

        let completions = Completions()
        for key in ["running", "never resumed", "suspended download", "upload"] { completions.expect(key, in: self) }
        let running = manager.dataTask(with: request("/stall"), uploadProgress: nil, downloadProgress: nil,
                                       completionHandler: completions.data("running"))
        let idle = manager.dataTask(with: request("/stall"), uploadProgress: nil, downloadProgress: nil,
                                    completionHandler: completions.data("never resumed"))
        let download = manager.downloadTask(with: request("/stall"), progress: nil, destination: nil,
                                            completionHandler: completions.download("suspended download"))
        let upload = manager.uploadTask(with: request("/stall", method: "POST"), from: Data("body".utf8), progress: nil,
                                        completionHandler: completions.data("upload"))
        running.resume()
        download.resume()
        download.suspend()
        upload.resume()
        XCTAssertEqual(manager.tasks.count, 4, "every unfinished task, also one never resumed")

        manager.invalidateSessionCancelingTasks(true)
        wait(for: completions.all + [notified], timeout: 15)

        for (key, errors) in completions.errors {
            XCTAssertEqual(errors.count, 1, "\(key) completes once")
            XCTAssertEqual(errors.first??.domain, NSURLErrorDomain, key)
            XCTAssertEqual(errors.first??.code, NSURLErrorCancelled, key)
        }
        XCTAssertEqual(completions.errors.count, 4)
        for task in [running, idle, download, upload] as [URLSessionTask] { XCTAssertEqual(task.state, .completed) }
        XCTAssertTrue(manager.tasks.isEmpty)

        let seen = invalid.value
        XCTAssertEqual(seen.calls, 1)
        XCTAssertNil(seen.error, "an invalidation the caller asked for has no error")
        XCTAssertEqual(seen.session, ObjectIdentifier(session))
        XCTAssertTrue(seen.onQueue, "the invalid block runs on operationQueue")
        let order = events.value
        XCTAssertEqual(order.filter { $0.hasPrefix("complete") }.count, 4)
        XCTAssertEqual(order.suffix(2), ["invalid", "notification"], "every task first, then the block, then the notification")
        XCTAssertTrue(manager.session === session, "session stays the same, invalidated object")
    }

    func testInvalidateWithoutCancelingLetsARunningTaskFinish() throws {
        let body = pattern(200_000, salt: 21)
        server.route("/finishing") { _ in
            [.head(status: 200, headers: [("Content-Length", "\(body.count)")]), .body(body.subdata(in: 0..<50_000)), .wait(0.5),
             .body(body.subdata(in: 50_000..<body.count)), .end]
        }
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let session = manager.session
        let events = Locked<[String]>([])
        manager.setTaskDidCompleteBlock { _, _, _ in events.append("complete") }
        manager.setSessionDidBecomeInvalidBlock { _, error in events.append(error == nil ? "invalid" : "invalid with error") }
        let notified = expectation(description: "AFURLSessionDidInvalidate")
        _ = observeInvalidation(of: session, into: events, fulfilling: notified)

        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "running task completes")
        let task = manager.dataTask(with: request("/finishing"), uploadProgress: nil, downloadProgress: nil,
                                    completionHandler: recorder(outcome, done))
        task.resume()
        manager.invalidateSessionCancelingTasks(false)

        // Created after the call: cancelled when resumed, even before the session is gone.
        let lateOutcome = Locked(TaskOutcome())
        let lateDone = expectation(description: "late task completes")
        let late = manager.dataTask(with: request("/finishing"), uploadProgress: nil, downloadProgress: nil,
                                    completionHandler: recorder(lateOutcome, lateDone))
        late.resume()

        wait(for: [done, lateDone, notified], timeout: 15)
        XCTAssertNil(outcome.value.error, "a running task finishes")
        XCTAssertEqual(outcome.value.object as? Data, body)
        XCTAssertEqual(lateOutcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(server.requests.filter { $0.uri == "/finishing" }.count, 1, "the late task sent nothing")
        XCTAssertEqual(events.value.suffix(2), ["invalid", "notification"])
        XCTAssertEqual(events.value.first, "complete", "the invalidation waits for the running task")
    }

    func testInvalidationCalledOnTheMainThreadCompletesWhileMainIsBlocked() throws {
        serveStall()
        let manager = makeManager()
        manager.completionQueue = DispatchQueue(label: "session-lifecycle-completions")
        let invalidated = DispatchSemaphore(value: 0)
        let ranOnMain = Locked<Bool?>(nil)
        manager.setSessionDidBecomeInvalidBlock { _, _ in
            ranOnMain.value = Thread.isMainThread
            invalidated.signal()
        }
        let completed = DispatchSemaphore(value: 0)
        let error = Locked<NSError?>(nil)
        let task = manager.dataTask(with: request("/stall"), uploadProgress: nil, downloadProgress: nil) { _, _, failure in
            error.value = failure.map { $0 as NSError }
            completed.signal()
        }
        task.resume()
        XCTAssertTrue(Thread.isMainThread)
        manager.invalidateSessionCancelingTasks(true)
        // The main thread is now blocked: no run loop, no main queue (2.7 waited for it forever).
        XCTAssertEqual(completed.wait(timeout: .now() + 10), .success, "the task is cancelled without the main queue")
        XCTAssertEqual(invalidated.wait(timeout: .now() + 10), .success, "the invalidation finishes without the main queue")
        XCTAssertEqual(ranOnMain.value, false)
        XCTAssertEqual(error.value?.code, NSURLErrorCancelled)
    }

    func testInvalidationFromABackgroundThreadWhileMainIsBlocked() throws {
        serveStall()
        let manager = makeManager()
        manager.completionQueue = DispatchQueue(label: "session-lifecycle-completions")
        let invalidated = DispatchSemaphore(value: 0)
        let onOperationQueue = Locked<Bool?>(nil)
        manager.setSessionDidBecomeInvalidBlock { _, _ in
            onOperationQueue.value = !Thread.isMainThread && OperationQueue.current === manager.operationQueue
            invalidated.signal()
        }
        let task = manager.dataTask(with: request("/stall"), uploadProgress: nil, downloadProgress: nil, completionHandler: nil)
        task.resume()
        DispatchQueue.global().async { manager.invalidateSessionCancelingTasks(true) }
        XCTAssertEqual(invalidated.wait(timeout: .now() + 10), .success, "the invalidation finishes while main waits")
        XCTAssertEqual(onOperationQueue.value, true, "the invalid block runs on operationQueue, not main")
        XCTAssertTrue(eventually { task.state == .completed })
    }

    func testInvalidatingTwiceDoesNothingMore() throws {
        let manager = makeManager()
        let session = manager.session
        let blockCalls = Locked(0)
        let first = expectation(description: "first invalidation")
        let second = expectation(description: "a second invalidation")
        second.isInverted = true
        manager.setSessionDidBecomeInvalidBlock { _, _ in
            let calls = blockCalls.increment()
            if calls == 2 { second.fulfill() }
        }
        let events = Locked<[String]>([])
        _ = observeInvalidation(of: session, into: events, fulfilling: first)
        manager.invalidateSessionCancelingTasks(true)
        wait(for: [first], timeout: 10)
        manager.invalidateSessionCancelingTasks(true)
        manager.invalidateSessionCancelingTasks(false)
        wait(for: [second], timeout: 0.5)  // the window in which a second invalidation would show
        XCTAssertEqual(blockCalls.value, 1)
        XCTAssertEqual(events.value, ["notification"])
        XCTAssertTrue(manager.session === session)
    }

    func testTasksCreatedAfterInvalidationCompleteCancelledWhenResumed() throws {
        server.respond("/after", body: Data("x".utf8))
        let manager = makeManager()
        let notified = expectation(description: "invalidated")
        _ = observeInvalidation(of: manager.session, into: Locked([]), fulfilling: notified)
        manager.invalidateSessionCancelingTasks(true)
        wait(for: [notified], timeout: 10)

        let completions = Completions()
        for key in ["data", "upload", "download"] { completions.expect(key, in: self) }
        let tasks: [URLSessionTask] = [
            manager.dataTask(with: request("/after"), uploadProgress: nil, downloadProgress: nil, completionHandler: completions.data("data")),
            manager.uploadTask(with: request("/after", method: "POST"), from: Data("b".utf8), progress: nil,
                               completionHandler: completions.data("upload")),
            manager.downloadTask(with: request("/after"), progress: nil, destination: nil, completionHandler: completions.download("download")),
        ]
        for task in tasks {
            XCTAssertEqual(task.state, .suspended, "creating a task after invalidation does not raise (Apple's does)")
            task.resume()
        }
        wait(for: completions.all, timeout: 10)
        for (key, errors) in completions.errors {
            XCTAssertEqual(errors.count, 1, key)
            XCTAssertEqual(errors.first??.code, NSURLErrorCancelled, key)
        }
        XCTAssertTrue(tasks.allSatisfy { $0.state == .completed })
        XCTAssertTrue(server.requests.isEmpty, "nothing is sent by an invalidated session")
        XCTAssertTrue(manager.tasks.isEmpty)
    }

    func testResetSessionStartsAFreshSessionForNewTasks() throws {
        serveStall()
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":true}".utf8))
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 23
        let manager = makeManager(configuration)
        let old = manager.session
        let invalidSessions = Locked<[ObjectIdentifier]>([])
        manager.setSessionDidBecomeInvalidBlock { session, _ in invalidSessions.append(ObjectIdentifier(session)) }
        let notified = expectation(description: "the old session is invalidated")
        _ = observeInvalidation(of: old, into: Locked([]), fulfilling: notified)

        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "running task")
        let running = manager.dataTask(with: request("/stall"), uploadProgress: nil, downloadProgress: nil,
                                       completionHandler: recorder(outcome, done))
        running.resume()
        manager.invalidateSessionCancelingTasks(true, resetSession: true)
        XCTAssertFalse(manager.session === old, "a new session at once")
        XCTAssertEqual(manager.session.configuration.timeoutIntervalForRequest, 23, "with the same configuration")
        XCTAssertTrue((manager.session.delegate as AnyObject?) === manager)
        wait(for: [done, notified], timeout: 10)
        XCTAssertEqual(outcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(invalidSessions.value, [ObjectIdentifier(old)], "the notification and block name the old session")

        let (task, fresh) = runData(manager, request("/ok"))
        XCTAssertNil(fresh.error, "tasks of the new session work")
        XCTAssertEqual((fresh.object as? [String: Any])?["ok"] as? Bool, true)
        XCTAssertEqual(task.state, .completed)
    }

    // MARK: session

    func testSessionIsAURLSessionDrivenByTheManager() throws {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 17
        configuration.httpMaximumConnectionsPerHost = 3
        let manager = makeManager(configuration)
        let session: URLSession = manager.session
        XCTAssertTrue((session.delegate as AnyObject?) === manager, "the session's delegate is the manager")
        XCTAssertTrue(session.delegateQueue === manager.operationQueue)
        XCTAssertEqual(manager.operationQueue.maxConcurrentOperationCount, 1)
        XCTAssertEqual(session.configuration.timeoutIntervalForRequest, 17)
        XCTAssertEqual(session.configuration.httpMaximumConnectionsPerHost, 3)
        configuration.timeoutIntervalForRequest = 99
        XCTAssertEqual(manager.session.configuration.timeoutIntervalForRequest, 17, "the configuration was copied at init")
        XCTAssertTrue(manager.session === session)
    }

    func testTasksMadeThroughTheSessionBelongToTheManager() throws {
        server.respond("/via-session", body: Data("v".utf8))
        let manager = makeManager()
        let task = manager.session.dataTask(with: request("/via-session"))
        XCTAssertTrue(manager.tasks.contains { $0 === task })
        XCTAssertTrue(manager.dataTasks.contains { $0 === task })

        let listed = expectation(description: "getTasksWithCompletionHandler")
        let listedIdentifiers = Locked<[Int]>([])
        manager.session.getTasksWithCompletionHandler { data, upload, download in
            let all: [URLSessionTask] = data.map { $0 as URLSessionTask } + upload.map { $0 as URLSessionTask } + download.map { $0 as URLSessionTask }
            listedIdentifiers.value = all.map(\.taskIdentifier)
            listed.fulfill()
        }
        wait(for: [listed], timeout: 10)
        XCTAssertTrue(listedIdentifiers.value.contains(task.taskIdentifier))

        let identifier = task.taskIdentifier
        let completed = expectation(description: "task-did-complete block")
        let completionError = Locked<NSError?>(nil)
        manager.setTaskDidCompleteBlock { _, finished, error in
            guard finished.taskIdentifier == identifier else { return }
            completionError.value = error.map { $0 as NSError }
            completed.fulfill()
        }
        let resumed = expectation(description: "AFNetworkingTaskDidResume")
        let observer = NotificationCenter.default.addObserver(forName: .AFNetworkingTaskDidResume, object: task, queue: nil) { _ in
            resumed.fulfill()
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        task.resume()
        wait(for: [completed, resumed], timeout: 10)
        XCTAssertNil(completionError.value)
        XCTAssertEqual(server.requests.filter { $0.uri == "/via-session" }.count, 1)
        XCTAssertTrue(eventually { !manager.tasks.contains { $0 === task } })
    }

    /// URLSession's own completion handler gets no data with an error: a
    /// cancelled or failed task is never an empty success to `if let data`.
    func testTheSessionsOwnHandlerGetsNoDataWithAnError() throws {
        serveStall("/raw-cancel")
        let manager = makeManager()
        let result = Locked<(Data?, NSError?)>((Data("unset".utf8), nil))
        let done = expectation(description: "handler")
        let task = manager.session.dataTask(with: request("/raw-cancel")) { data, _, error in
            result.value = (data, error.map { $0 as NSError })
            done.fulfill()
        }
        task.resume()
        task.cancel()
        wait(for: [done], timeout: 10)
        XCTAssertEqual(result.value.1?.code, NSURLErrorCancelled)
        XCTAssertNil(result.value.0, "data with an error")

        server.respond("/raw-fine", body: Data("ok".utf8))
        let fine = Locked<Data?>(nil)
        let finished = expectation(description: "fine")
        manager.session.dataTask(with: request("/raw-fine")) { data, _, _ in
            fine.value = data
            finished.fulfill()
        }.resume()
        wait(for: [finished], timeout: 10)
        XCTAssertEqual(fine.value, Data("ok".utf8))
    }

    func testSessionTasksUseTheManagersSecurityPolicy() throws {
        let nginx = try SharedServers.nginx()
        let manager = makeManager()
        func fetch(_ marker: String) -> (NSError?, Int?) {
            let url = URL(string: "\(nginx.httpsURL.absoluteString)/1k.bin?policy=\(marker)")!
            let result = Locked<(NSError?, Int?)>((nil, nil))
            let done = expectation(description: "session task \(marker)")
            let task = manager.session.dataTask(with: URLRequest(url: url)) { _, response, error in
                result.value = (error.map { $0 as NSError }, (response as? HTTPURLResponse)?.statusCode)
                done.fulfill()
            }
            task.resume()
            wait(for: [done], timeout: 15)
            return result.value
        }
        // The default policy trusts the system store only: nginx's self-signed certificate is rejected.
        let rejectedMarker = UUID().uuidString
        let (rejected, _) = fetch(rejectedMarker)
        XCTAssertEqual(rejected?.domain, NSURLErrorDomain)
        XCTAssertTrue([NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot].contains(rejected?.code ?? 0),
                      "\(String(describing: rejected))")

        // (2.7's rule: an untrusted certificate's domain can only be checked with pinning.)
        let lenient = SecurityPolicy(pinningMode: .none)
        lenient.allowInvalidCertificates = true
        lenient.validatesDomainName = false
        manager.securityPolicy = lenient
        let acceptedMarker = UUID().uuidString
        let (accepted, status) = fetch(acceptedMarker)
        XCTAssertNil(accepted, "a task created after the change uses the new policy")
        XCTAssertEqual(status, 200)
        XCTAssertTrue(nginx.logShows(acceptedMarker))
        XCTAssertFalse(nginx.accessLog.contains(rejectedMarker), "a rejected server never receives the request")
    }

    // MARK: Configuration

    func testAdditionalHeadersAreAddedUnlessTheRequestSetsThem() throws {
        let httpbin = try SharedServers.httpbin()
        let configuration = URLSessionConfiguration.default
        configuration.httpAdditionalHeaders = ["X-Session-Extra": "from-configuration", "X-Overridden": "from-configuration"]
        let manager = makeManager(configuration)
        var request = URLRequest(url: httpbin.baseURL.appendingPathComponent("headers"))
        request.setValue("from-request", forHTTPHeaderField: "X-Overridden")
        request.timeoutInterval = 20
        let (task, outcome) = runData(manager, request)
        XCTAssertNil(outcome.error)
        let sent = headers(in: outcome.object)
        XCTAssertEqual(sent["x-session-extra"], "from-configuration")
        XCTAssertEqual(sent["x-overridden"], "from-request", "the request's own header wins")
        XCTAssertEqual(task.originalRequest?.value(forHTTPHeaderField: "X-Session-Extra"), "from-configuration")
        XCTAssertEqual(task.originalRequest?.value(forHTTPHeaderField: "X-Overridden"), "from-request")
    }

    func testTimeoutIntervalForRequestIsAnIdleTimeout() throws {
        serveStall("/idle-stall")
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 1
        let manager = makeManager(configuration)
        var request = self.request("/idle-stall", timeout: 60)
        request.timeoutInterval = 60
        let started = Date()
        let (_, outcome) = runData(manager, request, timeout: 15)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorTimedOut)
        XCTAssertGreaterThan(elapsed, 0.8)
        XCTAssertLessThan(elapsed, 6, "the configuration's 1 s, not the request's 60 s")
    }

    func testTheSmallerOfRequestAndConfigurationTimeoutApplies() throws {
        serveStall("/short-stall")
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 60
        let manager = makeManager(configuration)
        let started = Date()
        let (_, outcome) = runData(manager, request("/short-stall", timeout: 1), timeout: 15)
        XCTAssertEqual(outcome.error?.code, NSURLErrorTimedOut)
        XCTAssertLessThan(Date().timeIntervalSince(started), 6, "the request's 1 s, not the configuration's 60 s")
    }

    func testTimeoutIntervalForResourceEndsADrippingTransfer() throws {
        let nginx = try SharedServers.nginx()
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForResource = 1
        let manager = makeManager(configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        var request = URLRequest(url: URL(string: "\(nginx.httpURL.absoluteString)/slow/4m.bin?resource=\(UUID().uuidString)")!)
        request.timeoutInterval = 30
        let started = Date()
        let (_, outcome) = runData(manager, request, timeout: 20)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorTimedOut, "bytes keep arriving, but the whole task may take 1 s")
        XCTAssertGreaterThan(elapsed, 0.8)
        XCTAssertLessThan(elapsed, 6, "4 MiB at 512 KiB/s would take 8 s")
    }

    func testCookiesGoToTheConfigurationsStorageOnly() throws {
        let httpbin = try SharedServers.httpbin()
        let configuration = URLSessionConfiguration.ephemeral
        let manager = makeManager(configuration)
        let storage = try XCTUnwrap(manager.session.configuration.httpCookieStorage)
        XCTAssertFalse(storage === HTTPCookieStorage.shared, "an ephemeral configuration has its own storage")
        let name = "afnsession\(UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12))"
        let value = UUID().uuidString
        var components = URLComponents(url: httpbin.baseURL.appendingPathComponent("cookies/set"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: name, value: value)]
        var request = URLRequest(url: components.url!)
        request.timeoutInterval = 20
        let (_, outcome) = runData(manager, request)
        XCTAssertNil(outcome.error)
        let echoed = (outcome.object as? [String: Any])?["cookies"] as? [String: Any]
        XCTAssertEqual(echoed?[name] as? String, value, "stored, then sent to the redirect target /cookies")
        XCTAssertTrue(storage.cookies?.contains { $0.name == name && $0.value == value } ?? false, "in the configuration's storage")
        XCTAssertFalse(HTTPCookieStorage.shared.cookies?.contains { $0.name == name } ?? false, "not in the shared storage")
    }

    func testHTTPShouldSetCookiesFalseSendsNoCookie() throws {
        server.respond("/cookie-echo", body: Data("c".utf8))
        let cookie = try XCTUnwrap(HTTPCookie(properties: [.domain: "127.0.0.1", .path: "/", .name: "afnstored", .value: "yes"]))

        let sending = URLSessionConfiguration.ephemeral
        try XCTUnwrap(sending.httpCookieStorage).setCookie(cookie)
        let control = makeManager(sending)
        control.responseSerializer = HTTPResponseSerializer()
        XCTAssertNil(runData(control, request("/cookie-echo")).1.error)
        XCTAssertEqual(server.requests.last?.headers.first(name: "cookie"), "afnstored=yes", "control: a stored cookie is sent")

        let silent = URLSessionConfiguration.ephemeral
        silent.httpShouldSetCookies = false
        try XCTUnwrap(silent.httpCookieStorage).setCookie(cookie)
        let manager = makeManager(silent)
        manager.responseSerializer = HTTPResponseSerializer()
        XCTAssertNil(runData(manager, request("/cookie-echo")).1.error)
        XCTAssertEqual(server.requests.count, 2)
        XCTAssertNil(server.requests.last?.headers.first(name: "cookie"), "httpShouldSetCookies = false sends no Cookie header")
    }

    private func privateCache() -> URLCache {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-session-cache-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return URLCache(memoryCapacity: 1 << 20, diskCapacity: 8 << 20, diskPath: directory.path)
    }

    func testTheConfigurationsURLCacheIsUsedAndNilMeansNoCaching() throws {
        server.respond("/cached", headers: [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain")], body: Data("cached body".utf8))
        let count = { self.server.requests.filter { $0.uri == "/cached" }.count }

        let caching = URLSessionConfiguration.default
        caching.urlCache = privateCache()
        let manager = makeManager(caching)
        manager.responseSerializer = HTTPResponseSerializer()
        XCTAssertNil(runData(manager, request("/cached")).1.error)
        let (_, second) = runData(manager, request("/cached"))
        XCTAssertEqual(second.object as? Data, Data("cached body".utf8))
        XCTAssertEqual(count(), 1, "the second answer came from the configuration's cache")
        XCTAssertNil(URLCache.shared.cachedResponse(for: request("/cached")), "not from URLCache.shared")

        let uncached = URLSessionConfiguration.default
        uncached.urlCache = nil
        let plain = makeManager(uncached)
        plain.responseSerializer = HTTPResponseSerializer()
        XCTAssertNil(runData(plain, request("/cached")).1.error)
        XCTAssertNil(runData(plain, request("/cached")).1.error)
        XCTAssertEqual(count(), 3, "no cache: every request reaches the server")
    }

    func testRequestCachePolicyAppliesToRequestsUsingTheProtocolPolicy() throws {
        server.respond("/policy", headers: [("Cache-Control", "max-age=600")], body: Data("p".utf8))
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = privateCache()
        configuration.requestCachePolicy = .returnCacheDataDontLoad
        let manager = makeManager(configuration)
        manager.responseSerializer = HTTPResponseSerializer()

        let (_, offline) = runData(manager, request("/policy"))
        XCTAssertEqual(offline.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(offline.error?.code, NSURLErrorResourceUnavailable, "the configuration's policy: cache only")
        XCTAssertTrue(server.requests.isEmpty)

        var explicit = request("/policy")
        explicit.cachePolicy = .reloadIgnoringLocalCacheData
        let (_, loaded) = runData(manager, explicit)
        XCTAssertNil(loaded.error, "a request with its own policy keeps it")
        XCTAssertEqual(server.requests.count, 1)
    }

    func testAtMostHTTPMaximumConnectionsPerHostAtOnceAndAllTasksComplete() throws {
        let body = pattern(20_000, salt: 22)
        let probe = try ConnectionProbeServer(delay: .milliseconds(300), body: body)
        defer { probe.shutdown() }
        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = 2
        let manager = makeManager(configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        let completions = Completions()
        let keys = (0..<8).map { "task \($0)" }
        for key in keys { completions.expect(key, in: self) }
        let bodies = Locked<[String: Data]>([:])
        let tasks = keys.enumerated().map { index, key in
            manager.dataTask(with: URLRequest(url: probe.baseURL.appendingPathComponent("item-\(index)")), uploadProgress: nil,
                             downloadProgress: nil) { response, object, error in
                if let data = object as? Data { bodies.withLock { $0[key] = data } }
                completions.data(key)(response, object, error)
            }
        }
        tasks.forEach { $0.resume() }
        wait(for: completions.all, timeout: 30)
        for key in keys {
            XCTAssertEqual(completions.errors[key]?.count, 1, key)
            XCTAssertNil(completions.errors[key]?.first ?? nil, key)
            XCTAssertEqual(bodies.value[key], body, key)
        }
        XCTAssertEqual(probe.counters.served, 8)
        XCTAssertLessThanOrEqual(probe.counters.maxOpen, 2, "never more connections than httpMaximumConnectionsPerHost")
        XCTAssertLessThanOrEqual(probe.counters.maxInFlight, 2)
        XCTAssertEqual(probe.counters.maxInFlight, 2, "the limit is used: two at a time, not one")
    }

    /// A task kept after it completed (`self.task = …`, the usual pattern)
    /// lets go of its blocks, so an owner its blocks capture is freed (2.7
    /// removes the task's delegate at the end; URLSession lets its handler
    /// go) — and of its body, which the handler was given.
    func testAKeptTaskLetsGoOfItsBlocksAndItsBodyOnceItCompleted() throws {
        final class Owner: @unchecked Sendable {
            // @unchecked: set once before the task runs, read after it ended.
            var task: URLSessionDataTask?
            let done: XCTestExpectation
            init(done: XCTestExpectation) { self.done = done }
        }
        let body = pattern(300_000, salt: 5)
        server.respond("/kept", body: body)
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        weak var weakOwner: Owner?
        var kept: URLSessionDataTask?
        do {
            let owner = Owner(done: expectation(description: "completion"))
            owner.task = manager.dataTask(with: request("/kept"), uploadProgress: { _ in _ = owner }, downloadProgress: { _ in _ = owner },
                                          completionHandler: { _, _, _ in owner.done.fulfill() })
            kept = owner.task
            weakOwner = owner
            owner.task?.resume()
            wait(for: [owner.done], timeout: 10)
        }
        // The blocks are let go right after the handler's call is queued; a bounded wait for that.
        let deadline = Date().addingTimeInterval(10)
        while weakOwner != nil, Date() < deadline { usleep(10_000) }
        XCTAssertNil(weakOwner, "the completed task still holds the blocks that capture its owner")
        XCTAssertEqual(kept?.state, .completed)
        XCTAssertEqual(kept?.countOfBytesReceived, Int64(body.count), "the counts stay")
        let frontend = try XCTUnwrap((kept as? SessionDataTask)?.frontend)
        XCTAssertNil(frontend.requestDriver.finalOutcome?.memoryBody, "the body went to the handler; the task keeps none")
    }

    func testASuspendedTaskDoesNotRunItsIdleTimeout() throws {
        let body = pattern(200_000, salt: 23)
        let suspended = Locked(false)
        server.route("/paused") { _ in
            // The rest only once the task is suspended: it is still running then, however late the test gets there.
            [.head(status: 200, headers: [("Content-Length", "\(body.count)")]), .body(body.subdata(in: 0..<50_000)),
             .waitUntil({ suspended.value }, timeout: 30), .body(body.subdata(in: 50_000..<body.count)), .end]
        }
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 1
        let manager = makeManager(configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        let reached = expectation(description: "first bytes")
        let once = Locked(false)
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "completion")
        let task = manager.dataTask(with: request("/paused"), uploadProgress: nil, downloadProgress: { progress in
            if progress.completedUnitCount > 0, once.setOnce() { reached.fulfill() }
        }, completionHandler: recorder(outcome, done))
        task.resume()
        wait(for: [reached], timeout: 10)
        task.suspend()
        suspended.value = true
        XCTAssertEqual(task.state, .suspended)
        Thread.sleep(forTimeInterval: 2)  // the window: suspended twice as long as the idle timeout
        XCTAssertEqual(task.state, .suspended, "no idle timeout while suspended")
        task.resume()
        wait(for: [done], timeout: 10)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(outcome.value.object as? Data, body)
    }
}

/// An HTTP/1.1 server that answers every request after `delay` with `body`,
/// counting how many connections are open at once and how many requests are
/// being answered at once. No answer goes before two requests have been in
/// flight together (or 10 s after the first arrived, for a client that sends
/// one at a time): a client that may use two connections is seen using both
/// however slow the machine, not only when its second request comes within
/// the first one's delay.
private final class ConnectionProbeServer: @unchecked Sendable {
    struct Counters {
        var open = 0; var maxOpen = 0; var inFlight = 0; var maxInFlight = 0; var served = 0
        /// When answers go even without a second request in flight (set by the first request).
        var holdUntil: NIODeadline?
    }

    let delay: TimeAmount
    let body: Data
    private let state = Locked(Counters())
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private var channel: Channel?
    private(set) var port = 0
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    var counters: Counters { state.value }

    init(delay: TimeAmount, body: Data) throws {
        self.delay = delay
        self.body = body
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { [weak self] channel in
                guard let self else { return channel.eventLoop.makeSucceededVoidFuture() }
                self.state.withLock { $0.open += 1; $0.maxOpen = max($0.maxOpen, $0.open) }
                channel.closeFuture.whenComplete { _ in self.state.withLock { $0.open -= 1 } }
                return channel.pipeline.configureHTTPServerPipeline(withErrorHandling: false).flatMap {
                    channel.pipeline.addHandler(ConnectionProbeHandler(server: self))
                }
            }
        channel = try bootstrap.bind(host: "127.0.0.1", port: 0).wait()
        port = channel?.localAddress?.port ?? 0
    }

    func shutdown() {
        try? channel?.close().wait()
        try? group.syncShutdownGracefully()
    }

    fileprivate func requestStarted() {
        state.withLock { $0.inFlight += 1; $0.maxInFlight = max($0.maxInFlight, $0.inFlight) }
    }

    fileprivate func requestAnswered() {
        state.withLock { $0.inFlight -= 1; $0.served += 1 }
    }

    /// Whether answers may go: once two requests have been in flight together, or the hold has run out.
    fileprivate func mayAnswer() -> Bool {
        state.withLock { (counters: inout Counters) -> Bool in
            if counters.maxInFlight >= 2 { return true }
            let now = NIODeadline.now()
            let until = counters.holdUntil ?? now + TimeAmount.seconds(10)
            counters.holdUntil = until
            return now >= until
        }
    }
}

private final class ConnectionProbeHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let server: ConnectionProbeServer

    init(server: ConnectionProbeServer) { self.server = server }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        server.requestStarted()
        answerWhenAllowed(NIOLoopBound(context, eventLoop: context.eventLoop), on: context.eventLoop)
    }

    /// Answers after `delay` once the server lets answers go (checked every 10 ms on the event loop).
    private func answerWhenAllowed(_ bound: NIOLoopBound<ChannelHandlerContext>, on eventLoop: EventLoop) {
        guard server.mayAnswer() else {
            eventLoop.scheduleTask(in: .milliseconds(10)) { self.answerWhenAllowed(bound, on: eventLoop) }
            return
        }
        let body = server.body
        eventLoop.scheduleTask(in: server.delay) {
            let context = bound.value
            var headers = HTTPHeaders()
            headers.add(name: "Content-Length", value: "\(body.count)")
            headers.add(name: "Content-Type", value: "application/octet-stream")
            context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
            context.write(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
            // Counted as answered before the end goes out, so the next request
            // on this connection can never overlap it in the counters.
            self.server.requestAnswered()
            context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
        }
    }
}
