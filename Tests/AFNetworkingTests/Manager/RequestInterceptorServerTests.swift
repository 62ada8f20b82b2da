import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import XCTest

/// The request interceptor over a real socket (the in-process scripted
/// server on 127.0.0.1): `/data` answers 401 unless the request carries
/// `Authorization: Bearer good`; `/refresh` hands out `good` after a short
/// wait, so concurrent 401s pile up behind one refresh.
final class RequestInterceptorServerTests: OperationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        let ok = Data(#"{"ok":true}"#.utf8)
        let denied = Data(#"{"error":"token"}"#.utf8)
        server.route("/data") { request in
            let authorized = request.headers["Authorization"] == ["Bearer good"]
            let body = authorized ? ok : denied
            return [.head(status: authorized ? 200 : 401, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
                    .body(body), .end]
        }
        server.route("/refresh") { _ in
            [.wait(0.3), .head(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Length", "4")]), .body(Data("good".utf8)), .end]
        }
    }

    private var dataRequests: [ScriptedServer.Request] { server.requests.filter { $0.uri.hasPrefix("/data") } }
    private var refreshCalls: Int { server.requests.filter { $0.uri.hasPrefix("/refresh") }.count }

    func testAnOperationManagerVerbIsAdaptedAndRetriedAfterA401AndReturnsItsOperationAtOnce() throws {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.requestInterceptor = TestTokenRefresher(token: "stale", refreshURL: url("refresh"))
        let outcome = Locked<(object: Any?, error: Error?)?>(nil)
        let done = expectation(description: "completion")
        let operation = manager.get("data", parameters: nil, success: { _, object in
            outcome.withLock { $0 = (object, nil) }
            done.fulfill()
        }, failure: { _, error in
            outcome.withLock { $0 = (nil, error) }
            done.fulfill()
        })
        XCTAssertNotNil(operation, "the verb hands back its operation synchronously")
        wait(for: [done], timeout: 15)
        XCTAssertNil(outcome.value?.error)
        XCTAssertEqual((outcome.value?.object as? [String: Bool])?["ok"], true)
        XCTAssertEqual(dataRequests.map { $0.headers["Authorization"] }, [["Bearer stale"], ["Bearer good"]])
        XCTAssertEqual(refreshCalls, 1)
        XCTAssertNil(operation?.error, "the retried 401 is not the operation's outcome")
        let copy = try XCTUnwrap(manager.copy() as? HTTPRequestOperationManager)
        XCTAssertNotNil(copy.requestInterceptor, "copy() keeps the interceptor")
    }

    func testASessionManagerVerbIsAdaptedAndRetriedAfterA401AndReturnsItsTaskAtOnce() throws {
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.requestInterceptor = TestTokenRefresher(token: "stale", refreshURL: url("refresh"))
        let failure = Locked<Error?>(nil)
        let done = expectation(description: "completion")
        let task = manager.get("data", parameters: nil, success: { _, _ in done.fulfill() }, failure: { _, error in
            failure.withLock { $0 = error }
            done.fulfill()
        })
        XCTAssertNotNil(task, "the verb hands back its task synchronously")
        wait(for: [done], timeout: 15)
        XCTAssertNil(failure.value)
        XCTAssertEqual((task?.response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(dataRequests.map { $0.headers["Authorization"] }, [["Bearer stale"], ["Bearer good"]])
        XCTAssertEqual(refreshCalls, 1)
        let copy = try XCTUnwrap(manager.copy() as? HTTPSessionManager)
        defer { copy.invalidateSessionCancelingTasks(true) }
        XCTAssertNotNil(copy.requestInterceptor, "copy() keeps the interceptor")
    }

    func testAsyncVerbsOfBothManagersGoThroughTheInterceptor() async throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        operations.requestInterceptor = TestTokenRefresher(token: "stale", refreshURL: url("refresh"))
        let (operationResponse, _) = try await operations.get("data")
        XCTAssertEqual(operationResponse.statusCode, 200)

        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        sessions.requestInterceptor = TestTokenRefresher(token: "stale", refreshURL: url("refresh"))
        let (sessionResponse, _) = try await sessions.get("data")
        XCTAssertEqual(sessionResponse.statusCode, 200)
        XCTAssertEqual(dataRequests.map { $0.headers["Authorization"] },
                       [["Bearer stale"], ["Bearer good"], ["Bearer stale"], ["Bearer good"]])
        XCTAssertEqual(refreshCalls, 2, "one refresh per interceptor")
    }

    func testFiveConcurrent401sShareOneRefreshAndAllSucceed() throws {
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        let refresher = TestTokenRefresher(token: "stale", refreshURL: url("refresh"))
        manager.requestInterceptor = refresher
        let failures = Locked(0)
        let done = expectation(description: "all five")
        done.expectedFulfillmentCount = 5
        for _ in 0..<5 {
            let task = manager.get("data", parameters: nil, success: { _, _ in done.fulfill() }, failure: { _, _ in
                failures.withLock { $0 += 1 }
                done.fulfill()
            })
            XCTAssertNotNil(task)
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(failures.value, 0)
        XCTAssertEqual(refreshCalls, 1, "the 401s waited for one refresh")
        XCTAssertEqual(dataRequests.filter { $0.headers["Authorization"] == ["Bearer good"] }.count, 5)
        XCTAssertEqual(refresher.refreshes, 1)
    }

    func testAFailedAttemptTheRetrierKeepsReachesTheCallerWithItsBody() throws {
        server.respond("/missing", status: 404, headers: [("Content-Type", "application/json")], body: Data(#"{"why":"gone"}"#.utf8))
        let asked = Locked(0)
        let keep = Interceptor(retryHandler: { _, response, _, _, completion in
            asked.withLock { $0 += 1 }
            completion(response?.statusCode == 404 ? .doNotRetry : .retry)
        })
        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        sessions.requestInterceptor = keep
        // (The response-decision block is not asked about an answer whose
        // body waited for the retrier, as for a declined redirect or 401: see
        // `RequestRetrier`.)
        let delegateData = Locked(Data())
        sessions.setDataTaskDidReceiveDataBlock { _, _, data in delegateData.withLock { $0.append(data) } }
        let sessionError = Locked<NSError?>(nil)
        let sessionDone = expectation(description: "session failure")
        sessions.get("missing", parameters: nil, success: { _, _ in sessionDone.fulfill() }, failure: { _, error in
            sessionError.withLock { $0 = error as NSError }
            sessionDone.fulfill()
        })
        wait(for: [sessionDone], timeout: 15)
        let failingResponse = sessionError.value?.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse
        XCTAssertEqual(failingResponse?.statusCode, 404)
        XCTAssertEqual(sessionError.value?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data, Data(#"{"why":"gone"}"#.utf8))
        XCTAssertEqual(delegateData.value, Data(#"{"why":"gone"}"#.utf8), "the kept answer's body reaches the data block once")

        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        operations.requestInterceptor = keep
        let operationDone = expectation(description: "operation failure")
        let operation = operations.get("missing", parameters: nil, success: { _, _ in operationDone.fulfill() },
                                       failure: { _, _ in operationDone.fulfill() })
        wait(for: [operationDone], timeout: 15)
        XCTAssertEqual(operation?.response?.statusCode, 404)
        XCTAssertEqual(operation?.responseData, Data(#"{"why":"gone"}"#.utf8))
        XCTAssertEqual(asked.value, 2, "asked once per request")
        XCTAssertEqual(server.requests.count, 2, "nothing retried")
    }

    func testASlowAdapterDoesNotHoldUpTheSessionVerb() throws {
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        // A blocking token store: it answers only once the test lets it, after
        // the verb returned (at most 30 s). A verb that waited for the adapter
        // would return only after that wait ran out, with the adapter answered.
        let release = DispatchSemaphore(value: 0)
        let adapterAnswered = Locked(false)
        manager.requestInterceptor = Interceptor(adaptHandler: { request, completion in
            _ = release.wait(timeout: .now() + 30)
            adapterAnswered.value = true
            completion(.success(TestTokenRefresher.bearer(request, "good")))
        })
        let done = expectation(description: "success")
        let task = manager.get("data", parameters: nil, success: { _, _ in done.fulfill() }, failure: { _, _ in done.fulfill() })
        XCTAssertFalse(adapterAnswered.value, "the verb returned before the adapter answered")
        release.signal()
        XCTAssertNotNil(task)
        wait(for: [done], timeout: 15)
        XCTAssertEqual((task?.response as? HTTPURLResponse)?.statusCode, 200)
    }

    func testAnAdaptErrorFailsTheVerbWithItAndSendsNothing() throws {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.requestInterceptor = Interceptor(adaptHandler: { _, completion in
            completion(.failure(NSError(domain: "TokenStore", code: 9)))
        })
        let failure = Locked<Error?>(nil)
        let done = expectation(description: "failure")
        let operation = manager.get("data", parameters: nil, success: { _, _ in done.fulfill() }, failure: { _, error in
            failure.withLock { $0 = error }
            done.fulfill()
        })
        XCTAssertNotNil(operation)
        wait(for: [done], timeout: 15)
        XCTAssertEqual((failure.value as NSError?)?.domain, "TokenStore")
        XCTAssertEqual((failure.value as NSError?)?.code, 9)
        XCTAssertEqual(server.requests.count, 0)
    }
}

/// The token-refresh pattern: every attempt carries the current token; a 401
/// for the current token starts one refresh and parks the retrier's answer
/// until it ends; a 401 for a token already replaced is retried at once.
final class TestTokenRefresher: RequestInterceptor {
    private struct State {
        var token: String
        var refreshing = false
        var parked: [@Sendable (RetryResult) -> Void] = []
        var refreshes = 0
    }

    private let state: Mutex<State>
    private let refreshURL: URL

    init(token: String, refreshURL: URL) {
        state = Mutex(State(token: token))
        self.refreshURL = refreshURL
    }

    var refreshes: Int { state.withLock { $0.refreshes } }

    func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        completion(.success(Self.bearer(urlRequest, state.withLock { $0.token })))
    }

    static func bearer(_ request: URLRequest, _ token: String) -> URLRequest {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
    }

    func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
               completion: @escaping @Sendable (RetryResult) -> Void) {
        guard response?.statusCode == 401, retryCount < 2 else { return completion(.doNotRetry) }
        let sent = request.value(forHTTPHeaderField: "Authorization")
        // nil: the token changed since this attempt was sent; true: this call refreshes.
        let startsRefresh = state.withLock { state -> Bool? in
            guard sent == "Bearer \(state.token)" else { return nil }
            state.parked.append(completion)
            if state.refreshing { return false }
            state.refreshing = true
            state.refreshes += 1
            return true
        }
        guard let startsRefresh else { return completion(.retry) }
        if startsRefresh { refresh() }
    }

    private func refresh() {
        let operation = HTTPRequestOperation(request: URLRequest(url: refreshURL))
        operation.completionQueue = .global()
        operation.setCompletionBlockWithSuccess({ [self] operation, _ in
            finish(operation.responseData.flatMap { String(data: $0, encoding: .utf8) })
        }, failure: { [self] _, _ in finish(nil) })
        operation.start()
    }

    private func finish(_ token: String?) {
        let parked = state.withLock { state -> [@Sendable (RetryResult) -> Void] in
            if let token { state.token = token }
            state.refreshing = false
            defer { state.parked = [] }
            return state.parked
        }
        // Answered after unlocking: an answer may start the next attempt on this thread.
        for completion in parked { completion(token == nil ? .doNotRetry : .retry) }
    }
}
