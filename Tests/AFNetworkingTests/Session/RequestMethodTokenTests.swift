@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A request method is an RFC 9110 token (§9.1). One with a CR, LF or space
/// was written into the request line as it was and smuggled a second request
/// (`GET /SMUGGLED` ran on the server, the operation succeeded). Now every path
/// refuses it with `NSURLErrorBadURL` before anything is sent.
final class RequestMethodTokenTests: SessionTransferTestCase {
    private let smuggling = ["GET /SMUGGLED HTTP/1.1\r\nHost: x\r\n\r\nGET", "GET\r\n", "GET\n", "GE T", "GET\u{0}", "", "GÉT", "G(ET)"]

    override func setUpWithError() throws {
        try super.setUpWithError()
        server.respond("/m", body: Data("m".utf8))
        server.respond("/SMUGGLED", body: Data("smuggled".utf8))
    }

    private func assertRefused(_ error: Error?, _ method: String, file: StaticString = #filePath, line: UInt = #line) {
        let error = error as NSError?
        XCTAssertEqual(error?.domain, NSURLErrorDomain, method.debugDescription, file: file, line: line)
        XCTAssertEqual(error?.code, NSURLErrorBadURL, method.debugDescription, file: file, line: line)
        XCTAssertTrue(error?.localizedDescription.contains("method") ?? false, file: file, line: line)
    }

    func testAnOperationWithAMethodThatIsNotATokenIsRefusedBeforeSending() {
        for method in smuggling {
            var request = request("/m")
            request.httpMethod = method
            // Foundation may keep an empty method as GET: then it is a good request.
            guard let sent = request.httpMethod, sent == method else { continue }
            let outcome = run(HTTPRequestOperation(request: request))
            XCTAssertEqual(outcome.calls, 1)
            assertRefused(outcome.error, method)
        }
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }

    func testASessionTaskWithAMethodThatIsNotATokenIsRefusedBeforeSending() {
        let manager = makeManager()
        var request = request("/m")
        request.httpMethod = smuggling[0]
        let (_, outcome) = runData(manager, request)
        assertRefused(outcome.error, smuggling[0])
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }

    func testTheVerbsRefuseSuchAMethodWithoutMakingAnOperationOrTask() throws {
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = .global()
        let failed = expectation(description: "failure(nil, error)")
        let error = Locked<Error?>(nil)
        let operation = manager.httpRequestOperation(withHTTPMethod: smuggling[0], urlString: "m", parameters: nil, success: nil) { operation, failure in
            XCTAssertNil(operation)
            error.value = failure
            failed.fulfill()
        }
        XCTAssertNil(operation)
        wait(for: [failed], timeout: 10)
        assertRefused(error.value, smuggling[0])

        XCTAssertThrowsError(try HTTPRequestSerializer().request(withMethod: "GET\r\nX: y", urlString: url("m").absoluteString, parameters: nil)) {
            assertRefused($0, "GET\r\nX: y")
        }
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }

    func testMethodsThatAreTokensAreSentAsTheyAre() {
        server.route("/echo") { request in
            let method = Data(request.method.utf8)
            return [.head(status: 200, headers: [("Content-Length", "\(method.count)")]), .body(method), .end]
        }
        // Methods the test server's parser (llhttp) knows; it refuses others.
        for method in ["PROPFIND", "PURGE", "PATCH"] {
            let operation = HTTPRequestOperation(request: { var r = request("/echo"); r.httpMethod = method; return r }())
            let outcome = run(operation)
            XCTAssertNil(outcome.error, method)
            XCTAssertEqual(operation.responseString, method)
        }
    }

    func testAfnRefusesSuchAMethodWithAUsageError() throws {
        let run = try AFNTool.run(["get", "-X", "GET\r\nX: y", url("m").absoluteString])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.stderr.contains("not an HTTP method"), run.stderr)
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }
}
