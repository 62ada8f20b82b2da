import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `cURLDescription()`: the command, run by the real `curl`, sends the
/// scripted server the request the library sent.
final class CURLDescriptionTests: OperationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else { throw XCTSkip("needs /usr/bin/curl") }
        server.route("/c") { _ in [.head(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Length", "2")]), .body(Data("ok".utf8)), .end] }
    }

    /// The fields as a comparable list: lower-cased names, in order of name.
    private func fields(_ request: ScriptedServer.Request) -> [String] {
        request.headers.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    }

    /// Sends `request` through an operation, then runs its description with curl; both must reach the server alike.
    private func assertCurlSendsTheSame(_ request: URLRequest, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let operation = HTTPRequestOperation(request: request)
        XCTAssertNil(run(operation).error, file: file, line: line)
        let description = operation.cURLDescription()
        XCTAssertEqual(try CurlCommandRunner.run(description), 0, description, file: file, line: line)
        let received = server.requests
        XCTAssertEqual(received.count, 2, file: file, line: line)
        guard received.count == 2 else { return description }
        XCTAssertEqual(received[1].method, received[0].method, description, file: file, line: line)
        XCTAssertEqual(received[1].uri, received[0].uri, description, file: file, line: line)
        XCTAssertEqual(received[1].body, received[0].body, description, file: file, line: line)
        XCTAssertEqual(fields(received[1]), fields(received[0]), description, file: file, line: line)
        return description
    }

    func testAFormPostWithQuotesCookiesAndDefaultHeaders() throws {
        let cookie = try XCTUnwrap(HTTPCookie(properties: [.name: "curl-check", .value: "v1", .domain: "127.0.0.1", .path: "/c"]))
        HTTPCookieStorage.shared.setCookie(cookie)
        defer { HTTPCookieStorage.shared.deleteCookie(cookie) }
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        var request = try manager.requestSerializer.request(withMethod: "POST", urlString: url("c").absoluteString + "?q=a%20b",
                                                            parameters: ["note": "it's \"quoted\" & $HOME `x` \\ done\nline two"])
        request.setValue("O'Neil; $(rm -rf /)", forHTTPHeaderField: "X-Quote")
        let description = try assertCurlSendsTheSame(request)
        // Other suites may have left cookies for this host in the shared storage: ours must be among those sent.
        let cookieLine = description.split(separator: "\n").first { $0.contains("-H 'Cookie: ") } ?? ""
        XCTAssertTrue(cookieLine.contains("curl-check=v1"), description)
        XCTAssertTrue(description.contains("-H 'User-Agent: "), description)
        XCTAssertTrue(description.contains("-H 'Accept-Language: "), description)
        XCTAssertTrue(description.contains("--data-raw '"), description)
    }

    func testMethodsBinaryBodiesAndEmptyValues() throws {
        var put = request("c", method: "PUT")
        put.httpBody = Data([0, 1, 2, 39, 10, 0xFF, 37])
        put.setValue("", forHTTPHeaderField: "X-Empty")
        let binary = try assertCurlSendsTheSame(put)
        XCTAssertTrue(binary.hasPrefix("printf '"), binary)
        XCTAssertTrue(binary.contains("-H 'User-Agent:'"), "curl's own User-Agent is switched off: \(binary)")
        tearDown()
        try setUpWithError()
        _ = try assertCurlSendsTheSame(request("c", method: "DELETE"))
        tearDown()
        try setUpWithError()
        let head = try assertCurlSendsTheSame(request("c", method: "HEAD"))
        XCTAssertTrue(head.contains("--head"), head)
    }

    func testASessionTaskDescribesItsRequestWithTheConfigurationsCookies() throws {
        let configuration = URLSessionConfiguration.default
        let storage = HTTPCookieStorage.shared
        configuration.httpCookieStorage = storage
        configuration.httpAdditionalHeaders = ["X-Config": "yes"]
        let cookie = try XCTUnwrap(HTTPCookie(properties: [.name: "session-check", .value: "v2", .domain: "127.0.0.1", .path: "/c"]))
        storage.setCookie(cookie)
        defer { storage.deleteCookie(cookie) }
        let manager = HTTPSessionManager(baseURL: server.baseURL, sessionConfiguration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        defer { manager.invalidateSessionCancelingTasks(true) }
        let done = expectation(description: "done")
        let task = manager.post("c", parameters: ["k": 1], encoder: .json, headers: ["X-Call": "1"],
                                success: { _, _ in done.fulfill() }, failure: { _, _ in done.fulfill() })
        wait(for: [done], timeout: 15)
        let description = try XCTUnwrap(task).cURLDescription()
        XCTAssertEqual(try CurlCommandRunner.run(description), 0, description)
        let received = server.requests
        XCTAssertEqual(received.count, 2)
        guard received.count == 2 else { return }
        XCTAssertEqual(received[1].body, Data(#"{"k":1}"#.utf8))
        XCTAssertEqual(received[1].body, received[0].body)
        XCTAssertEqual(fields(received[1]), fields(received[0]), description)
        XCTAssertTrue(description.contains("session-check=v2"), description)
    }

    func testAStreamedBodyIsNotedNotRead() {
        var streamed = request("c", method: "POST")
        streamed.httpBodyStream = InputStream(data: Data("secret".utf8))
        let description = HTTPRequestOperation(request: streamed).cURLDescription()
        XCTAssertTrue(description.hasPrefix("# The body is streamed"), description)
        XCTAssertFalse(description.contains("secret"))
    }
}
