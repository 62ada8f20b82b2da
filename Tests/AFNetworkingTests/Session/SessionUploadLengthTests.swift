@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A request body is sent with exactly its declared `Content-Length`: a body
/// source longer than declared fails the request before its last declared byte
/// (nothing past the length reaches the server, where it would read as the
/// next request), and one that is shorter fails at once. An upload task's
/// file with no `Content-Length` of the caller's is measured when the transfer
/// starts.
final class SessionUploadLengthTests: SessionTransferTestCase {
    private let smuggled = Data("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n".utf8)

    private func serveCounting(_ path: String) {
        server.route(path) { request in
            let json = Data("{\"received\":\(request.body.count)}".utf8)
            return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(json.count)")]),
                    .body(json), .end]
        }
        server.respond("/smuggled", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        server.respond("/after", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
    }

    private func post(_ path: String) -> URLRequest {
        var request = self.request(path, method: "POST", timeout: 20)
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        return request
    }

    /// One plain request after the upload: the server must then hold exactly
    /// that one request, so nothing of the upload was taken for a request.
    private func assertOnlyTheFollowUpReachedTheServer(_ manager: URLSessionManager) {
        let (_, after) = runData(manager, request("/after"))
        XCTAssertNil(after.error)
        XCTAssertEqual(server.requests.map(\.uri), ["/after"],
                       "the failed upload was never complete at the server and nothing after it was read as a request")
    }

    /// URLSession sends an upload task's file as it is when the transfer
    /// starts: one that grew after the task was made is sent whole, with its
    /// length then (it was refused with -1021), and what it holds is body,
    /// never a second request.
    func testAFileThatGrowsAfterTheTaskWasMadeIsSentAsItIsWhenTheTransferStarts() throws {
        serveCounting("/upload")
        let file = temporaryURL("growing-upload")
        try pattern(1000, salt: 3).write(to: file)
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(with: post("/upload"), fromFile: file, progress: nil, completionHandler: recorder(outcome, done))
        // The file grows (a log being written) after the task was made.
        let handle = try FileHandle(forWritingTo: file)
        handle.seekToEndOfFile()
        handle.write(smuggled)
        try handle.close()

        let result = finish(task, outcome, done, timeout: 30)
        XCTAssertEqual(result.calls, 1)
        XCTAssertNil(result.error)
        let received = (result.object as? [String: Any])?["received"]
        XCTAssertEqual((received as? Int) ?? (received as? NSNumber)?.intValue, 1000 + smuggled.count)
        XCTAssertEqual(server.requests.map(\.uri), ["/upload"], "the appended bytes were body, not a request")
        XCTAssertEqual(server.requests.first?.body, pattern(1000, salt: 3) + smuggled)
    }

    func testAFileThatShrinksAfterTheTaskWasMadeIsSentAsItIsWhenTheTransferStarts() throws {
        serveCounting("/upload")
        let file = temporaryURL("shrinking-upload")
        try pattern(1000, salt: 4).write(to: file)
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(with: post("/upload"), fromFile: file, progress: nil, completionHandler: recorder(outcome, done))
        try pattern(600, salt: 4).write(to: file)

        let result = finish(task, outcome, done, timeout: 30)
        XCTAssertEqual(result.calls, 1)
        XCTAssertNil(result.error)
        XCTAssertEqual(server.requests.first?.body, pattern(600, salt: 4))
    }

    /// A Content-Length the caller set stands: a file of another length fails
    /// the request, and nothing past the declared length reaches the server.
    func testAFileLongerThanTheCallersContentLengthFailsAndSmugglesNothing() throws {
        serveCounting("/upload")
        let file = temporaryURL("declared-upload")
        try (pattern(1000, salt: 7) + smuggled).write(to: file)
        var request = post("/upload")
        request.setValue("1000", forHTTPHeaderField: "Content-Length")
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = manager.uploadTask(with: request, fromFile: file, progress: nil, completionHandler: recorder(outcome, done))
        let result = finish(task, outcome, done, timeout: 30)
        XCTAssertEqual(result.error?.code, NSURLErrorRequestBodyStreamExhausted)
        XCTAssertLessThan(task.countOfBytesSent, 1000, "the last declared byte is held until the stream is known to end")
        assertOnlyTheFollowUpReachedTheServer(manager)
    }

    func testAStreamLongerThanItsContentLengthHeaderFailsAndSmugglesNothing() throws {
        serveCounting("/upload")
        var request = post("/upload")
        request.setValue("1000", forHTTPHeaderField: "Content-Length")
        request.httpBodyStream = InputStream(data: pattern(1000, salt: 5) + smuggled)
        let manager = makeManager()
        let (_, result) = runData(manager, request)
        XCTAssertEqual(result.calls, 1)
        XCTAssertEqual(result.error?.code, NSURLErrorRequestBodyStreamExhausted)
        assertOnlyTheFollowUpReachedTheServer(manager)
    }

    func testAStreamOfExactlyItsContentLengthIsSentWhole() throws {
        serveCounting("/upload")
        for size in [0, 1, 1000, 512 * 1024 + 1] {
            var request = post("/upload")
            request.setValue("\(size)", forHTTPHeaderField: "Content-Length")
            request.httpBodyStream = InputStream(data: pattern(size, salt: 6))
            let (task, result) = runData(makeManager(), request)
            XCTAssertNil(result.error, "\(size)")
            let value = (result.object as? [String: Any])?["received"]
            XCTAssertEqual((value as? Int) ?? (value as? NSNumber)?.intValue, size)
            XCTAssertEqual(task.countOfBytesSent, Int64(size))
        }
    }
}
