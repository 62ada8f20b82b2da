@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Every `async` call returns while the main queue is never served (issue 15,
/// "Async verbs"): a server whose main thread is parked must still get its
/// answers. The test methods are not `async`: XCTest runs them on the main
/// thread, which then waits on a semaphore without running its run loop, so
/// nothing queued on the main queue runs until the test returns. The calls
/// run in detached tasks against the in-process server, with the managers'
/// `completionQueue` left nil (the main queue for the callback API).
final class AsyncWithoutMainQueueTests: OperationTestCase {
    private struct Reply: Decodable, Sendable {
        let ok: Int
    }

    /// What each call ended with, by name.
    private let outcomes = Locked<[String: String]>([:])
    private let group = DispatchGroup()

    /// Runs `call` in a detached task and records "ok", "threw …" or the
    /// mismatch it reports.
    private func launch(_ name: String, _ call: @escaping @Sendable () async throws -> String) {
        group.enter()
        let outcomes = self.outcomes
        let group = self.group
        Task.detached {
            let outcome: String
            do {
                outcome = try await call()
            } catch {
                outcome = "threw \((error as NSError).domain) \((error as NSError).code)"
            }
            outcomes.withLock { $0[name] = outcome }
            group.leave()
        }
    }

    /// Waits on the main thread, serving nothing, until every call returned
    /// (bounded), then checks that the main queue indeed never ran meanwhile.
    private func waitWithoutTheMainQueue(_ expected: [String: String], file: StaticString = #filePath, line: UInt = #line) {
        let mainQueueRan = Locked(false)
        DispatchQueue.main.async { mainQueueRan.value = true }
        // ≥ 10× what the calls take on a loaded machine; the old code never returns.
        let finished = group.wait(timeout: .now() + 10)
        let served = mainQueueRan.value
        XCTAssertFalse(served, "the main queue was not served during the wait", file: file, line: line)
        XCTAssertEqual(finished, .success, "calls still waiting: \(Set(expected.keys).subtracting(outcomes.value.keys).sorted())",
                       file: file, line: line)
        XCTAssertEqual(outcomes.value, expected, file: file, line: line)
    }

    private func jsonRoutes() {
        let json = [("Content-Type", "application/json")]
        server.respond("/json", headers: json, body: Data(#"{"ok":1}"#.utf8))
        server.respond("/head", headers: json)
        server.respond("/file", headers: [("Content-Type", "application/octet-stream")], body: Data(repeating: 7, count: 4096))
    }

    private static func isOK(_ object: Any?) -> String {
        (object as? [String: Any])?["ok"] as? Int == 1 ? "ok" : "unexpected object \(String(describing: object))"
    }

    func testTheMainQueueIsToldFromOtherQueues() {
        // On Linux each read of `DispatchQueue.main` is a new object: identity cannot tell it.
        XCTAssertTrue(MainQueueWork.isMain(.main))
        XCTAssertTrue(MainQueueWork.isMain(DispatchQueue.main))
        XCTAssertFalse(MainQueueWork.isMain(DispatchQueue(label: "afn.tests.not-main")))
        XCTAssertFalse(MainQueueWork.isMain(DispatchQueue(label: "")))
        XCTAssertFalse(MainQueueWork.isMain(CompletionDefaults.processingQueue))
        XCTAssertFalse(MainQueueWork.isMain(.global()))
    }

    func testOperationResultNeedsNoMainQueue() {
        jsonRoutes()
        let plain = HTTPRequestOperation(request: request("/json"))
        launch("result, no blocks") { try await plain.result().response.statusCode == 200 ? "ok" : "status" }
        // Blocks set, no completion queue: they wait for the main queue; the await does not.
        let withBlocks = HTTPRequestOperation(request: request("/json"))
        let blockRan = Locked(false)
        withBlocks.setCompletionBlockWithSuccess({ _, _ in blockRan.value = true }, failure: { _, _ in blockRan.value = true })
        launch("result, main-queue blocks") {
            let (response, object) = try await withBlocks.result()
            return response.statusCode == 200 && (object as? Data)?.isEmpty == false ? "ok" : "unexpected"
        }
        // Enqueued, with blocks: the queue starts it, the await still needs no main queue.
        let queued = HTTPRequestOperation(request: request("/json"))
        queued.responseSerializer = JSONResponseSerializer()
        queued.setCompletionBlockWithSuccess({ _, _ in }, failure: { _, _ in })
        let queue = OperationQueue()
        queue.addOperation(queued)
        launch("result, enqueued") { Self.isOK(try await queued.result().responseObject) }
        waitWithoutTheMainQueue(["result, no blocks": "ok", "result, main-queue blocks": "ok", "result, enqueued": "ok"])
        XCTAssertFalse(blockRan.value, "the caller's blocks still wait for the main queue")
        XCTAssertTrue(spin(until: { blockRan.value }), "and run once it is served")
    }

    func testOperationManagerVerbsNeedNoMainQueue() throws {
        jsonRoutes()
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        XCTAssertNil(manager.completionQueue)
        launch("get") { Self.isOK(try await manager.get("json").responseObject) }
        launch("head") { try await manager.head("head").statusCode == 200 ? "ok" : "status" }
        launch("post") { Self.isOK(try await manager.post("json", parameters: ["a": "1"]).responseObject) }
        launch("put") { Self.isOK(try await manager.put("json", parameters: ["a": "1"]).responseObject) }
        launch("patch") { Self.isOK(try await manager.patch("json", parameters: ["a": "1"]).responseObject) }
        launch("delete") { Self.isOK(try await manager.delete("json").responseObject) }
        launch("multipart") {
            Self.isOK(try await manager.post("json", parameters: ["a": "1"]) { form in
                form.appendPart(withForm: Data("x".utf8), name: "x")
            }.responseObject)
        }
        launch("decodable") { try await manager.get("json", as: Reply.self).ok == 1 ? "ok" : "value" }
        launch("status failure") { _ = try await manager.get("missing"); return "returned" }
        launch("unbuildable") { _ = try await manager.get("http://[broken"); return "returned" }
        waitWithoutTheMainQueue(["get": "ok", "head": "ok", "post": "ok", "put": "ok", "patch": "ok", "delete": "ok", "multipart": "ok",
                                 "decodable": "ok", "status failure": "threw \(AFURLResponseSerializationErrorDomain) \(NSURLErrorBadServerResponse)",
                                 "unbuildable": "threw \(NSURLErrorDomain) \(NSURLErrorBadURL)"])
    }

    func testSessionManagerVerbsNeedNoMainQueue() throws {
        jsonRoutes()
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        XCTAssertNil(manager.completionQueue)
        // Set explicitly to the main queue: the awaits still never need it.
        let explicitMain = HTTPSessionManager(baseURL: server.baseURL)
        explicitMain.completionQueue = .main
        addTeardownBlock { explicitMain.invalidateSessionCancelingTasks(true) }
        launch("get") { Self.isOK(try await manager.get("json").responseObject) }
        launch("head") { try await manager.head("head").statusCode == 200 ? "ok" : "status" }
        launch("post") { Self.isOK(try await manager.post("json", parameters: ["a": "1"]).responseObject) }
        launch("put") { Self.isOK(try await manager.put("json", parameters: ["a": "1"]).responseObject) }
        launch("patch") { Self.isOK(try await manager.patch("json", parameters: ["a": "1"]).responseObject) }
        launch("delete") { Self.isOK(try await manager.delete("json").responseObject) }
        launch("multipart") {
            Self.isOK(try await manager.post("json", parameters: ["a": "1"]) { form in
                form.appendPart(withForm: Data("x".utf8), name: "x")
            }.responseObject)
        }
        launch("decodable") { try await manager.get("json", as: Reply.self).ok == 1 ? "ok" : "value" }
        launch("status failure") { _ = try await manager.get("missing"); return "returned" }
        launch("unbuildable") { _ = try await manager.get("http://[broken"); return "returned" }
        launch("get, completionQueue = main") { Self.isOK(try await explicitMain.get("json").responseObject) }
        waitWithoutTheMainQueue(["get": "ok", "head": "ok", "post": "ok", "put": "ok", "patch": "ok", "delete": "ok", "multipart": "ok",
                                 "decodable": "ok", "status failure": "threw \(AFURLResponseSerializationErrorDomain) \(NSURLErrorBadServerResponse)",
                                 "unbuildable": "threw \(NSURLErrorDomain) \(NSURLErrorBadURL)", "get, completionQueue = main": "ok"])
    }

    func testSessionTaskVerbsNeedNoMainQueue() throws {
        jsonRoutes()
        let manager = URLSessionManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        XCTAssertNil(manager.completionQueue)
        let upload = FileManager.default.temporaryDirectory.appendingPathComponent("afn-async-upload-\(UUID().uuidString)")
        try Data(repeating: 1, count: 2048).write(to: upload)
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("afn-async-download-\(UUID().uuidString)")
        addTeardownBlock {
            try? FileManager.default.removeItem(at: upload)
            try? FileManager.default.removeItem(at: destination)
        }
        let dataRequest = request("/json")
        let uploadRequest = { () -> URLRequest in
            var request = self.request("/json", method: "POST")
            request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            return request
        }()
        let downloadRequest = request("/file")
        launch("data") { Self.isOK(try await manager.data(for: dataRequest).responseObject) }
        launch("upload") { Self.isOK(try await manager.upload(for: uploadRequest, fromFile: upload).responseObject) }
        launch("download") {
            _ = try await manager.download(for: downloadRequest, to: destination)
            return (try? Data(contentsOf: destination))?.count == 4096 ? "ok" : "file"
        }
        waitWithoutTheMainQueue(["data": "ok", "upload": "ok", "download": "ok"])
        XCTAssertEqual(server.requests.filter { $0.method == "POST" }.first?.body.count, 2048, "the upload sent the file")
    }
}
