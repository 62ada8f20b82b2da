import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import XCTest

/// README.md's interceptor: the token login stored, added just before each
/// attempt; no token fails the request before anything is sent.
private final class ReadmeBearerToken: RequestInterceptor {
    let token = Mutex<String?>(nil)

    func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        guard let value = token.withLock({ $0 }) else {
            return completion(.failure(URLError(.userAuthenticationRequired)))
        }
        var request = urlRequest
        request.setValue("Bearer \(value)", forHTTPHeaderField: "Authorization")
        completion(.success(request))
    }
}

/// README.md's "A dependency graph", run against a real server: login and
/// its dependents built unenqueued by a manager, all up front, and enqueued
/// together on one queue; login's success block stores a token, and the
/// dependents' interceptor adds it when each is sent; after a failed login
/// the interceptor fails the dependents and nothing is sent for them.
final class ReadmeDependencyGraphTests: OperationTestCase {
    /// The README's pattern with `loginStatus` for the login's answer; returns
    /// the `Authorization` values the dependents' requests arrived with, and
    /// the dependents.
    private func runGraph(loginStatus: Int) throws -> (arrived: [String: String], dependents: [HTTPRequestOperation]) {
        let body = Data(#"{"token":"t-42"}"#.utf8)
        server.route("/v1/login") { _ in
            [.head(status: loginStatus, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
             .body(body), .end]
        }
        let arrived = Locked<[String: String]>([:])
        for path in ["profile", "feed"] {
            server.route("/v1/\(path)") { request in
                arrived.value[path] = request.headers.first(name: "Authorization") ?? "none"
                return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
                        .body(Data("{}".utf8)), .end]
            }
        }
        let api = server.baseURL.appendingPathComponent("v1/")
        let manager = HTTPRequestOperationManager(baseURL: api)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4

        let bearer = ReadmeBearerToken()
        let login = try XCTUnwrap(manager.httpRequestOperation(withHTTPMethod: "POST", urlString: "login",
                                                               parameters: ["user": "ada", "password": "secret"], success: { _, json in
            bearer.token.withLock { $0 = (json as? [String: Any])?["token"] as? String }
        }, failure: nil))
        let dependents = try ["profile", "feed"].map { path in
            try XCTUnwrap(manager.httpRequestOperation(withHTTPMethod: "GET", urlString: path, parameters: nil,
                                                       success: nil, failure: nil))
        }
        for dependent in dependents {
            dependent.requestInterceptor = bearer
            dependent.addDependency(login)
        }
        queue.addOperation(login)
        for dependent in dependents { queue.addOperation(dependent) }

        // The blocks run on the main queue: turn the run loop until the graph is done (bounded).
        XCTAssertTrue(spin(until: { login.isFinished && dependents.allSatisfy { $0.isFinished } }, timeout: 10),
                      "login and its dependents finish")
        return (arrived.value, dependents)
    }

    func testTheDependentsCarryTheTokenTheLoginBlockStored() throws {
        let (arrived, dependents) = try runGraph(loginStatus: 200)
        XCTAssertEqual(arrived, ["profile": "Bearer t-42", "feed": "Bearer t-42"])
        XCTAssertEqual(dependents.map { $0.response?.statusCode }, [200, 200])
    }

    func testAFailedLoginSendsNoDependent() throws {
        let (arrived, dependents) = try runGraph(loginStatus: 401)
        XCTAssertEqual(arrived, [:])
        for dependent in dependents {
            XCTAssertEqual((dependent.error as NSError?)?.code, NSURLErrorUserAuthenticationRequired,
                           "the interceptor's error: \(String(describing: dependent.error))")
        }
    }
}
