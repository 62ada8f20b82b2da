@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Misbehaving servers and bad requests: each ends the operation exactly once
/// with the stated NSURLErrorDomain error and the failing URL, never with a
/// success carrying wrong data.
final class TransportFaultTests: OperationTestCase {
    // MARK: - Broken responses

    func testAConnectionClosedInTheMiddleOfTheHeadIsALostConnection() throws {
        for reply in ["HTTP/1.1 200 OK\r\nContent-Length: 10\r\nX-A: b", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nX-Only: 1\r\n"] {
            try assertFailure(reply: reply, code: NSURLErrorNetworkConnectionLost)
        }
    }

    func testAnInvalidChunkSizeIsABadServerResponse() throws {
        try assertFailure(reply: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", code: NSURLErrorBadServerResponse)
    }

    func testConflictingContentLengthsAreABadServerResponse() throws {
        let error = try assertFailure(reply: "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 5\r\n\r\nhello",
                                      code: NSURLErrorBadServerResponse)
        XCTAssertTrue(error.localizedDescription.contains("Content-Length"), error.localizedDescription)
        try assertFailure(reply: "HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nhi", code: NSURLErrorBadServerResponse)
        try assertFailure(reply: "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhi", code: NSURLErrorBadServerResponse)
    }

    func testRepeatedEqualContentLengthsAreAccepted() throws {
        let (operation, outcome) = try fetch(reply: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData, Data("hi".utf8))
    }

    func testAStatusLineThatIsNotHTTPIsABadServerResponse() throws {
        for reply in ["FOO/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi", "HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\nhi",
                      "hello there\r\n\r\n", "HTTP/1.1 20\r\n\r\n"] {
            try assertFailure(reply: reply, code: NSURLErrorBadServerResponse)
        }
    }

    func testAHeaderBlockOverTheLimitIsRefusedWithBoundedMemory() throws {
        let many = (0..<300).map { "X-H\($0): \(String(repeating: "a", count: 1000))\r\n" }.joined()
        let error = try assertFailure(reply: "HTTP/1.1 200 OK\r\n\(many)Content-Length: 2\r\n\r\nhi", code: NSURLErrorBadServerResponse)
        XCTAssertTrue(error.localizedDescription.contains("header"), error.localizedDescription)
        // One line over curl's own per-line limit.
        try assertFailure(reply: "HTTP/1.1 200 OK\r\nX-Big: \(String(repeating: "a", count: 200_000))\r\nContent-Length: 2\r\n\r\nhi",
                          code: NSURLErrorBadServerResponse)
    }

    func testABareCarriageReturnInAHeaderValueNeverReachesTheApp() throws {
        let (operation, outcome) = try fetch(reply: "HTTP/1.1 200 OK\r\nX-A: one\rtwo\r\nContent-Length: 2\r\n\r\nhi")
        XCTAssertNil(outcome.error)
        let value = try XCTUnwrap(operation.response?.value(forHTTPHeaderField: "X-A"))
        XCTAssertEqual(value, "one two", "RFC 9110 §5.5: a CR in a value is replaced by a space")
        XCTAssertFalse(value.contains("\r"))
    }

    func testANulInAHeaderValueIsRefused() throws {
        try assertFailure(reply: "HTTP/1.1 200 OK\r\nX-A: one\u{0}two\r\nContent-Length: 2\r\n\r\nhi", code: NSURLErrorBadServerResponse)
    }

    // MARK: - Bad requests, refused before anything is sent

    func testARequestHeaderWithALineBreakOrNulIsRefusedBeforeSending() {
        server.respond("/h", body: Data("x".utf8))
        // swift-corelibs-foundation's setValue(_:forHTTPHeaderField:) silently
        // drops such values itself; allHTTPHeaderFields lets them in, and a
        // bad name gets in either way. Whatever gets in is refused.
        let viaFields: [[String: String]] = [["X-Evil": "a\r\nInjected: yes"], ["X-Evil": "a\nb"], ["X-Evil": "a\rb"],
                                             ["X-Evil": "a\u{0}b"], ["X-Bad\r\nName": "v"], ["X Space": "v"], ["": "v"]]
        for fields in viaFields {
            var request = request("/h")
            request.allHTTPHeaderFields = fields
            assertRefused(request, "\(fields)")
        }
        var viaSetValue = request("/h")
        viaSetValue.setValue("v", forHTTPHeaderField: "X-Bad\nName")
        assertRefused(viaSetValue, "a name set with setValue")
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }

    private func assertRefused(_ request: URLRequest, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let outcome = run(HTTPRequestOperation(request: request))
        XCTAssertEqual(outcome.calls, 1, file: file, line: line)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain, what, file: file, line: line)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadURL, what, file: file, line: line)
        XCTAssertNotNil(outcome.error?.userInfo[NSURLErrorFailingURLErrorKey], what, file: file, line: line)
        XCTAssertTrue(outcome.error?.localizedDescription.contains("header") ?? false, file: file, line: line)
    }

    func testURLsWithoutSchemeOrHostOrWithAnotherSchemeFailBeforeAnyLookup() throws {
        let cases: [(String, Int)] = [("relative/path", NSURLErrorUnsupportedURL), ("http:///127.0.0.1:8080/x", NSURLErrorBadURL),
                                      ("ftp://127.0.0.1/file", NSURLErrorUnsupportedURL), ("file:///etc/passwd", NSURLErrorUnsupportedURL)]
        for (string, code) in cases {
            let url = try XCTUnwrap(URL(string: string))
            let operation = HTTPRequestOperation(request: URLRequest(url: url))
            let outcome = run(operation)
            XCTAssertEqual(outcome.calls, 1)
            XCTAssertEqual(outcome.error?.code, code, string)
            // State, not a stopwatch: a transfer that looked up a name or connected has curl's timings.
            XCTAssertNil(operation.metrics, "no DNS lookup or connection attempt for \(string)")
        }
    }

    func testABodyStreamShorterThanItsContentLengthFailsAtOnce() {
        server.route("/upload") { _ in [.head(status: 200, headers: [("Content-Length", "0")]), .end] }
        var request = request("/upload", method: "POST", timeout: 60)
        request.httpBodyStream = InputStream(data: Data(repeating: 1, count: 1000))
        request.setValue("5000", forHTTPHeaderField: "Content-Length")
        let started = Date()
        let outcome = run(HTTPRequestOperation(request: request), timeout: 30)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.code, NSURLErrorRequestBodyStreamExhausted)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "it must not wait out the 60 s idle timeout")
    }

    func testACachedResponseIntoABrokenOutputStreamFails() throws {
        let cache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        let previous = URLCache.shared
        URLCache.shared = cache
        defer { URLCache.shared = previous }
        server.respond("/cached", headers: [("Cache-Control", "max-age=3600")], body: Data("cached body".utf8))
        XCTAssertNil(run(HTTPRequestOperation(request: request("/cached"))).error)
        XCTAssertEqual(server.requests.count, 1)

        let operation = HTTPRequestOperation(request: request("/cached"))
        operation.outputStream = OutputStream(toFileAtPath: "/nonexistent-directory/\(UUID().uuidString)/file", append: false)
        let outcome = run(operation)
        XCTAssertEqual(server.requests.count, 1, "answered from the cache")
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertNotNil(outcome.error, "nothing could be written: not a success")
    }

    // MARK: - Progress across pause and resume

    func testProgressTotalsStayAbsoluteAcrossPauseAndResume() {
        let body = Data((0..<102_400).map { UInt8(truncatingIfNeeded: $0) })
        server.route("/big") { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                return [.head(status: 206, headers: [("Content-Length", "\(body.count - start)"), ("ETag", "\"v\""),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(Data(body[start...])), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"v\"")]),
                    .body(body[0..<30_720]), .wait(30)]
        }
        let operation = HTTPRequestOperation(request: request("/big"))
        let reports = Locked<[(Int64, Int64)]>([])
        let paused = Locked(false)
        operation.setDownloadProgressBlock { [weak operation] _, total, expected in
            reports.withLock { $0.append((total, expected)) }
            if total >= 30_720, paused.setOnce() { operation?.pause() }
        }
        let finished = Locked(false)
        operation.setCompletionBlockWithSuccess({ _, _ in finished.value = true }, failure: { _, _ in finished.value = true })
        operation.start()
        XCTAssertTrue(spin { operation.isPaused })
        operation.resume()
        XCTAssertTrue(spin { finished.value && operation.isFinished })
        XCTAssertNil(operation.error)
        XCTAssertEqual(operation.responseData, body)
        let last = reports.value.last
        XCTAssertEqual(last?.0, 102_400, "the total counts from the entity's first byte")
        XCTAssertEqual(last?.1, 102_400, "the expected total is the entity's full length")
        XCTAssertTrue(reports.value.allSatisfy { $0.0 <= $0.1 }, "never more read than expected: \(reports.value)")
    }

    // MARK: - Helpers

    /// Runs one GET against a server that answers every connection with `reply`.
    private func fetch(reply: String) throws -> (HTTPRequestOperation, Outcome) {
        let raw = try RawReplyServer(reply: Data(reply.utf8))
        defer { raw.shutdown() }
        var request = URLRequest(url: raw.baseURL.appendingPathComponent("x"))
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        let outcome = run(operation, timeout: 20)
        XCTAssertEqual(outcome.calls, 1, "exactly one completion")
        return (operation, outcome)
    }

    @discardableResult
    private func assertFailure(reply: String, code: Int, file: StaticString = #filePath, line: UInt = #line) throws -> NSError {
        let (operation, outcome) = try fetch(reply: reply)
        let error = try XCTUnwrap(outcome.error, "expected \(code) for \(reply.prefix(60).debugDescription)", file: file, line: line)
        XCTAssertEqual(error.domain, NSURLErrorDomain, file: file, line: line)
        XCTAssertEqual(error.code, code, "\(reply.prefix(60).debugDescription): \(error)", file: file, line: line)
        XCTAssertNotNil(error.userInfo[NSURLErrorFailingURLErrorKey], file: file, line: line)
        XCTAssertTrue(operation.isFinished, file: file, line: line)
        return error
    }
}
