import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The URLRequest → libcurl mapping, against the in-process server.
final class TransferTests: OperationTestCase {
    func testGETDeliversStatusHeadersAndBody() {
        server.respond("/hello", headers: [("Content-Type", "text/plain; charset=utf-8"), ("X-Thing", "1")], body: Data("hi there".utf8))
        let (operation, outcome) = get("/hello")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "x-thing"), "1")
        XCTAssertEqual(operation.responseData, Data("hi there".utf8))
        XCTAssertEqual(operation.responseString, "hi there")
        XCTAssertEqual(outcome.object as? Data, Data("hi there".utf8))
        XCTAssertTrue(operation.isFinished)
    }

    func testRequestMethodHeadersAndBodyReachTheServer() throws {
        server.respond("/echo", body: Data("ok".utf8))
        var request = self.request("/echo", method: "PUT")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("yes", forHTTPHeaderField: "X-Custom")
        request.httpBody = Data("{\"a\":1}".utf8)
        let outcome = run(HTTPRequestOperation(request: request))
        XCTAssertNil(outcome.error)
        let seen = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(seen.method, "PUT")
        XCTAssertEqual(seen.headers.first(name: "x-custom"), "yes")
        XCTAssertEqual(seen.headers.first(name: "content-type"), "application/json")
        XCTAssertEqual(seen.body, Data("{\"a\":1}".utf8))
        XCTAssertNil(seen.headers.first(name: "expect"), "curl's Expect: 100-continue must not be sent")
    }

    func testEveryMethodIsSentAsIs() throws {
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"] {
            server.respond("/m", body: method == "HEAD" ? Data() : Data("x".utf8))
            let outcome = run(HTTPRequestOperation(request: request("/m", method: method)))
            XCTAssertNil(outcome.error, method)
            XCTAssertEqual(server.requests.last?.method, method)
        }
    }

    /// A HEAD with content would have gone out as a POST: refused before
    /// anything is sent. An empty body is no body.
    func testAHeadWithABodyIsRefusedAndAnEmptyOneIsSentAsHead() throws {
        server.respond("/h", body: Data())
        let before = server.requests.count
        for body in [Data("x".utf8)] {
            var request = self.request("/h", method: "HEAD")
            request.httpBody = body
            XCTAssertEqual(run(HTTPRequestOperation(request: request)).error?.code, NSURLErrorBadURL)
        }
        var streamed = request("/h", method: "head")
        streamed.httpBodyStream = InputStream(data: Data("x".utf8))
        XCTAssertEqual(run(HTTPRequestOperation(request: streamed)).error?.code, NSURLErrorBadURL)
        XCTAssertEqual(server.requests.count, before, "nothing was sent")
        var empty = request("/h", method: "HEAD")
        empty.httpBody = Data()
        XCTAssertNil(run(HTTPRequestOperation(request: empty)).error)
        XCTAssertEqual(server.requests.last?.method, "HEAD")
    }

    /// A caller's own Content-Length goes out as it is (curl adds none of
    /// its own), so one that would frame the request wrongly is refused
    /// before anything is sent; a right one is sent.
    func testACallersContentLengthMustFrameTheBody() throws {
        server.respond("/cl", body: Data("ok".utf8))
        let before = server.requests.count
        let wrong: [(length: String, body: Data?, streamed: Bool)] = [
            ("abc", nil, true), ("5 5", nil, true), ("+5", Data("12345".utf8), false), ("-1", nil, true),
            ("4", Data("12345".utf8), false), ("6", Data("12345".utf8), false), ("5", nil, false),
        ]
        for case let (length, body, streamed) in wrong {
            var request = self.request("/cl", method: "POST")
            request.setValue(length, forHTTPHeaderField: "Content-Length")
            if streamed { request.httpBodyStream = InputStream(data: Data("12345".utf8)) } else { request.httpBody = body }
            let error = run(HTTPRequestOperation(request: request)).error as NSError?
            XCTAssertEqual(error?.code, NSURLErrorBadURL, "Content-Length: \(length)")
            XCTAssertEqual(error?.domain, NSURLErrorDomain)
        }
        XCTAssertEqual(server.requests.count, before, "nothing was sent")

        var right = request("/cl", method: "POST")
        right.setValue(" 5", forHTTPHeaderField: "Content-Length")
        right.httpBody = Data("12345".utf8)
        XCTAssertNil(run(HTTPRequestOperation(request: right)).error)
        XCTAssertEqual(server.requests.last?.body, Data("12345".utf8))
        var empty = request("/cl", method: "GET")
        empty.setValue("0", forHTTPHeaderField: "Content-Length")
        XCTAssertNil(run(HTTPRequestOperation(request: empty)).error)
    }

    func testUploadFromInputStreamWithProgress() throws {
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) })
        server.respond("/upload", body: Data("stored".utf8))
        let operation = HTTPRequestOperation(request: request("/upload", method: "POST"))
        operation.inputStream = InputStream(data: payload)
        let lastTotal = Locked<Int64>(0)
        operation.setUploadProgressBlock { _, total, _ in lastTotal.withLock { $0 = max($0, total) } }
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(server.requests.last?.body, payload)
        XCTAssertTrue(spin { lastTotal.value == Int64(payload.count) }, "last total \(lastTotal.value)")
    }

    func testUploadFromStreamWithDeclaredLengthIsNotChunked() throws {
        let payload = Data(repeating: 7, count: 10_000)
        server.respond("/upload", body: Data())
        var request = self.request("/upload", method: "POST")
        request.setValue("\(payload.count)", forHTTPHeaderField: "Content-Length")
        request.httpBodyStream = InputStream(data: payload)
        XCTAssertNil(run(HTTPRequestOperation(request: request)).error)
        let seen = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(seen.body, payload)
        XCTAssertEqual(seen.headers.first(name: "content-length"), "10000")
        XCTAssertNil(seen.headers.first(name: "transfer-encoding"))
    }

    func testFileOutputStreamReceivesBodyAndResponseDataIsNil() throws {
        let body = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        server.respond("/file", body: body)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("afn-out-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let operation = HTTPRequestOperation(request: request("/file"))
        operation.outputStream = OutputStream(toFileAtPath: path, append: false)
        let progressCalls = Locked(0)
        let lastTotal = Locked<Int64>(0)
        operation.setDownloadProgressBlock { _, total, expected in
            progressCalls.increment()
            lastTotal.value = total
            XCTAssertEqual(expected, Int64(body.count))
        }
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertNil(operation.responseData)
        XCTAssertEqual(FileManager.default.contents(atPath: path), body)
        XCTAssertTrue(spin { lastTotal.value == Int64(body.count) })
        XCTAssertGreaterThan(progressCalls.value, 0)
    }

    /// A challenge nobody answers, whose body is larger than the library
    /// holds while it decides, fails rather than leaving a short file.
    func testAnUnansweredChallengeWithABodyPastTheHeldLimitFailsOnAStream() throws {
        server.respond("/locked", status: 401, headers: [("WWW-Authenticate", "Basic realm=\"r\"")],
                       body: Data(repeating: 0x61, count: 2 << 20))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("afn-out-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let operation = HTTPRequestOperation(request: request("/locked"))
        operation.outputStream = OutputStream(toFileAtPath: path, append: false)
        operation.responseSerializer.acceptableStatusCodes = nil
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.code, NSURLErrorDataLengthExceedsMaximum, String(describing: outcome.error))
        XCTAssertEqual(operation.response?.statusCode, 401)
        XCTAssertNotEqual(FileManager.default.contents(atPath: path)?.count, 1 << 20, "no body cut at the held limit")
    }

    /// In memory too: a redirect's body is held only up to the limit while
    /// the follow-up is decided (a followed redirect's body is thrown away, so
    /// a huge one costs at most the limit), and an unanswered challenge past
    /// it fails rather than arriving short.
    func testARedirectsOrChallengesBodyIsHeldOnlyUpToTheLimitInMemory() throws {
        server.respond("/moved", status: 302, headers: [("Location", "/landing")], body: Data(repeating: 0x62, count: 8 << 20))
        server.respond("/landing", body: Data("landed".utf8))
        let followed = HTTPRequestOperation(request: request("/moved"))
        XCTAssertNil(run(followed).error)
        XCTAssertEqual(followed.responseData, Data("landed".utf8))

        server.respond("/locked", status: 401, headers: [("WWW-Authenticate", "Basic realm=\"r\"")],
                       body: Data(repeating: 0x61, count: 2 << 20))
        let unanswered = HTTPRequestOperation(request: request("/locked"))
        unanswered.responseSerializer.acceptableStatusCodes = nil
        let outcome = run(unanswered)
        XCTAssertEqual(outcome.error?.code, NSURLErrorDataLengthExceedsMaximum, String(describing: outcome.error))
        XCTAssertEqual(unanswered.response?.statusCode, 401)
    }

    func testCallerMemoryOutputStreamFillsResponseData() {
        server.respond("/mem", body: Data("memory".utf8))
        let operation = HTTPRequestOperation(request: request("/mem"))
        operation.outputStream = OutputStream(toMemory: ())
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseData, Data("memory".utf8))
    }

    func testNoContent204() {
        server.route("/empty") { _ in [.head(status: 204, headers: []), .end] }
        let (operation, outcome) = get("/empty")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 204)
        XCTAssertEqual(operation.responseData, Data())
    }

    func testServerError500FailsValidationButKeepsResponse() {
        server.respond("/boom", status: 500, body: Data("broken".utf8))
        let (operation, outcome) = get("/boom")
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(operation.response?.statusCode, 500)
        XCTAssertEqual(operation.responseData, Data("broken".utf8))
    }

    func testChunkedBodyArrivesWhole() {
        server.route("/chunked") { _ in
            [.head(status: 200, headers: [("Transfer-Encoding", "chunked")]),
             .body(Data("one,".utf8)), .wait(0.05), .body(Data("two,".utf8)), .wait(0.05), .body(Data("three".utf8)), .end]
        }
        let (operation, outcome) = get("/chunked")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, "one,two,three")
    }

    func testGzipBodyIsDecodedTransparently() throws {
        let plain = Data(String(repeating: "compress me ", count: 500).utf8)
        let compressed = try GzipCommand.compress(plain)
        server.respond("/gz", headers: [("Content-Encoding", "gzip")], body: compressed)
        let (operation, outcome) = get("/gz")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData, plain)
        XCTAssertTrue(server.requests.last?.headers.first(name: "accept-encoding")?.contains("gzip") ?? false)
    }

    func testCorruptGzipIsCannotDecode() {
        server.respond("/badgz", headers: [("Content-Encoding", "gzip")], body: Data("definitely not gzip".utf8))
        let (_, outcome) = get("/badgz")
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotDecodeContentData)
    }

    func testRedirectsAreFollowedAndFinalResponseReported() {
        server.route("/a") { _ in [.head(status: 302, headers: [("Location", "/b"), ("Content-Length", "0")]), .end] }
        server.respond("/b", headers: [("X-Final", "yes")], body: Data("landed".utf8))
        let (operation, outcome) = get("/a")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(operation.response?.url?.path, "/b")
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "X-Final"), "yes")
        XCTAssertEqual(operation.responseString, "landed")
    }

    func testKeepAliveReusesOneConnection() {
        server.respond("/k", body: Data("k".utf8))
        for _ in 0..<5 { XCTAssertNil(get("/k").1.error) }
        XCTAssertEqual(server.connectionCount, 1)
    }

    func testProxyFromEnvironmentIsUsed() throws {
        // The scripted server plays the proxy: it sees the absolute-form target.
        server.route("http://proxied.example/thing") { _ in [.head(status: 200, headers: [("Content-Length", "7")]), .body(Data("proxied".utf8)), .end] }
        setenv("http_proxy", "http://127.0.0.1:\(server.port)", 1)
        defer { unsetenv("http_proxy") }
        var request = URLRequest(url: URL(string: "http://proxied.example/thing")!)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, "proxied")
        XCTAssertEqual(server.requests.last?.uri, "http://proxied.example/thing")
    }

    func testNoProxyBypassesProxy() throws {
        server.respond("/direct", body: Data("direct".utf8))
        setenv("http_proxy", "http://127.0.0.1:1", 1)
        setenv("no_proxy", "127.0.0.1", 1)
        defer { unsetenv("http_proxy"); unsetenv("no_proxy") }
        let (operation, outcome) = get("/direct")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, "direct")
    }

    func testResponseStringEncodingFollowsCharset() {
        let latin1 = "café".data(using: .isoLatin1)!
        server.respond("/latin", headers: [("Content-Type", "text/plain; charset=ISO-8859-1")], body: latin1)
        let (operation, _) = get("/latin")
        XCTAssertEqual(operation.responseStringEncoding, .isoLatin1)
        XCTAssertEqual(operation.responseString, "café")
    }

    func testResponseStringEncodingDefaultsToUTF8() {
        server.respond("/plain", body: Data("ünïcode".utf8))
        let (operation, _) = get("/plain")
        XCTAssertEqual(operation.responseStringEncoding, .utf8)
        XCTAssertEqual(operation.responseString, "ünïcode")
    }
}
