import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Against a real nginx on loopback: plain files, gzip, keep-alive, TLS and HTTP/2.
final class NginxInteropTests: OperationTestCase {
    private func fixture() throws -> NginxFixture { try SharedServers.nginx() }

    private func fetch(_ url: URL, configure: (HTTPRequestOperation) -> Void = { _ in }) -> (HTTPRequestOperation, Outcome) {
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        configure(operation)
        return (operation, run(operation))
    }

    func testStaticFileOverHTTP11() throws {
        let nginx = try fixture()
        let (operation, outcome) = fetch(nginx.httpURL.appendingPathComponent("1k.bin"))
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData?.count, 1024)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Length"), "1024")
        XCTAssertNotNil(operation.response?.value(forHTTPHeaderField: "ETag"))
        XCTAssertTrue(operation.response?.value(forHTTPHeaderField: "Server")?.hasPrefix("nginx") ?? false)
    }

    func testLargeFileToFileStream() throws {
        let nginx = try fixture()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("afn-4m-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (operation, outcome) = fetch(nginx.httpURL.appendingPathComponent("4m.bin")) {
            $0.outputStream = OutputStream(toFileAtPath: path, append: false)
        }
        XCTAssertNil(outcome.error)
        XCTAssertNil(operation.responseData)
        let expected = FileManager.default.contents(atPath: nginx.directory.appendingPathComponent("www/4m.bin").path)
        XCTAssertEqual(FileManager.default.contents(atPath: path), expected)
    }

    func testGzipFromNginxIsDecoded() throws {
        let nginx = try fixture()
        let (operation, outcome) = fetch(nginx.httpURL.appendingPathComponent("text.txt"))
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Encoding"), "gzip")
        XCTAssertEqual(operation.responseString, String(repeating: "hello gzip world ", count: 2000))
    }

    func testNotFoundFailsValidationWith404Response() throws {
        let nginx = try fixture()
        let (operation, outcome) = fetch(nginx.httpURL.appendingPathComponent("missing"))
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(operation.response?.statusCode, 404)
    }

    func testServerErrorStatus() throws {
        let nginx = try fixture()
        let (operation, outcome) = fetch(nginx.httpURL.appendingPathComponent("status/x"))
        XCTAssertNotNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 500)
        XCTAssertEqual(operation.responseString, "boom")
    }

    func testDefaultPolicyRejectsSelfSignedCertificate() throws {
        let nginx = try fixture()
        // A marker of its own: the shared nginx's log also holds other tests' requests.
        let marker = "rejected-\(UUID().uuidString)"
        let (_, outcome) = fetch(URL(string: nginx.httpsURL.appendingPathComponent("1k.bin").absoluteString + "?\(marker)")!)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertTrue([NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot].contains(outcome.error?.code ?? 0),
                      "\(String(describing: outcome.error))")
        XCTAssertFalse(nginx.accessLog.contains(marker), "no request may reach a server the policy rejected")
    }

    func testHTTP2OverTLSWhenTheServerOffersIt() throws {
        let nginx = try fixture()
        let marker = "h2-\(UUID().uuidString)"
        let (operation, outcome) = fetch(URL(string: nginx.httpsURL.absoluteString + "/1k.bin?\(marker)")!) {
            let policy = SecurityPolicy(pinningMode: .none)
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false
            $0.securityPolicy = policy
        }
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData?.count, 1024)
        XCTAssertTrue(nginx.logShows("\"GET /1k.bin?\(marker) HTTP/2.0\""), "this request's own line: \(nginx.accessLog)")
    }

    func testConcurrentRequestsShareConnections() throws {
        // The in-process server counts the connections it accepted (nginx's log does not show them).
        server.respond("/1k.bin", body: Data(repeating: UInt8(ascii: "a"), count: 1024))
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        let operations = (0..<40).map { _ -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: request("/1k.bin"))
            operation.completionQueue = DispatchQueue.global()
            return operation
        }
        queue.addOperations(operations, waitUntilFinished: false)
        XCTAssertTrue(spin(until: { operations.allSatisfy(\.isFinished) }, timeout: 20))
        XCTAssertTrue(operations.allSatisfy { $0.error == nil && $0.responseData?.count == 1024 })
        XCTAssertEqual(server.requests.count, 40)
        // At most 4 run at once: without reuse there would be 40 connections. The margin
        // covers a connection still being handed back when the next operation starts.
        XCTAssertLessThanOrEqual(server.connectionCount, 8, "connections for 40 requests, 4 at a time")
    }

    func testASecondGETIsRevalidatedAndServedFromTheCache() throws {
        let nginx = try fixture()
        var request = URLRequest(url: URL(string: nginx.httpURL.absoluteString + "/1k.bin?cache=\(UUID().uuidString)")!)
        request.timeoutInterval = 10
        let first = HTTPRequestOperation(request: request)
        XCTAssertNil(run(first).error)
        let second = HTTPRequestOperation(request: request)
        XCTAssertNil(run(second).error)
        XCTAssertEqual(second.responseData, first.responseData)
        XCTAssertEqual(second.response?.statusCode, 200)
        // nginx saw the conditional request and answered 304 (or, within the
        // heuristic freshness window, was not asked at all).
        // The unique query ties the log lines to this test's two requests. Exactly one full 200
        // (a second one means the cache was not used); the second GET either was not sent or was
        // a conditional one answered 304.
        let path = request.url!.path + "?" + request.url!.query!
        XCTAssertTrue(nginx.logShows("\"GET \(path) HTTP/1.1\" 200"))
        let mine = { nginx.accessLog.components(separatedBy: "\n").filter { $0.contains("\"GET \(path) HTTP/1.1\"") } }
        // nginx writes a line a little after its response: give a second 200 time to show.
        _ = spin(until: { mine().count >= 2 }, timeout: 1)
        XCTAssertEqual(mine().filter { $0.contains("\" 200 ") }.count, 1, mine().joined(separator: "\n"))
        XCTAssertLessThanOrEqual(mine().filter { $0.contains("\" 304 ") }.count, 1)
        XCTAssertEqual(mine().count, mine().filter { $0.contains("\" 200 ") || $0.contains("\" 304 ") }.count)
    }

    func testPausedOperationsDoNotKeepTheirConnections() throws {
        // 2.x issue 1544: pausing left connections open. Count this process's sockets.
        func socketCount() -> Int {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
            return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))?.hasPrefix("socket:") ?? false }.count
        }
        server.route("/stall") { _ in [.head(status: 200, headers: [("Content-Length", "100000")]), .body(Data(repeating: 1, count: 1000)), .wait(30)] }
        let baseline = socketCount()
        let operations = (0..<10).map { _ in HTTPRequestOperation(request: request("/stall")) }
        operations.forEach { $0.start() }
        XCTAssertTrue(spin(until: { self.server.requests.count == 10 }, timeout: 10))
        XCTAssertGreaterThanOrEqual(socketCount(), baseline + 10)
        operations.forEach { $0.pause() }
        XCTAssertTrue(operations.allSatisfy(\.isPaused))
        XCTAssertTrue(spin(until: { socketCount() <= baseline + 2 }, timeout: 10), "sockets still open: \(socketCount()) vs \(baseline)")
        operations.forEach { $0.cancel() }
    }
}
