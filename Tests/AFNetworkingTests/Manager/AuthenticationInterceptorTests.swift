@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A bearer token as an `AuthenticationCredential`.
struct BearerToken: AuthenticationCredential, Equatable {
    var value: String
    var expired = false
    var requiresRefresh: Bool { expired }
}

/// Refreshes through the scripted server's `/refresh` (with a plain session
/// manager of its own, outside the interceptor) and counts the refreshes.
final class BearerAuthenticator: Authenticator, @unchecked Sendable {
    // @unchecked: `refreshes` is a Locked; the rest is immutable.
    let refreshURL: URL
    let refreshes = Locked(0)
    let refreshFails: Bool
    private let manager = HTTPSessionManager(baseURL: nil)

    init(refreshURL: URL, refreshFails: Bool = false) {
        self.refreshURL = refreshURL
        self.refreshFails = refreshFails
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = .global()
    }

    deinit { manager.invalidateSessionCancelingTasks(true) }

    func apply(_ credential: BearerToken, to urlRequest: inout URLRequest) {
        urlRequest.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: BearerToken, completion: @escaping @Sendable (Result<BearerToken, Error>) -> Void) {
        refreshes.withLock { $0 += 1 }
        if refreshFails { return completion(.failure(URLError(.userAuthenticationRequired))) }
        manager.get(refreshURL.absoluteString, parameters: nil, success: { _, object in
            let token = (object as? Data).map { String(decoding: $0, as: UTF8.self) } ?? ""
            completion(.success(BearerToken(value: token)))
        }, failure: { _, error in completion(.failure(error)) })
    }

    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: Error) -> Bool {
        response.statusCode == 401
    }

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: BearerToken) -> Bool {
        urlRequest.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.value)"
    }
}

/// `AuthenticationInterceptor` against the scripted server: `/data` answers
/// 401 unless the request carries `Authorization: Bearer good`; `/refresh`
/// hands out `good` after a short wait, so requests pile up behind it.
final class AuthenticationInterceptorTests: OperationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.route("/data") { request in
            let authorized = request.headers["Authorization"] == ["Bearer good"]
            let body = Data(authorized ? #"{"ok":true}"#.utf8 : #"{"error":"token"}"#.utf8)
            return [.head(status: authorized ? 200 : 401, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
                    .body(body), .end]
        }
        server.route("/refresh") { _ in
            [.wait(0.3), .head(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Length", "4")]), .body(Data("good".utf8)), .end]
        }
    }

    private var dataRequests: [ScriptedServer.Request] { server.requests.filter { $0.uri.hasPrefix("/data") } }

    /// Runs `count` GETs of /data at once through `interceptor`; returns how many failed, with the errors.
    private func fetchConcurrently(_ count: Int, through interceptor: any RequestInterceptor) -> [Error] {
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.requestInterceptor = interceptor
        manager.completionQueue = .global()
        let failures = Locked<[Error]>([])
        let done = expectation(description: "all")
        done.expectedFulfillmentCount = count
        for _ in 0..<count {
            manager.get("data", parameters: nil, success: { _, _ in done.fulfill() }, failure: { _, error in
                failures.append(error)
                done.fulfill()
            })
        }
        wait(for: [done], timeout: 30)
        return failures.value
    }

    func testFiveConcurrent401sShareOneRefreshAndAllSucceed() {
        let authenticator = BearerAuthenticator(refreshURL: url("refresh"))
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "stale"))
        XCTAssertEqual(fetchConcurrently(5, through: interceptor).count, 0)
        XCTAssertEqual(authenticator.refreshes.value, 1, "the 401s waited for one refresh")
        XCTAssertEqual(interceptor.credential, BearerToken(value: "good"))
        XCTAssertEqual(dataRequests.filter { $0.headers["Authorization"] == ["Bearer good"] }.count, 5)
    }

    func testAnExpiredCredentialIsRefreshedBeforeAnythingIsSent() {
        let authenticator = BearerAuthenticator(refreshURL: url("refresh"))
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "old", expired: true))
        XCTAssertEqual(fetchConcurrently(4, through: interceptor).count, 0)
        XCTAssertEqual(authenticator.refreshes.value, 1, "the requests were parked behind one refresh")
        XCTAssertEqual(dataRequests.count, 4, "none went out with the expired token")
        XCTAssertTrue(dataRequests.allSatisfy { $0.headers["Authorization"] == ["Bearer good"] })
    }

    func testNoCredentialFailsWithoutSending() {
        let interceptor = AuthenticationInterceptor(authenticator: BearerAuthenticator(refreshURL: url("refresh")))
        let failures = fetchConcurrently(1, through: interceptor)
        XCTAssertEqual(failures.first.flatMap(AuthenticationError.init), .missingCredential, "\(failures)")
        XCTAssertEqual(dataRequests.count, 0)
    }

    func testAFailedRefreshFailsEveryParkedRequestWithItsError() {
        let authenticator = BearerAuthenticator(refreshURL: url("refresh"), refreshFails: true)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "stale"))
        let failures = fetchConcurrently(3, through: interceptor)
        XCTAssertEqual(failures.count, 3)
        XCTAssertTrue(failures.allSatisfy { ($0 as NSError).code == NSURLErrorUserAuthenticationRequired }, "\(failures)")
    }

    func testRefreshesBeyondTheWindowFailInsteadOfLooping() {
        // The server refuses every token: each refresh is followed by another 401.
        server.route("/data") { _ in
            [.head(status: 401, headers: [("Content-Length", "0")]), .end]
        }
        let authenticator = BearerAuthenticator(refreshURL: url("refresh"))
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "stale"),
                                                    refreshWindow: .init(interval: 60, maximumAttempts: 2))
        let failures = fetchConcurrently(1, through: interceptor)
        XCTAssertEqual(failures.first.flatMap(AuthenticationError.init), .excessiveRefresh, "\(failures)")
        XCTAssertEqual(authenticator.refreshes.value, 2)
    }

    // MARK: - The state alone

    func testTheStateParksWaitersBehindOneRefreshAndAnswersThemAll() {
        var state = AuthenticationRefreshState<BearerToken>(credential: BearerToken(value: "a"))
        let request = URLRequest(url: URL(string: "http://127.0.0.1:9/")!)
        guard case .refresh(let credential) = state.park(.retry({ _ in }), seen: 0, now: 0, window: nil) else {
            return XCTFail("no refresh")
        }
        XCTAssertEqual(credential.value, "a")
        guard case .wait = state.park(.adapt(request, { _ in }), seen: 0, now: 0, window: nil) else { return XCTFail("not parked") }
        XCTAssertEqual(state.refreshed(.success(BearerToken(value: "b"))).count, 2)
        XCTAssertEqual(state.credential?.value, "b")
        XCTAssertEqual(state.generation, 1)
        XCTAssertEqual(state.refreshed(.success(BearerToken(value: "c"))).count, 0, "a second answer changes nothing")
        XCTAssertEqual(state.credential?.value, "b")
        guard case .again = state.park(.retry({ _ in }), seen: 0, now: 1, window: nil) else {
            return XCTFail("a waiter that judged an older credential looks again")
        }
    }

    /// A credential the caller sets while a refresh runs (a logout's nil, a
    /// new login) stands: the refresh still answers its waiters, but does
    /// not replace it.
    func testACredentialSetDuringARefreshIsNotReplacedByIt() {
        var state = AuthenticationRefreshState<BearerToken>(credential: BearerToken(value: "a"))
        guard case .refresh = state.park(.retry({ _ in }), seen: 0, now: 0, window: nil) else { return XCTFail("no refresh") }
        state.set(nil)
        XCTAssertEqual(state.refreshed(.success(BearerToken(value: "b"))).count, 1, "the waiter is answered")
        XCTAssertNil(state.credential, "the logout stands")

        state.set(BearerToken(value: "c"))
        guard case .refresh = state.park(.retry({ _ in }), seen: state.generation, now: 1, window: nil) else { return XCTFail("no refresh") }
        _ = state.refreshed(.success(BearerToken(value: "d")))
        XCTAssertEqual(state.credential?.value, "d", "nothing set meanwhile: the fresh credential is current")
    }

    /// A request that reaches a 401 without the credential at all (a redirect
    /// to another origin dropped `Authorization`) is not resent for ever: the
    /// interceptor's resends without a refresh stop at its bound and the 401
    /// is the answer.
    func testARefusedRequestThatNeverCarriedTheCredentialIsResentABoundedNumberOfTimes() {
        let other = try? ScriptedServer()
        defer { other?.shutdown() }
        guard let other else { return XCTFail("no second server") }
        other.route("/guarded") { _ in
            [.head(status: 401, headers: [("Content-Length", "0")]), .end]
        }
        server.respond("/away", status: 302, headers: [("Location", "http://127.0.0.1:\(other.port)/guarded")])
        let authenticator = BearerAuthenticator(refreshURL: server.baseURL.appendingPathComponent("refresh"))
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "good"))
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.requestInterceptor = interceptor
        manager.completionQueue = .global()
        let status = Locked<Int?>(nil)
        let done = expectation(description: "ended")
        manager.get("away", parameters: nil, success: { _, _ in done.fulfill() }, failure: { task, _ in
            status.withLock { $0 = (task?.response as? HTTPURLResponse)?.statusCode }
            done.fulfill()
        })
        wait(for: [done], timeout: 30)
        XCTAssertEqual(status.value, 401)
        let attempts = other.requests.filter { $0.uri.hasPrefix("/guarded") }.count
        XCTAssertEqual(attempts, 1 + AuthenticationInterceptor<BearerAuthenticator>.maximumResendsWithoutRefresh,
                       "the first attempt and the bounded resends")
        XCTAssertTrue(other.requests.allSatisfy { $0.headers.first(name: "authorization") == nil }, "the credential stays with its origin")
        XCTAssertEqual(authenticator.refreshes.value, 0)
    }

    func testTheStateBoundsRefreshesWithinTheWindow() {
        var state = AuthenticationRefreshState<BearerToken>(credential: BearerToken(value: "a"))
        let window = (interval: 10.0, maximumAttempts: 2)
        for time in [0.0, 1.0] {
            guard case .refresh = state.park(.retry({ _ in }), seen: state.generation, now: time, window: window) else { return XCTFail("no refresh") }
            _ = state.refreshed(.success(BearerToken(value: "t\(time)")))
        }
        guard case .fail(_, .excessiveRefresh) = state.park(.retry({ _ in }), seen: state.generation, now: 2, window: window) else {
            return XCTFail("a third refresh within 10 s")
        }
        guard case .refresh = state.park(.retry({ _ in }), seen: state.generation, now: 11.5, window: window) else {
            return XCTFail("the window moved on")
        }
    }
}
