import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import XCTest

/// README.md's "A dependency graph", run against a real server: operations
/// built unenqueued by a manager, a login whose success block stores a token,
/// and the dependents built by a step that depends on login, each sending the
/// token; a failed login sends no dependent at all.
final class ReadmeDependencyGraphTests: OperationTestCase {
    /// The README's pattern with `loginStatus` for the login's answer; returns
    /// the `Authorization` values the dependents' requests arrived with.
    private func runGraph(loginStatus: Int) throws -> [String: String] {
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

        let token = Mutex<String?>(nil)
        let login = try XCTUnwrap(manager.httpRequestOperation(withHTTPMethod: "POST", urlString: "login",
                                                               parameters: ["user": "ada", "password": "secret"], success: { _, json in
            token.withLock { $0 = (json as? [String: Any])?["token"] as? String }
        }, failure: nil))
        let dependentsDone = DispatchGroup()
        let afterLogin = BlockOperation {
            guard let bearer = token.withLock({ $0 }) else { return }
            let dependents = ["profile", "feed"].compactMap { path -> HTTPRequestOperation? in
                dependentsDone.enter()
                return manager.httpRequestOperation(withHTTPMethod: "GET", urlString: path, parameters: nil,
                                                    headers: ["Authorization": "Bearer \(bearer)"],
                                                    success: { _, _ in dependentsDone.leave() },
                                                    failure: { _, _ in dependentsDone.leave() })
            }
            queue.addOperations(dependents, waitUntilFinished: false)
        }
        afterLogin.addDependency(login)
        queue.addOperations([login, afterLogin], waitUntilFinished: false)

        // The blocks run on the main queue: turn the run loop until the graph is done (bounded).
        XCTAssertTrue(spin(until: { afterLogin.isFinished }, timeout: 10), "login and the step after it finish")
        XCTAssertTrue(spin(until: { dependentsDone.wait(timeout: .now()) == .success }, timeout: 10), "the dependents finish")
        return arrived.value
    }

    func testTheDependentsCarryTheTokenTheLoginBlockStored() throws {
        XCTAssertEqual(try runGraph(loginStatus: 200), ["profile": "Bearer t-42", "feed": "Bearer t-42"])
    }

    func testAFailedLoginSendsNoDependent() throws {
        XCTAssertEqual(try runGraph(loginStatus: 401), [:])
    }
}
