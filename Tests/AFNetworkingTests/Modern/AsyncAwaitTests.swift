@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The async/await twins of the callback API (API.md "Async/await"):
/// `HTTPRequestOperation.result()`, the verbs of both managers with their
/// Decodable variants, and `URLSessionManager.data/upload/download`. Every
/// test body runs under `modernBounded`, so a request that never calls back
/// fails the test instead of hanging the run.
final class AsyncAwaitTests: OperationTestCase {
    private struct HTTPBinEcho: Decodable, Sendable {
        let url: String
        let args: [String: String]
    }

    private struct HTTPBinForm: Decodable, Sendable {
        let form: [String: String]
    }

    /// Decodes from httpbin's /get only if a field that is never there is there.
    private struct NeverThere: Decodable, Sendable {
        let fieldThatHTTPBinNeverSends: Int
    }

    private func textRoute(_ path: String, _ text: String) {
        server.respond(path, headers: [("Content-Type", "text/plain")], body: Data(text.utf8))
    }

    /// A route that answers only after `delay` seconds.
    private func slowRoute(_ path: String, delay: TimeInterval = 5) {
        server.route(path) { _ in
            [.wait(delay), .head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
             .body(Data("{}".utf8)), .end]
        }
    }

    private func httpbinOperationManager() throws -> HTTPRequestOperationManager {
        let manager = HTTPRequestOperationManager(baseURL: try SharedServers.httpbin().baseURL)
        manager.completionQueue = ModernSupport.completionQueue("async-ops")
        manager.requestSerializer.timeoutInterval = 15
        return manager
    }

    private func httpbinSessionManager() throws -> HTTPSessionManager {
        let manager = HTTPSessionManager(baseURL: try SharedServers.httpbin().baseURL)
        manager.completionQueue = ModernSupport.completionQueue("async-session")
        manager.requestSerializer.timeoutInterval = 15
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        return manager
    }

    // MARK: - HTTPRequestOperation.result()

    func testResultStartsAnOperationThatNobodyEnqueued() async throws {
        textRoute("/plain", "hello")
        let operation = HTTPRequestOperation(request: request("/plain"))
        let server = self.server!
        try await modernBounded(20) {
            let (response, object) = try await operation.result()
            XCTAssertEqual(response.statusCode, 200)
            XCTAssertEqual(object as? Data, Data("hello".utf8))
            XCTAssertTrue(operation.isFinished)
            XCTAssertEqual(server.requests.count, 1)
        }
    }

    func testResultOnAnEnqueuedOperationWaitsForTheQueueAndNeverStartsItTwice() async throws {
        textRoute("/queued", "from the queue")
        let operation = HTTPRequestOperation(request: request("/queued"))
        let server = self.server!
        let queue = OperationQueue()
        queue.isSuspended = true
        queue.addOperation(operation)
        let waiter = Task { () -> String? in
            let (_, object) = try await operation.result()
            return (object as? Data).flatMap { String(data: $0, encoding: .utf8) }
        }
        // The awaiting task must not start it: the suspended queue owns it.
        await modernSleep(0.5)
        XCTAssertFalse(operation.isExecuting, "result() started an operation its queue holds")
        XCTAssertFalse(operation.isFinished)
        XCTAssertTrue(server.requests.isEmpty)
        queue.isSuspended = false
        let text = try await modernBounded(20) { try await waiter.value }
        XCTAssertEqual(text, "from the queue")
        XCTAssertEqual(server.requests.count, 1, "started once, by the queue")
        XCTAssertTrue(operation.isFinished)
    }

    func testResultAfterTheOperationFinishedReturnsAtOnce() async throws {
        textRoute("/once", "once")
        let operation = HTTPRequestOperation(request: request("/once"))
        let server = self.server!
        try await modernBounded(20) {
            _ = try await operation.result()
            // No stopwatch: the server's count shows nothing ran again, and the bound above
            // fails a second call that waits instead of answering from the finished operation.
            let (response, object) = try await operation.result()
            XCTAssertEqual(response.statusCode, 200)
            XCTAssertEqual(object as? Data, Data("once".utf8))
            XCTAssertEqual(server.requests.count, 1, "nothing is sent again")
        }
    }

    func testResultAfterAFailureThrowsAtOnceEveryTime() async throws {
        let operation = HTTPRequestOperation(request: request("/missing"))
        try await modernBounded(20) {
            for attempt in 0..<2 {
                do {
                    _ = try await operation.result()
                    XCTFail("a 404 must throw (attempt \(attempt))")
                } catch {
                    XCTAssertEqual((error as NSError).code, NSURLErrorBadServerResponse)
                }
            }
        }
    }

    func testFailureThrowsTheSerializersStatusError() async throws {
        // The scripted server answers unknown paths with a 404.
        let operation = HTTPRequestOperation(request: request("/missing"))
        try await modernBounded(20) {
            do {
                _ = try await operation.result()
                XCTFail("a 404 must throw")
            } catch {
                let nsError = error as NSError
                XCTAssertEqual(nsError.domain, AFURLResponseSerializationErrorDomain)
                XCTAssertEqual(nsError.code, NSURLErrorBadServerResponse)
                XCTAssertEqual((nsError.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse)?.statusCode, 404)
                let reported = operation.error as NSError?
                XCTAssertEqual(reported?.domain, nsError.domain, "the thrown error is the operation's error")
                XCTAssertEqual(reported?.code, nsError.code)
                XCTAssertTrue(reported === nsError, "the same NSError, not a copy")
            }
        }
    }

    func testATransportFailureIsThrownAsTheNSURLError() async throws {
        var refused = URLRequest(url: URL(string: "http://127.0.0.1:\(Fixtures.refusedPort)/refused")!)
        refused.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: refused)
        try await modernBounded(20) {
            do {
                _ = try await operation.result()
                XCTFail("nothing listens there")
            } catch {
                XCTAssertEqual((error as NSError).domain, NSURLErrorDomain)
                XCTAssertEqual((error as NSError).code, NSURLErrorCannotConnectToHost)
            }
        }
    }

    func testCancellingTheAwaitingTaskCancelsTheOperation() async throws {
        slowRoute("/slow")
        let operation = HTTPRequestOperation(request: request("/slow"))
        let server = self.server!
        let waiter = Task { () -> String in
            do {
                _ = try await operation.result()
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        let reached = await modernEventually(10) { !server.requests.isEmpty }
        XCTAssertTrue(reached, "the request never reached the server")
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        XCTAssertEqual(server.headsSent, 0, "the await ended with the cancel, while the server still held its answer")
        XCTAssertTrue(operation.isCancelled)
        XCTAssertEqual((operation.error as NSError?)?.domain, NSURLErrorDomain)
        XCTAssertEqual((operation.error as NSError?)?.code, NSURLErrorCancelled)
        let finished = await modernEventually(5) { operation.isFinished }
        XCTAssertTrue(finished)
    }

    /// An operation whose dependency has finished, and that no queue holds,
    /// is started by `result()`: Foundation reading its isReady while the
    /// dependency finished is no queue taking it in.
    func testResultStartsAnOperationWhoseAwaitedDependencyHasFinished() async throws {
        server.respond("/first", headers: [("Content-Type", "text/plain")], body: Data("1".utf8))
        server.respond("/second", headers: [("Content-Type", "text/plain")], body: Data("2".utf8))
        let first = HTTPRequestOperation(request: request("/first"))
        let second = HTTPRequestOperation(request: request("/second"))
        first.responseSerializer = HTTPResponseSerializer()
        second.responseSerializer = HTTPResponseSerializer()
        second.addDependency(first)
        let firstBody = try await modernBounded(10) { try await first.result().responseObject as? Data }
        XCTAssertEqual(firstBody, Data("1".utf8))
        let secondBody = try await modernBounded(10) { try await second.result().responseObject as? Data }
        XCTAssertEqual(secondBody, Data("2".utf8))
    }

    func testCancellingTheAwaitOfAnOperationWaitingForADependencyEndsIt() async throws {
        server.respond("/after", body: Data("late".utf8))
        let operation = HTTPRequestOperation(request: request("/after"))
        // A dependency nobody runs: the operation can never start by itself.
        operation.addDependency(BlockOperation {})
        let waiter = Task { () -> String in
            do {
                _ = try await operation.result()
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        // The cancel comes while the await is under way: once it has asked to hear of the operation's end.
        let awaiting = await modernEventually(10) { operation.settings.withLock { $0.finishWaiters.count } == 1 }
        XCTAssertTrue(awaiting, "the await began before the cancel (else this tests a cancel before awaiting)")
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        // The await ends with the cancel; the operation finishes right after.
        let finished = await modernEventually(5) { operation.isFinished }
        XCTAssertTrue(finished)
        XCTAssertTrue(server.requests.isEmpty, "a cancelled operation sends nothing")
    }

    func testResultOfAnOperationRestoredFromAnArchiveAsFinishedReturnsAtOnce() async throws {
        server.respond("/archived", headers: [("Content-Type", "text/plain")], body: Data("kept".utf8))
        let operation = HTTPRequestOperation(request: request("/archived"))
        operation.responseSerializer = HTTPResponseSerializer()
        _ = try await operation.result()
        let archive = try NSKeyedArchiver.archivedData(withRootObject: operation, requiringSecureCoding: true)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPRequestOperation.self, from: archive))
        XCTAssertTrue(restored.isFinished)
        let status = try await modernBounded(5) { try await restored.result().response.statusCode }
        XCTAssertEqual(status, 200)
    }

    func testCancellingTheOperationItselfThrowsTheCancellationNSError() async throws {
        // Not the Swift task: the operation's own cancel() is a plain failure.
        slowRoute("/slow")
        let operation = HTTPRequestOperation(request: request("/slow"))
        let server = self.server!
        let waiter = Task { () -> NSError? in
            do {
                _ = try await operation.result()
                return nil
            } catch {
                return error as NSError
            }
        }
        let reached = await modernEventually(10) { !server.requests.isEmpty }
        XCTAssertTrue(reached, "the request reached the server before the cancel (else this tests a cancel before sending)")
        operation.cancel()
        let error = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(error?.domain, NSURLErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCancelled)
    }

    // MARK: - HTTPRequestOperationManager

    func testOperationManagerVerbsAgainstHTTPBin() async throws {
        let manager = try httpbinOperationManager()
        try await modernBounded(60) {
            let get = try await manager.get("get", parameters: ["q": "1"])
            XCTAssertEqual(get.response.statusCode, 200)
            XCTAssertEqual(ModernSupport.strings(get.responseObject, "args"), ["q": "1"])
            XCTAssertTrue((ModernSupport.jsonObject(get.responseObject)["url"] as? String)?.hasSuffix("/get?q=1") ?? false)

            let head = try await manager.head("get")
            XCTAssertEqual(head.statusCode, 200)

            let post = try await manager.post("post", parameters: ["name": "afn"])
            XCTAssertEqual(post.response.statusCode, 200)
            XCTAssertEqual(ModernSupport.strings(post.responseObject, "form"), ["name": "afn"])

            let put = try await manager.put("put", parameters: ["k": "put"])
            XCTAssertEqual(ModernSupport.strings(put.responseObject, "form"), ["k": "put"])

            let patch = try await manager.patch("patch", parameters: ["k": "patch"])
            XCTAssertEqual(ModernSupport.strings(patch.responseObject, "form"), ["k": "patch"])

            let delete = try await manager.delete("delete", parameters: ["id": "7"])
            XCTAssertEqual(delete.response.statusCode, 200)
            XCTAssertEqual(ModernSupport.strings(delete.responseObject, "args"), ["id": "7"])
        }
    }

    func testOperationManagerStatusFailureIsThrownWithTheResponse() async throws {
        let manager = try httpbinOperationManager()
        try await modernBounded(30) {
            do {
                _ = try await manager.get("status/418")
                XCTFail("a 418 must throw")
            } catch {
                let nsError = error as NSError
                XCTAssertEqual(nsError.domain, AFURLResponseSerializationErrorDomain)
                XCTAssertEqual((nsError.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse)?.statusCode, 418)
            }
        }
    }

    func testOperationManagerMultipartPost() async throws {
        let manager = try httpbinOperationManager()
        try await modernBounded(30) {
            let reply = try await manager.post("post", parameters: ["field": "value"], constructingBodyWith: { form in
                form.appendPart(withFileData: Data("file contents".utf8), name: "upload", fileName: "a.txt", mimeType: "text/plain")
            })
            XCTAssertEqual(reply.response.statusCode, 200)
            XCTAssertEqual(ModernSupport.strings(reply.responseObject, "form"), ["field": "value"])
            XCTAssertEqual(ModernSupport.strings(reply.responseObject, "files"), ["upload": "file contents"])
        }
    }

    func testMultipartBlockThatThrowsFailsTheCallAndSendsNothing() async throws {
        let server = self.server!
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = ModernSupport.completionQueue("multipart-throws")
        let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/file.bin")
        try await modernBounded(20) {
            do {
                _ = try await manager.post("upload", parameters: ["a": "b"], constructingBodyWith: { form in
                    try form.appendPart(withFileURL: missing, name: "file")
                })
                XCTFail("a missing file must fail the call")
            } catch {
                let nsError = error as NSError
                XCTAssertEqual(nsError.domain, AFURLRequestSerializationErrorDomain, "\(nsError)")
                XCTAssertEqual(nsError.code, NSURLErrorBadURL, "\(nsError)")
            }
        }
        await modernSleep(0.3)
        XCTAssertTrue(server.requests.isEmpty, "nothing may be sent")
        XCTAssertEqual(server.connectionCount, 0)
    }

    func testOperationManagerDecodable() async throws {
        let manager = try httpbinOperationManager()
        try await modernBounded(30) {
            let echo = try await manager.get("get", parameters: ["x": "y"], as: HTTPBinEcho.self)
            XCTAssertTrue(echo.url.hasSuffix("/get?x=y"), echo.url)
            XCTAssertEqual(echo.args, ["x": "y"])

            let form = try await manager.post("post", parameters: ["p": "q"], as: HTTPBinForm.self)
            XCTAssertEqual(form.form, ["p": "q"])

            let put = try await manager.put("put", parameters: ["p": "put"], as: HTTPBinForm.self)
            XCTAssertEqual(put.form, ["p": "put"])
        }
    }

    func testOperationManagerDecodableRefusesAnHTMLBody() async throws {
        let manager = try httpbinOperationManager()
        try await modernBounded(30) {
            do {
                _ = try await manager.get("html", as: HTTPBinEcho.self)
                XCTFail("HTML is not JSON")
            } catch {
                let nsError = error as NSError
                XCTAssertEqual(nsError.domain, AFURLResponseSerializationErrorDomain, "\(nsError)")
                XCTAssertEqual(nsError.code, NSURLErrorCannotDecodeContentData, "\(nsError)")
            }
        }
    }

    func testOperationManagerDecodableReportsADecodingFailure() async throws {
        let manager = try httpbinOperationManager()
        try await modernBounded(30) {
            do {
                _ = try await manager.get("get", as: NeverThere.self)
                XCTFail("the field is not there")
            } catch {
                let nsError = error as NSError
                XCTAssertEqual(nsError.domain, AFURLResponseSerializationErrorDomain)
                XCTAssertEqual(nsError.code, NSURLErrorCannotDecodeContentData)
                XCTAssertNotNil(nsError.userInfo[NSUnderlyingErrorKey], "the DecodingError is kept underneath")
                XCTAssertNotNil(nsError.userInfo[AFNetworkingOperationFailingURLResponseErrorKey])
                XCTAssertNotNil(nsError.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey])
            }
        }
    }

    /// The typed verbs read the body with the decoder alone: the JSON
    /// serializer's own parse (a tree of the whole body, thrown away) is not
    /// made, so a top-level value it refuses without `.fragmentsAllowed`
    /// decodes, while its validation (status, content type) still applies.
    func testOperationManagerDecodableValidatesAndLeavesTheParsingToTheDecoder() async throws {
        server.respond("/number", headers: [("Content-Type", "application/json")], body: Data("42".utf8))
        server.respond("/teapot", status: 418, headers: [("Content-Type", "application/json")], body: Data("42".utf8))
        server.respond("/text", headers: [("Content-Type", "text/plain")], body: Data("42".utf8))
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = ModernSupport.completionQueue("typed-fragment")
        try await modernBounded(30) {
            let number = try await manager.get("number", as: Int.self)
            XCTAssertEqual(number, 42)
            for (path, code) in [("teapot", NSURLErrorBadServerResponse), ("text", NSURLErrorCannotDecodeContentData)] {
                do {
                    _ = try await manager.get(path, as: Int.self)
                    XCTFail("\(path): the serializer's validation refuses it")
                } catch {
                    let nsError = error as NSError
                    XCTAssertEqual(nsError.domain, AFURLResponseSerializationErrorDomain, "\(path): \(nsError)")
                    XCTAssertEqual(nsError.code, code, "\(path): \(nsError)")
                }
            }
        }
    }

    func testCancellingBeforeTheRequestExistsThrowsCancellationError() async throws {
        slowRoute("/slow")
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = ModernSupport.completionQueue("cancel-early")
        let waiter = Task { () -> String in
            // Wait until this task is cancelled, then make the call.
            while !Task.isCancelled { await Task.yield() }
            do {
                _ = try await manager.get("slow")
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        // The operation made for the call ends cancelled without sending anything.
        let drained = await modernEventually(10) { manager.operationQueue.operationCount == 0 }
        XCTAssertTrue(drained, "the cancelled call's operation finished")
        XCTAssertTrue(server.requests.isEmpty, "nothing was sent for a call cancelled before it was made")
        XCTAssertEqual(server.connectionCount, 0)
    }

    func testCancellingAManagerCallCancelsItsOperation() async throws {
        let server = self.server!
        slowRoute("/slow")
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = ModernSupport.completionQueue("cancel-manager")
        let waiter = Task { () -> String in
            do {
                _ = try await manager.get("slow")
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        let reached = await modernEventually(10) { !server.requests.isEmpty }
        XCTAssertTrue(reached, "the request reached the server before the cancel (else this tests a cancel before sending)")
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        let drained = await modernEventually(5) { manager.operationQueue.operationCount == 0 }
        XCTAssertTrue(drained, "the cancelled operation must finish")
    }

    // MARK: - HTTPSessionManager

    func testSessionManagerVerbsAgainstHTTPBin() async throws {
        let manager = try httpbinSessionManager()
        try await modernBounded(60) {
            let get = try await manager.get("get", parameters: ["q": "s"])
            XCTAssertEqual(get.response.statusCode, 200)
            XCTAssertEqual(ModernSupport.strings(get.responseObject, "args"), ["q": "s"])

            let head = try await manager.head("get")
            XCTAssertEqual(head.statusCode, 200)

            let post = try await manager.post("post", parameters: ["name": "session"])
            XCTAssertEqual(ModernSupport.strings(post.responseObject, "form"), ["name": "session"])

            let put = try await manager.put("put", parameters: ["k": "put"])
            XCTAssertEqual(ModernSupport.strings(put.responseObject, "form"), ["k": "put"])

            let patch = try await manager.patch("patch", parameters: ["k": "patch"])
            XCTAssertEqual(ModernSupport.strings(patch.responseObject, "form"), ["k": "patch"])

            let delete = try await manager.delete("delete", parameters: ["id": "9"])
            XCTAssertEqual(ModernSupport.strings(delete.responseObject, "args"), ["id": "9"])

            let multipart = try await manager.post("post", parameters: ["f": "v"], constructingBodyWith: { form in
                form.appendPart(withFileData: Data("streamed".utf8), name: "doc", fileName: "d.txt", mimeType: "text/plain")
            })
            XCTAssertEqual(ModernSupport.strings(multipart.responseObject, "files"), ["doc": "streamed"])
            XCTAssertEqual(ModernSupport.strings(multipart.responseObject, "form"), ["f": "v"])
        }
    }

    func testSessionManagerDecodable() async throws {
        let manager = try httpbinSessionManager()
        try await modernBounded(30) {
            let echo = try await manager.get("get", parameters: ["x": "z"], as: HTTPBinEcho.self)
            XCTAssertTrue(echo.url.hasSuffix("/get?x=z"), echo.url)
            XCTAssertEqual(echo.args, ["x": "z"])
            let form = try await manager.patch("patch", parameters: ["p": "patched"], as: HTTPBinForm.self)
            XCTAssertEqual(form.form, ["p": "patched"])
        }
    }

    func testSessionManagerDecodableFailures() async throws {
        let manager = try httpbinSessionManager()
        try await modernBounded(30) {
            do {
                _ = try await manager.get("xml", as: HTTPBinEcho.self)
                XCTFail("XML is not JSON")
            } catch {
                XCTAssertEqual((error as NSError).domain, AFURLResponseSerializationErrorDomain, "\(error)")
                XCTAssertEqual((error as NSError).code, NSURLErrorCannotDecodeContentData, "\(error)")
            }
            do {
                _ = try await manager.get("get", as: NeverThere.self)
                XCTFail("the field is not there")
            } catch {
                XCTAssertEqual((error as NSError).domain, AFURLResponseSerializationErrorDomain)
                XCTAssertNotNil((error as NSError).userInfo[NSUnderlyingErrorKey])
            }
            do {
                _ = try await manager.get("status/404", as: HTTPBinEcho.self)
                XCTFail("the status is still validated")
            } catch {
                XCTAssertEqual((error as NSError).domain, AFURLResponseSerializationErrorDomain)
                XCTAssertEqual((error as NSError).code, NSURLErrorBadServerResponse)
                XCTAssertEqual(((error as NSError).userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse)?.statusCode,
                               404)
            }
        }
    }

    func testSessionManagerCancellationThrowsCancellationError() async throws {
        let server = self.server!
        slowRoute("/slow")
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        manager.completionQueue = ModernSupport.completionQueue("session-cancel")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let waiter = Task { () -> String in
            do {
                _ = try await manager.get("slow")
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        let reached = await modernEventually(10) { !server.requests.isEmpty }
        XCTAssertTrue(reached, "the request reached the server before the cancel (else this tests a cancel before sending)")
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        let gone = await modernEventually(5) { manager.tasks.isEmpty }
        XCTAssertTrue(gone, "the cancelled task must complete")
    }

    // MARK: - URLSessionManager

    func testDataForRequest() async throws {
        server.respond("/json", headers: [("Content-Type", "application/json")], body: Data(#"{"answer":42}"#.utf8))
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("data")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let request = self.request("/json")
        try await modernBounded(20) {
            let (response, object) = try await manager.data(for: request)
            XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
            XCTAssertEqual(ModernSupport.jsonObject(object)["answer"] as? Int, 42)
        }
    }

    func testDataForRequestThrowsTheSerializerError() async throws {
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("data-404")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let request = self.request("/missing")
        try await modernBounded(20) {
            do {
                _ = try await manager.data(for: request)
                XCTFail("a 404 must throw")
            } catch {
                XCTAssertEqual((error as NSError).domain, AFURLResponseSerializationErrorDomain)
                XCTAssertEqual((error as NSError).code, NSURLErrorBadServerResponse)
            }
        }
    }

    func testUploadFromFile() async throws {
        let server = self.server!
        let payload = ModernSupport.pattern(64 << 10)
        server.route("/upload") { incoming in
            let body = Data("{\"received\":\(incoming.body.count)}".utf8)
            return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
                    .body(body), .end]
        }
        let file = ModernSupport.temporaryURL("upload")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("upload")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let request = self.request("/upload", method: "POST")
        try await modernBounded(20) {
            let (response, object) = try await manager.upload(for: request, fromFile: file)
            XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
            XCTAssertEqual(ModernSupport.jsonObject(object)["received"] as? Int, payload.count)
            XCTAssertEqual(server.requests.first?.body, payload)
        }
    }

    func testUploadFromAMissingFileThrows() async throws {
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("upload-missing")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let request = self.request("/upload", method: "POST")
        let missing = ModernSupport.temporaryURL("missing-upload")
        try await modernBounded(20) {
            do {
                _ = try await manager.upload(for: request, fromFile: missing)
                XCTFail("the file does not exist")
            } catch {
                XCTAssertEqual((error as NSError).domain, NSURLErrorDomain, "\(error)")
                XCTAssertEqual((error as NSError).code, NSURLErrorFileDoesNotExist, "\(error)")
            }
        }
    }

    func testDownloadToADestination() async throws {
        let body = ModernSupport.pattern(100_000, salt: 3)
        server.respond("/file", headers: [("Content-Type", "application/octet-stream")], body: body)
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("download")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let destination = ModernSupport.temporaryURL("download")
        defer { try? FileManager.default.removeItem(at: destination) }
        let request = self.request("/file")
        try await modernBounded(20) {
            let response = try await manager.download(for: request, to: destination)
            XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
            XCTAssertEqual(try? Data(contentsOf: destination), body)
        }
    }

    func testDownloadOntoAnExistingFileThrowsTheFileError() async throws {
        server.respond("/file", headers: [("Content-Type", "application/octet-stream")], body: ModernSupport.pattern(4096))
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("download-exists")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let destination = ModernSupport.temporaryURL("download-exists")
        let original = Data("already here".utf8)
        try original.write(to: destination)
        defer { try? FileManager.default.removeItem(at: destination) }
        let request = self.request("/file")
        try await modernBounded(20) {
            do {
                _ = try await manager.download(for: request, to: destination)
                XCTFail("an existing destination is an error")
            } catch {
                XCTAssertEqual((error as NSError).domain, NSCocoaErrorDomain, "\(error)")
            }
            XCTAssertEqual(try? Data(contentsOf: destination), original, "the existing file is left alone")
        }
    }

    func testCancellingAnAwaitedSessionTaskThrowsCancellationError() async throws {
        slowRoute("/slow")
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("data-cancel")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let request = self.request("/slow")
        let server = self.server!
        let waiter = Task { () -> String in
            do {
                _ = try await manager.data(for: request)
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        let reached = await modernEventually(10) { !server.requests.isEmpty }
        XCTAssertTrue(reached, "the request reached the server before the cancel (else this tests a cancel before sending)")
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        XCTAssertEqual(server.headsSent, 0, "the await ended with the cancel, while the server still held its answer")
        let gone = await modernEventually(5) { manager.tasks.isEmpty }
        XCTAssertTrue(gone, "the session task must complete, cancelled")
    }

    func testCancellingAnAwaitedDownloadThrowsCancellationError() async throws {
        slowRoute("/slow")
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = ModernSupport.completionQueue("download-cancel")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let request = self.request("/slow")
        let destination = ModernSupport.temporaryURL("download-cancel")
        defer { try? FileManager.default.removeItem(at: destination) }
        let server = self.server!
        let waiter = Task { () -> String in
            do {
                _ = try await manager.download(for: request, to: destination)
                return "returned"
            } catch is CancellationError {
                return "CancellationError"
            } catch {
                return "other: \(error)"
            }
        }
        let reached = await modernEventually(10) { !server.requests.isEmpty }
        XCTAssertTrue(reached, "the request reached the server before the cancel (else this tests a cancel before sending)")
        waiter.cancel()
        let outcome = try await modernBounded(10) { await waiter.value }
        XCTAssertEqual(outcome, "CancellationError")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }
}
