import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `headers:` on every verb of both managers (AFNetworking 4.x), checked by
/// what the scripted server received.
final class PerCallHeadersTests: OperationTestCase {
    private typealias Received = (error: Error?, calls: Int)

    override func setUpWithError() throws {
        try super.setUpWithError()
        let body = Data(#"{"ok":"yes"}"#.utf8)
        // A HEAD answer has the GET answer's head and no body.
        server.route("/h") { request in
            [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
             .body(request.method == "HEAD" ? Data() : body), .end]
        }
    }

    private var baseURL: URL { server.baseURL }

    /// Runs a callback verb and waits (bounded) for its success or failure block.
    private func call(_ start: (@escaping @Sendable () -> Void, @escaping @Sendable (Error) -> Void) -> AnyObject?) -> (made: Bool, error: Error?) {
        let error = Locked<Error?>(nil)
        let done = expectation(description: "completion")
        let made = start({ done.fulfill() }, { failure in error.withLock { $0 = failure }; done.fulfill() }) != nil
        wait(for: [done], timeout: 15)
        return (made, error.value)
    }

    private func field(_ name: String, of request: ScriptedServer.Request) -> [String] { request.headers[name] }

    func testOperationManagerVerbsSendTheHeadersOverTheDefaultsForThatRequestOnly() throws {
        let manager = HTTPRequestOperationManager(baseURL: baseURL)
        let defaults = manager.requestSerializer.httpRequestHeaders
        let headers = ["X-Trace": "t1", "accept-language": "fr"]
        for verb in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] {
            let outcome = call { ok, fail in
                let success: HTTPRequestOperation.SuccessBlock = { _, _ in ok() }
                let failure: HTTPRequestOperationManager.FailureBlock = { _, error in fail(error) }
                switch verb {
                case "GET": return manager.get("h", parameters: ["q": "1"], headers: headers, success: success, failure: failure)
                case "HEAD": return manager.head("h", parameters: nil, headers: headers, success: { _ in ok() }, failure: failure)
                case "POST": return manager.post("h", parameters: ["q": "1"], headers: headers, success: success, failure: failure)
                case "PUT": return manager.put("h", parameters: nil, headers: headers, success: success, failure: failure)
                case "PATCH": return manager.patch("h", parameters: nil, headers: headers, success: success, failure: failure)
                default: return manager.delete("h", parameters: nil, headers: headers, success: success, failure: failure)
                }
            }
            XCTAssertNil(outcome.error, verb)
            let received = try XCTUnwrap(server.requests.last)
            XCTAssertEqual(received.method, verb)
            XCTAssertEqual(field("X-Trace", of: received), ["t1"], verb)
            XCTAssertEqual(field("Accept-Language", of: received), ["fr"], verb)
        }
        XCTAssertEqual(manager.requestSerializer.httpRequestHeaders, defaults, "the shared serializer is not changed")
        _ = call { ok, fail in manager.get("h", parameters: nil, success: { _, _ in ok() }, failure: { _, error in fail(error) }) }
        let plain = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(field("X-Trace", of: plain), [])
        XCTAssertEqual(field("Accept-Language", of: plain), [defaults["Accept-Language"] ?? ""])
    }

    func testSessionManagerVerbsSendTheHeadersOverTheDefaultsForThatRequestOnly() throws {
        let manager = HTTPSessionManager(baseURL: baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        let headers = ["X-Trace": "t2", "User-Agent": "mine/1"]
        for verb in ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] {
            let outcome = call { ok, fail in
                let success: @Sendable (URLSessionDataTask, Any?) -> Void = { _, _ in ok() }
                let failure: @Sendable (URLSessionDataTask?, Error) -> Void = { _, error in fail(error) }
                switch verb {
                case "GET": return manager.get("h", parameters: ["q": "1"], headers: headers, progress: nil, success: success, failure: failure)
                case "HEAD": return manager.head("h", parameters: nil, headers: headers, success: { _ in ok() }, failure: failure)
                case "POST": return manager.post("h", parameters: ["q": "1"], headers: headers, success: success, failure: failure)
                case "PUT": return manager.put("h", parameters: nil, headers: headers, success: success, failure: failure)
                case "PATCH": return manager.patch("h", parameters: nil, headers: headers, success: success, failure: failure)
                default: return manager.delete("h", parameters: nil, headers: headers, success: success, failure: failure)
                }
            }
            XCTAssertNil(outcome.error, verb)
            let received = try XCTUnwrap(server.requests.last)
            XCTAssertEqual(received.method, verb)
            XCTAssertEqual(field("X-Trace", of: received), ["t2"], verb)
            XCTAssertEqual(field("User-Agent", of: received), ["mine/1"], verb)
        }
        _ = call { ok, fail in manager.get("h", parameters: nil, success: { _, _ in ok() }, failure: { _, error in fail(error) }) }
        XCTAssertEqual(field("User-Agent", of: try XCTUnwrap(server.requests.last)), [manager.requestSerializer.value(forHTTPHeaderField: "User-Agent") ?? ""])
    }

    func testMultipartPostsCarryTheHeaders() throws {
        let operations = HTTPRequestOperationManager(baseURL: baseURL)
        let sessions = HTTPSessionManager(baseURL: baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        let part: @Sendable (MultipartFormData) throws -> Void = { $0.appendPart(withForm: Data("v".utf8), name: "f") }
        XCTAssertNil(call { ok, fail in
            operations.post("h", parameters: nil, headers: ["X-Part": "1"], constructingBodyWith: part,
                            success: { _, _ in ok() }, failure: { _, error in fail(error) })
        }.error)
        XCTAssertNil(call { ok, fail in
            sessions.post("h", parameters: nil, headers: ["X-Part": "2"], constructingBodyWith: part,
                          success: { _, _ in ok() }, failure: { _, error in fail(error) })
        }.error)
        let received = server.requests
        XCTAssertEqual(received.map { field("X-Part", of: $0) }, [["1"], ["2"]])
        XCTAssertTrue(received.allSatisfy { field("Content-Type", of: $0).first?.hasPrefix("multipart/form-data; boundary=") == true })
    }

    func testABadFieldFailsThroughTheFailureBlockAndNothingIsSent() throws {
        let operations = HTTPRequestOperationManager(baseURL: baseURL)
        let sessions = HTTPSessionManager(baseURL: baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        for headers in [["X-Evil": "a\r\nX-Injected: 1"], ["X-Evil": "a\nb"], ["Bad Name": "v"], ["X:y": "v"], ["": "v"], ["X-Nul": "a\u{0}b"]] {
            let first = call { _, fail in
                operations.get("h", parameters: nil, headers: headers, success: { _, _ in XCTFail("sent") }, failure: { operation, error in
                    XCTAssertNil(operation)
                    fail(error)
                })
            }
            XCTAssertFalse(first.made)
            XCTAssertEqual((first.error as NSError?)?.code, NSURLErrorBadURL, "\(headers)")
            XCTAssertEqual((first.error as NSError?)?.domain, NSURLErrorDomain)
            let second = call { _, fail in
                sessions.post("h", parameters: nil, headers: headers, success: { _, _ in XCTFail("sent") }, failure: { task, error in
                    XCTAssertNil(task)
                    fail(error)
                })
            }
            XCTAssertFalse(second.made)
            XCTAssertEqual((second.error as NSError?)?.code, NSURLErrorBadURL, "\(headers)")
        }
        XCTAssertEqual(server.requests.count, 0)
    }

    func testAsyncVerbsSendTheHeadersAndThrowForABadField() async throws {
        let operations = HTTPRequestOperationManager(baseURL: baseURL)
        let sessions = HTTPSessionManager(baseURL: baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        _ = try await operations.get("h", headers: ["X-Async": "op"])
        _ = try await sessions.put("h", parameters: ["a": "b"], headers: ["X-Async": "session"])
        _ = try await operations.head("h", headers: ["X-Async": "head"])
        let decoded = try await sessions.get("h", headers: ["X-Async": "typed"], as: [String: String].self)
        XCTAssertEqual(decoded, ["ok": "yes"])
        _ = try await operations.post("h", headers: ["X-Async": "multipart"]) { $0.appendPart(withForm: Data("v".utf8), name: "f") }
        XCTAssertEqual(server.requests.map { field("X-Async", of: $0) }, [["op"], ["session"], ["head"], ["typed"], ["multipart"]])
        XCTAssertEqual(server.requests[1].body, Data("a=b".utf8))
        do {
            _ = try await sessions.delete("h", headers: ["X-Evil": "a\r\nb"])
            XCTFail("sent")
        } catch {
            XCTAssertEqual((error as NSError).code, NSURLErrorBadURL)
        }
        do {
            _ = try await operations.patch("h", headers: ["Bad Name": "v"], as: [String: String].self)
            XCTFail("sent")
        } catch {
            XCTAssertEqual((error as NSError).code, NSURLErrorBadURL)
        }
        XCTAssertEqual(server.requests.count, 5)
    }

    /// The 2.x calls resolve to the 2.x verbs as before (the additions all
    /// need a label these calls do not have).
    func testExistingCallsStillResolveToTheOldVerbs() async throws {
        let operations = HTTPRequestOperationManager(baseURL: baseURL)
        let sessions = HTTPSessionManager(baseURL: baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        let old: (String, Any?, HTTPRequestOperation.SuccessBlock?, HTTPRequestOperationManager.FailureBlock?) -> HTTPRequestOperation?
            = operations.get(_:parameters:success:failure:)
        _ = old
        operations.completionQueue = DispatchQueue(label: "resolution")
        let done = expectation(description: "callback")
        operations.get("h", parameters: ["a": "b"], success: { _, _ in done.fulfill() }, failure: { _, _ in done.fulfill() })
        await fulfillment(of: [done], timeout: 15)
        let (response, object) = try await operations.get("h", parameters: ["a": 1])
        XCTAssertEqual(response.statusCode, 200)
        XCTAssertEqual((object as? [String: String]), ["ok": "yes"])
        let (_, sessionObject) = try await sessions.get("h", parameters: ["a": 2])
        XCTAssertEqual((sessionObject as? [String: String]), ["ok": "yes"])
        XCTAssertEqual(server.requests.map(\.uri), ["/h?a=b", "/h?a=1", "/h?a=2"])
    }
}
