import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `httpRequestOperation(withHTTPMethod:urlString:parameters:headers:success:failure:)`:
/// the operation a verb would enqueue, left for the caller to batch, chain
/// or queue; checked by what the scripted server received and when.
final class UnenqueuedOperationTests: OperationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.route("/token") { _ in
            let body = Data(#"{"token":"t-42"}"#.utf8)
            return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]), .body(body), .end]
        }
        server.respond("/item", headers: [("Content-Type", "application/json")], body: Data(#"{"ok":true}"#.utf8))
    }

    private func requests(to path: String) -> [ScriptedServer.Request] { server.requests.filter { $0.uri.hasPrefix(path) } }

    func testTheOperationIsBuiltLikeTheVerbsButNotEnqueued() throws {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.operationQueue.isSuspended = true
        defer { manager.operationQueue.isSuspended = false }
        let operation = try XCTUnwrap(manager.httpRequestOperation(withHTTPMethod: "POST", urlString: "item", parameters: ["q": "1"],
                                                                   headers: ["X-Trace": "t1"], success: nil, failure: nil))
        XCTAssertEqual(manager.operationQueue.operationCount, 0, "not enqueued")
        XCTAssertFalse(operation.isExecuting || operation.isFinished)
        XCTAssertEqual(operation.request.httpMethod, "POST")
        XCTAssertEqual(operation.request.url?.absoluteString, server.baseURL.appendingPathComponent("item").absoluteString)
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "X-Trace"), "t1")
        XCTAssertEqual(operation.request.httpBody.map { String(decoding: $0, as: UTF8.self) }, "q=1")
        XCTAssertTrue(operation.responseSerializer is JSONResponseSerializer, "the manager's serializer")
        XCTAssertEqual(manager.requestSerializer.value(forHTTPHeaderField: "X-Trace"), nil, "the shared serializer is not changed")
        Thread.sleep(forTimeInterval: 0.2)
        XCTAssertTrue(requests(to: "/item").isEmpty, "nothing is sent before the caller queues it")
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(requests(to: "/item").first?.headers["X-Trace"], ["t1"])
    }

    func testADependentReadsTheTokenTheFirstOperationGotAndABatchReportsOnItsQueue() throws {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        // This thread waits for the queue below: the blocks run elsewhere.
        manager.completionQueue = DispatchQueue(label: "unenqueued-blocks")
        let token = Locked<String?>(nil)
        let login = try XCTUnwrap(manager.httpRequestOperation(withHTTPMethod: "GET", urlString: "token", parameters: nil, success: { _, object in
            token.withLock { $0 = (object as? [String: Any])?["token"] as? String }
        }, failure: nil))
        // The dependent's request is built when it runs: an operation is
        // finished only after its success block returned, so the token is there.
        let followUp = BlockOperation {
            let current = token.value ?? "missing"
            manager.get("item", parameters: nil, headers: ["Authorization": "Bearer \(current)"], success: nil, failure: nil)
        }
        followUp.addDependency(login)
        let queue = OperationQueue()
        queue.addOperations([followUp, login], waitUntilFinished: true)
        XCTAssertTrue(spin(until: { !self.requests(to: "/item").isEmpty }, timeout: 10))
        XCTAssertEqual(requests(to: "/item").first?.headers["Authorization"], ["Bearer t-42"])

        let completionQueue = DispatchQueue(label: "unenqueued-batch")
        let key = DispatchSpecificKey<Bool>()
        completionQueue.setSpecific(key: key, value: true)
        let parts = try (0..<3).map { index in
            try XCTUnwrap(manager.httpRequestOperation(withHTTPMethod: "GET", urlString: "item", parameters: ["n": "\(index)"],
                                                       success: nil, failure: nil))
        }
        let done = expectation(description: "batch")
        let onItsQueue = Locked(false)
        let batch = URLConnectionOperation.batch(ofRequestOperations: parts, progressBlock: nil, completionQueue: completionQueue) { finished in
            onItsQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) == true && finished.count == 3 }
            done.fulfill()
        }
        manager.operationQueue.addOperations(batch, waitUntilFinished: false)
        wait(for: [done], timeout: 15)
        XCTAssertTrue(onItsQueue.value, "the batch's block ran on the given queue after all three")
        XCTAssertTrue(parts.allSatisfy { $0.isFinished && $0.error == nil })
    }

    func testARequestThatCannotBeBuiltReturnsNilAndFailsWithNothingSent() throws {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = DispatchQueue(label: "unenqueued-failure")
        let failed = expectation(description: "failure(nil, error)")
        let received = Locked<(operation: HTTPRequestOperation?, error: Error?)>((nil, nil))
        let operation = manager.httpRequestOperation(withHTTPMethod: "GET", urlString: "item", parameters: nil,
                                                     headers: ["Bad\nName": "x"], success: { _, _ in XCTFail("nothing is sent") },
                                                     failure: { operation, error in
                                                         received.withLock { $0 = (operation, error) }
                                                         failed.fulfill()
                                                     })
        XCTAssertNil(operation)
        wait(for: [failed], timeout: 10)
        XCTAssertNil(received.value.operation)
        XCTAssertEqual((received.value.error as NSError?)?.code, NSURLErrorBadURL)
        XCTAssertTrue(requests(to: "/item").isEmpty)
    }
}
