@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Upload tasks of `URLSessionManager`: file, data and streamed bodies, the
/// framing of streamed bodies, bodies sent again after a 307 (the
/// need-new-body-stream block, multipart rebuilt, other streams exhausted),
/// and upload progress.
final class SessionUploadTests: SessionTransferTestCase {
    /// Answers `path` with JSON `{"received": <body bytes>}`.
    private func serveCounting(_ path: String) {
        server.route(path) { request in
            let json = Data("{\"received\":\(request.body.count)}".utf8)
            return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(json.count)")]),
                    .body(json), .end]
        }
    }

    private func received(_ outcome: TaskOutcome) -> Int? {
        let value = (outcome.object as? [String: Any])?["received"]
        return (value as? Int) ?? (value as? NSNumber)?.intValue
    }

    private func seen(_ path: String) -> [ScriptedServer.Request] {
        server.requests.filter { $0.uri == path }
    }

    private func post(_ path: String) -> URLRequest {
        var request = self.request(path, method: "POST", timeout: 20)
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        return request
    }

    @discardableResult
    private func runUpload(_ task: URLSessionUploadTask, _ outcome: Locked<TaskOutcome>, _ done: XCTestExpectation,
                           timeout: TimeInterval = 30) -> TaskOutcome {
        finish(task, outcome, done, timeout: timeout)
    }

    // MARK: From a file

    func testUploadFromFileStreamsTheWholeFile() throws {
        serveCounting("/file")
        let body = pattern(3 * 1024 * 1024 + 17, salt: 11)
        let file = temporaryURL("upload-source")
        try body.write(to: file)
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(with: post("/file"), fromFile: file, progress: nil, completionHandler: recorder(outcome, done))
        XCTAssertEqual(task.state, .suspended, "factories return suspended tasks")
        let result = runUpload(task, outcome, done)
        XCTAssertNil(result.error)
        XCTAssertEqual(received(result), body.count)
        let request = try XCTUnwrap(seen("/file").first)
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.headers.first(name: "content-length"), "\(body.count)", "a file's length is known")
        XCTAssertEqual(request.body, body, "the file arrives byte for byte")
        XCTAssertEqual(task.countOfBytesSent, Int64(body.count))
    }

    func testUploadFromFileAgainstHTTPBin() throws {
        let httpbin = try SharedServers.httpbin()
        let text = "hello from a file, \(UUID().uuidString)"
        let file = temporaryURL("httpbin-upload")
        try Data(text.utf8).write(to: file)
        var request = URLRequest(url: httpbin.baseURL.appendingPathComponent("post"))
        request.httpMethod = "POST"
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        request.timeoutInterval = 20
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(with: request, fromFile: file, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertNil(result.error)
        XCTAssertEqual((result.object as? [String: Any])?["data"] as? String, text)
    }

    func testUploadFromAMissingFileFailsWithFileDoesNotExistWhenResumed() throws {
        serveCounting("/missing")
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("afn-absent-\(UUID().uuidString).bin")
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(with: post("/missing"), fromFile: missing, progress: nil, completionHandler: recorder(outcome, done))
        XCTAssertEqual(task.state, .suspended, "the task is created; it fails when resumed")
        let result = runUpload(task, outcome, done)
        XCTAssertEqual(result.calls, 1)
        XCTAssertEqual(result.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(result.error?.code, NSURLErrorFileDoesNotExist)
        XCTAssertEqual(task.state, .completed)
    }

    // MARK: From data

    func testUploadFromDataSendsTheData() throws {
        serveCounting("/data")
        let body = pattern(250_000, salt: 12)
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(with: post("/data"), from: body, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertNil(result.error)
        XCTAssertEqual(received(result), body.count)
        XCTAssertEqual(seen("/data").first?.body, body)
        XCTAssertEqual(seen("/data").first?.headers.first(name: "content-length"), "\(body.count)")
    }

    func testUploadFromNilDataSendsAnEmptyBody() throws {
        serveCounting("/empty")
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(with: post("/empty"), from: nil, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertNil(result.error)
        XCTAssertEqual(received(result), 0)
        let request = try XCTUnwrap(seen("/empty").first)
        XCTAssertTrue(request.body.isEmpty)
        XCTAssertTrue([nil, "0"].contains(request.headers.first(name: "content-length")))
        XCTAssertNil(request.headers.first(name: "transfer-encoding"))
    }

    // MARK: Streamed

    func testStreamedRequestWithContentLengthIsSentWithThatLength() throws {
        serveCounting("/streamed")
        let body = pattern(400_000, salt: 13)
        var request = post("/streamed")
        request.httpBodyStream = InputStream(data: body)
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertNil(result.error)
        let seenRequest = try XCTUnwrap(seen("/streamed").first)
        XCTAssertEqual(seenRequest.headers.first(name: "content-length"), "\(body.count)")
        XCTAssertNil(seenRequest.headers.first(name: "transfer-encoding"))
        XCTAssertEqual(seenRequest.body, body)
    }

    func testStreamedRequestWithoutContentLengthIsSentChunked() throws {
        serveCounting("/chunked")
        let body = pattern(300_000, salt: 14)
        var request = post("/chunked")
        request.httpBodyStream = InputStream(data: body)
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertNil(result.error)
        let seenRequest = try XCTUnwrap(seen("/chunked").first)
        XCTAssertEqual(seenRequest.headers.first(name: "transfer-encoding")?.lowercased(), "chunked")
        XCTAssertNil(seenRequest.headers.first(name: "content-length"))
        XCTAssertEqual(seenRequest.body, body)
        XCTAssertEqual(received(result), body.count)
    }

    // MARK: Bodies sent again

    private func serveTemporaryRedirect() {
        server.route("/first") { _ in [.head(status: 307, headers: [("Location", "/second"), ("Content-Length", "0")]), .end] }
        serveCounting("/second")
    }

    func testA307AsksTheNeedNewBodyStreamBlockAndTheSecondHopGetsTheWholeBody() throws {
        serveTemporaryRedirect()
        let body = pattern(120_000, salt: 15)
        var request = post("/first")
        request.httpBodyStream = InputStream(data: body)
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let manager = makeManager()
        struct Asked { var tasks: [ObjectIdentifier] = []; var onQueue: [Bool] = [] }
        let asked = Locked(Asked())
        manager.setTaskNeedNewBodyStreamBlock { _, task in
            let onQueue = OperationQueue.current === manager.operationQueue
            asked.withLock { $0.tasks.append(ObjectIdentifier(task)); $0.onQueue.append(onQueue) }
            return InputStream(data: body)
        }
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: recorder(outcome, done))
        let result = runUpload(task, outcome, done)
        XCTAssertNil(result.error)
        XCTAssertEqual(received(result), body.count)
        XCTAssertEqual(asked.value.tasks, [ObjectIdentifier(task)], "asked once, for this task")
        XCTAssertEqual(asked.value.onQueue, [true], "on operationQueue")
        XCTAssertEqual(seen("/second").first?.method, "POST", "a 307 keeps the method")
        XCTAssertEqual(seen("/second").first?.body, body, "the second hop carries the whole body")
        XCTAssertEqual(task.currentRequest?.url?.path, "/second")
    }

    func testA307WithoutABlockFailsANonCopyableStreamWithBodyStreamExhausted() throws {
        serveTemporaryRedirect()
        var request = post("/first")
        request.httpBodyStream = InputStream(data: pattern(60_000, salt: 16))
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertEqual(result.calls, 1)
        XCTAssertEqual(result.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(result.error?.code, NSURLErrorRequestBodyStreamExhausted)
        XCTAssertTrue(seen("/second").isEmpty, "no second hop without a body")
    }

    func testA307WhoseBlockReturnsNilFailsANonCopyableStream() throws {
        serveTemporaryRedirect()
        var request = post("/first")
        request.httpBodyStream = InputStream(data: pattern(60_000, salt: 17))
        let manager = makeManager()
        let asked = Locked(0)
        manager.setTaskNeedNewBodyStreamBlock { _, _ in
            asked.increment()
            return nil
        }
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertEqual(asked.value, 1)
        XCTAssertEqual(result.error?.code, NSURLErrorRequestBodyStreamExhausted)
    }

    func testAMultipartStreamIsRebuiltForA307WithoutABlock() throws {
        serveTemporaryRedirect()
        let file = temporaryURL("multipart-part")
        let contents = pattern(80_000, salt: 18)
        try contents.write(to: file)
        let request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/first").absoluteString,
                                                                       parameters: ["field": "value"]) { form in
            try form.appendPart(withFileURL: file, name: "file")
        }
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let result = runUpload(manager.uploadTask(withStreamedRequest: request, progress: nil, completionHandler: recorder(outcome, done)),
                               outcome, done)
        XCTAssertNil(result.error)
        let first = try XCTUnwrap(seen("/first").first)
        let second = try XCTUnwrap(seen("/second").first)
        XCTAssertEqual(first.body, second.body, "the multipart body is rebuilt in full")
        XCTAssertNotNil(second.body.range(of: contents), "the file part arrives byte for byte")
        XCTAssertEqual(second.headers.first(name: "content-length"), request.value(forHTTPHeaderField: "Content-Length"))
        XCTAssertEqual(received(result), second.body.count)
    }

    // MARK: Progress

    func testUploadProgressEndsAtOneWithAllBytesSent() throws {
        serveCounting("/progress")
        let body = pattern(1024 * 1024, salt: 19)
        let manager = makeManager()
        struct Step { var completed: Int64; var total: Int64; var fraction: Double; var onQueue: Bool }
        let steps = Locked<[Step]>([])
        struct Sent { var bytes: Int64; var total: Int64; var expected: Int64 }
        let sent = Locked<[Sent]>([])
        manager.setTaskDidSendBodyDataBlock { _, _, bytes, total, expected in
            sent.append(Sent(bytes: bytes, total: total, expected: expected))
        }
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(with: post("/progress"), from: body, progress: { progress in
            let onQueue = OperationQueue.current === manager.operationQueue
            steps.append(Step(completed: progress.completedUnitCount, total: progress.totalUnitCount,
                              fraction: progress.fractionCompleted, onQueue: onQueue))
        }, completionHandler: recorder(outcome, done))
        let reported = try XCTUnwrap(manager.uploadProgress(for: task), "an upload task has an upload progress")
        XCTAssertTrue(task.progress === reported, "the task's own progress is its upload progress")
        let result = runUpload(task, outcome, done)
        XCTAssertNil(result.error)
        XCTAssertEqual(received(result), body.count)

        let values = steps.value
        XCTAssertFalse(values.isEmpty)
        XCTAssertEqual(values.last?.fraction, 1.0)
        XCTAssertEqual(values.filter { $0.fraction >= 1.0 }.count, 1, "one final 1.0")
        XCTAssertEqual(values.last?.completed, Int64(body.count))
        XCTAssertTrue(values.allSatisfy(\.onQueue), "progress blocks run on operationQueue")
        XCTAssertEqual(reported.fractionCompleted, 1.0)
        XCTAssertEqual(reported.completedUnitCount, Int64(body.count))

        XCTAssertEqual(task.countOfBytesSent, Int64(body.count))
        XCTAssertEqual(task.countOfBytesSent, task.countOfBytesExpectedToSend)
        XCTAssertNil(manager.uploadProgress(for: task), "progress objects are dropped once the task completed")

        let chunks = sent.value
        XCTAssertEqual(chunks.map(\.bytes).reduce(0, +), Int64(body.count))
        XCTAssertEqual(chunks.last?.total, Int64(body.count))
        XCTAssertTrue(chunks.allSatisfy { $0.expected == Int64(body.count) })
    }

    func testStreamedUploadProgressUsesTheContentLength() throws {
        serveCounting("/streamed-progress")
        let body = pattern(500_000, salt: 20)
        var request = post("/streamed-progress")
        request.httpBodyStream = InputStream(data: body)
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let manager = makeManager()
        let fractions = Locked<[Double]>([])
        let totals = Locked<[Int64]>([])
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(withStreamedRequest: request, progress: { progress in
            fractions.append(progress.fractionCompleted)
            totals.append(progress.totalUnitCount)
        }, completionHandler: recorder(outcome, done))
        let result = runUpload(task, outcome, done)
        XCTAssertNil(result.error)
        XCTAssertEqual(fractions.value.last, 1.0)
        XCTAssertEqual(totals.value.last, Int64(body.count))
        XCTAssertEqual(task.countOfBytesSent, Int64(body.count))
        XCTAssertEqual(task.countOfBytesSent, task.countOfBytesExpectedToSend)
    }
}
