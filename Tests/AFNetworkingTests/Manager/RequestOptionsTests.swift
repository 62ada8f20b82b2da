import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Per-call options (`RequestOptions.with`) on every verb of both managers:
/// the requests they build carry the options in scope, a server that goes
/// silent times the call out after the per-call interval, and an option that
/// cannot be applied fails the call with nothing sent.
final class RequestOptionsTests: OperationTestCase {
    private let part: @Sendable (MultipartFormData) throws -> Void = { $0.appendPart(withForm: Data("v".utf8), name: "f") }

    override func setUpWithError() throws {
        try super.setUpWithError()
        server.route("/h") { _ in [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
                                   .body(Data("{}".utf8)), .end] }
        // A head, then silence: only an idle timeout ends it.
        server.route("/stall") { _ in [.head(status: 200, headers: [("Content-Length", "100")]), .body(Data("x".utf8)), .wait(30)] }
    }

    /// Runs `start` (a callback verb) and waits (bounded) for its block.
    private func call(_ start: (@escaping @Sendable (Error?) -> Void) -> AnyObject?) -> (made: AnyObject?, error: Error?) {
        let error = Locked<Error?>(nil)
        let done = expectation(description: "completion")
        let made = start { failure in error.withLock { $0 = failure }; done.fulfill() }
        wait(for: [done], timeout: 15)
        return (made, error.value)
    }

    func testEveryCallbackVerbOfBothManagersBuildsItsRequestWithTheOptionsInScope() throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        let options = RequestOptions(timeoutInterval: 7)
        // Each verb variant once: plain, headers:, Encodable, multipart (with and without headers), unenqueued.
        let verbs: [(String, (@escaping @Sendable (Error?) -> Void) -> AnyObject?)] = [
            ("operations get", { done in operations.get("h", parameters: nil, success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }),
            ("operations head", { done in operations.head("h", parameters: nil, success: { _ in done(nil) }, failure: { _, e in done(e) }) }),
            ("operations put headers", { done in
                operations.put("h", parameters: nil, headers: ["X-A": "1"], success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }),
            ("operations post encodable", { done in
                operations.post("h", parameters: ["a": 1], encoder: JSONParameterEncoder.default, success: { _, _ in done(nil) },
                                failure: { _, e in done(e) }) }),
            ("operations post multipart", { [part] done in
                operations.post("h", parameters: nil, constructingBodyWith: part, success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }),
            ("operations post multipart headers", { [part] done in
                operations.post("h", parameters: nil, headers: ["X-A": "1"], constructingBodyWith: part, success: { _, _ in done(nil) },
                                failure: { _, e in done(e) }) }),
            ("session get", { done in sessions.get("h", parameters: nil, success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }),
            ("session delete headers", { done in
                sessions.delete("h", parameters: nil, headers: ["X-A": "1"], success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }),
            ("session patch encodable", { done in
                sessions.patch("h", parameters: ["a": 1], encoder: JSONParameterEncoder.default, success: { _, _ in done(nil) },
                               failure: { _, e in done(e) }) }),
            ("session post multipart", { [part] done in
                sessions.post("h", parameters: nil, constructingBodyWith: part, success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }),
        ]
        for (name, verb) in verbs {
            let scoped = RequestOptions.with(options) { call(verb) }
            XCTAssertNil(scoped.error, name)
            XCTAssertEqual(timeout(of: scoped.made), 7, "\(name): the option in scope")
            let plain = call(verb)
            XCTAssertEqual(timeout(of: plain.made), 60, "\(name): outside the scope, the serializer's")
        }
        let unenqueued = RequestOptions.with(options) {
            operations.httpRequestOperation(withHTTPMethod: "GET", urlString: "h", parameters: nil, success: nil, failure: nil)
        }
        XCTAssertEqual(unenqueued?.request.timeoutInterval, 7)
        XCTAssertEqual(operations.requestSerializer.timeoutInterval, 60, "the shared serializer is not changed")
    }

    func testASilentServerTimesOutAfterThePerCallIntervalOnBothManagers() async throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        let short = RequestOptions(timeoutInterval: 0.5)
        let started = Date()
        let callback = RequestOptions.with(short) {
            call { done in operations.get("stall", parameters: nil, success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }
        }
        XCTAssertEqual((callback.error as NSError?)?.code, NSURLErrorTimedOut)
        let task = RequestOptions.with(short) {
            call { done in sessions.get("stall", parameters: nil, success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }
        }
        XCTAssertEqual((task.error as NSError?)?.code, NSURLErrorTimedOut)
        for manager in ["operations", "sessions"] {
            do {
                _ = try await RequestOptions.with(short) {
                    manager == "operations" ? try await operations.get("stall").response : try await sessions.get("stall").response
                }
                XCTFail("\(manager): a silent server answered")
            } catch {
                XCTAssertEqual((error as NSError).code, NSURLErrorTimedOut, "\(manager): \(error)")
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "four half-second timeouts, not the serializer's 60 s")
    }

    func testAnIntervalThatIsNotAPositiveNumberFailsTheCallAndNothingIsSent() async throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        let sessions = HTTPSessionManager(baseURL: server.baseURL)
        defer { sessions.invalidateSessionCancelingTasks(true) }
        for bad in [0, -1, .nan, .infinity, -.infinity] as [TimeInterval] {
            let options = RequestOptions(timeoutInterval: bad)
            let first = RequestOptions.with(options) {
                call { done in operations.get("h", parameters: nil, success: { _, _ in done(nil) }, failure: { _, e in done(e) }) }
            }
            XCTAssertNil(first.made, "\(bad): no operation")
            XCTAssertEqual((first.error as NSError?)?.domain, NSURLErrorDomain)
            XCTAssertEqual((first.error as NSError?)?.code, NSURLErrorBadURL, "\(bad)")
            let second = RequestOptions.with(options) {
                call { [part] done in
                    sessions.post("h", parameters: nil, constructingBodyWith: part, success: { _, _ in done(nil) }, failure: { _, e in done(e) })
                }
            }
            XCTAssertNil(second.made, "\(bad): no task")
            XCTAssertEqual((second.error as NSError?)?.code, NSURLErrorBadURL, "\(bad)")
            do {
                _ = try await RequestOptions.with(options) { try await sessions.get("h", parameters: nil, headers: ["X-A": "1"]) }
                XCTFail("\(bad): sent")
            } catch {
                XCTAssertEqual((error as NSError).code, NSURLErrorBadURL, "\(bad)")
                XCTAssertTrue((error as NSError).localizedDescription.contains("timeoutInterval"), error.localizedDescription)
            }
        }
        XCTAssertTrue(server.requests.isEmpty, "nothing was sent")
    }

    private func timeout(of made: AnyObject?) -> TimeInterval? {
        if let operation = made as? HTTPRequestOperation { return operation.request.timeoutInterval }
        if let task = made as? URLSessionTask { return task.originalRequest?.timeoutInterval }
        return nil
    }
}
