@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Trailer fields after a response body (issue 15, item 1): the request
/// succeeds with its body and the trailers are readable after completion —
/// `URLConnectionOperation.responseTrailerFields` and
/// `URLSessionManager.responseTrailerFields(for:)` — over a chunked HTTP/1.1
/// body (in-process server, nginx) and over HTTP/2 (nginx over TLS).
final class TrailerTests: SessionTasksTestCase {
    private func routeTrailers(_ path: String, body: String = "hello, trailers",
                               trailers: [(String, String)] = [("X-Sum", "1"), ("X-Note", "a"), ("x-note", "b")]) {
        server.route(path) { _ in
            [.head(status: 200, headers: [("Content-Type", "text/plain"), ("Trailer", "X-Sum, X-Note")]),
             .body(Data(body.utf8)), .endWithTrailers(trailers)]
        }
    }

    func testAChunkedResponseWithTrailersSucceedsAndTheOperationShowsThem() {
        routeTrailers("/trailers")
        let (operation, outcome) = get("/trailers")
        XCTAssertNil(outcome.error, "a response with trailer fields is a complete response")
        XCTAssertEqual(operation.responseData.map { String(decoding: $0, as: UTF8.self) }, "hello, trailers")
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(operation.responseTrailerFields, ["X-Sum": "1", "X-Note": "a, b"])
        XCTAssertNil(operation.response?.value(forHTTPHeaderField: "X-Sum"),
                     "trailers are not header fields")
    }

    func testTrailersAreReadableInTheSuccessBlock() {
        routeTrailers("/trailers")
        let operation = HTTPRequestOperation(request: request("/trailers"))
        let seen = Locked<[String: String]?>(nil)
        let done = expectation(description: "success")
        operation.setCompletionBlockWithSuccess({ operation, _ in
            seen.value = operation.responseTrailerFields
            done.fulfill()
        }, failure: { _, error in
            XCTFail("\(error)")
            done.fulfill()
        })
        OperationQueue().addOperation(operation)
        wait(for: [done], timeout: 15)
        XCTAssertEqual(seen.value?["X-Sum"], "1")
    }

    func testAResponseWithoutTrailersHasNone() {
        server.respond("/plain", body: Data("x".utf8))
        let (operation, outcome) = get("/plain")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseTrailerFields, [:])
    }

    func testTrailersReachASessionTaskThroughItsManager() {
        routeTrailers("/trailers")
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let probe = makeProbe()
        let seen = Locked<[String: String]?>(nil)
        let task = manager.dataTask(with: request("/trailers"), uploadProgress: nil, downloadProgress: nil) { [manager] response, object, error in
            if let task = probe.task.value { seen.value = manager.responseTrailerFields(for: task) }
            probe.data(response, object, error)
        }
        XCTAssertEqual(manager.responseTrailerFields(for: task), [:], "nothing before completion")
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.object as? Data).map { String(decoding: $0, as: UTF8.self) }, "hello, trailers")
        XCTAssertEqual(seen.value, ["X-Sum": "1", "X-Note": "a, b"], "readable in the completion handler")
        XCTAssertEqual(manager.responseTrailerFields(for: task), ["X-Sum": "1", "X-Note": "a, b"], "and afterwards")
        XCTAssertEqual(makeManager().responseTrailerFields(for: task), [:], "another manager's task has none")
    }

    func testTrailersOnAFileDownloadTask() {
        routeTrailers("/trailers", body: String(repeating: "z", count: 100_000))
        let manager = makeManager()
        let destination = temporaryFileURL()
        let probe = makeProbe()
        let task = manager.downloadTask(with: request("/trailers"), progress: nil, destination: { _, _ in destination },
                                        completionHandler: probe.download)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((try? Data(contentsOf: destination))?.count, 100_000)
        XCTAssertEqual(manager.responseTrailerFields(for: task)["X-Sum"], "1")
    }

    func testATrailerLineThatIsNotAFieldFailsAsABadResponse() throws {
        try assertTrailerRefused("not a field")
    }

    func testATrailerFieldWithAnInvalidNameFailsAsABadResponse() throws {
        try assertTrailerRefused("bad name: x")
    }

    private func assertTrailerRefused(_ trailer: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let raw = try RawReplyServer(reply: Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\(trailer)\r\n\r\n".utf8))
        defer { raw.shutdown() }
        var request = URLRequest(url: raw.baseURL.appendingPathComponent("x"))
        request.timeoutInterval = 10
        let outcome = run(HTTPRequestOperation(request: request))
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain, file: file, line: line)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse, "\(String(describing: outcome.error))", file: file, line: line)
    }

    // MARK: nginx (add_trailer)

    func testNginxTrailersOverHTTP1() throws {
        let nginx = try SharedServers.nginx()
        var request = URLRequest(url: nginx.httpURL.appendingPathComponent("trailers/1k.bin"))
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData?.count, 1024)
        XCTAssertEqual(operation.responseTrailerFields, ["X-Checksum": "sum-1", "X-Count": "2"])
    }

    func testNginxTrailersOverHTTP2() throws {
        let nginx = try SharedServers.pkiNginx()
        // gzip-encoded, so without Content-Length: libcurl 7.88 ends an HTTP/2
        // response at its Content-Length, before a trailing HEADERS frame.
        var request = URLRequest(url: URL(string: "https://localhost:\(nginx.httpsPort)/trailers/text.txt")!)
        request.timeoutInterval = 10
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [TestPKI.root]
        let operation = HTTPRequestOperation(request: request)
        operation.securityPolicy = policy
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(operation.responseData?.count, 34_000)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Encoding"), "gzip")
        XCTAssertEqual(operation.metrics?.httpVersion, "HTTP/2")
        XCTAssertEqual(operation.responseTrailerFields.mapKeys { $0.lowercased() }, ["x-checksum": "sum-1", "x-count": "2"])
    }
}

private extension Dictionary where Key == String {
    func mapKeys(_ transform: (String) -> String) -> [String: Value] {
        Dictionary(uniqueKeysWithValues: map { (transform($0.key), $0.value) })
    }
}
