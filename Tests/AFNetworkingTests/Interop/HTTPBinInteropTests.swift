import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Against httpbin (python3-httpbin under gunicorn) on loopback.
final class HTTPBinInteropTests: OperationTestCase {
    private func base() throws -> URL { try SharedServers.httpbin().baseURL }

    private func json(_ operation: HTTPRequestOperation) -> [String: Any]? {
        operation.responseData.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    func testHeadersAreSentAsGiven() throws {
        var request = URLRequest(url: try base().appendingPathComponent("headers"))
        request.setValue("AFNetworking-Linux-Test", forHTTPHeaderField: "User-Agent")
        request.setValue("42", forHTTPHeaderField: "X-Answer")
        let operation = HTTPRequestOperation(request: request)
        XCTAssertNil(run(operation).error)
        let headers = json(operation)?["headers"] as? [String: String]
        XCTAssertEqual(headers?["User-Agent"], "AFNetworking-Linux-Test")
        XCTAssertEqual(headers?["X-Answer"], "42")
    }

    func testPostBodyRoundTrips() throws {
        var request = URLRequest(url: try base().appendingPathComponent("post"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data("{\"hello\":\"world\"}".utf8)
        let operation = HTTPRequestOperation(request: request)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual((json(operation)?["json"] as? [String: String])?["hello"], "world")
    }

    func testStreamedUploadWithDeclaredLength() throws {
        // WSGI servers do not accept chunked request bodies; chunked uploads are
        // covered against the in-process server.
        var request = URLRequest(url: try base().appendingPathComponent("post"))
        request.httpMethod = "POST"
        request.setValue("5000", forHTTPHeaderField: "Content-Length")
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let operation = HTTPRequestOperation(request: request)
        operation.inputStream = InputStream(data: Data(repeating: UInt8(ascii: "z"), count: 5000))
        XCTAssertNil(run(operation).error)
        XCTAssertEqual((json(operation)?["data"] as? String)?.count, 5000)
    }

    func testRedirectChainIsFollowed() throws {
        let operation = HTTPRequestOperation(request: URLRequest(url: try base().appendingPathComponent("redirect/3")))
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(operation.response?.url?.path, "/get")
    }

    func testGzipAndDeflateAndBrotliAreDecoded() throws {
        for path in ["gzip", "deflate", "brotli"] {
            let operation = HTTPRequestOperation(request: URLRequest(url: try base().appendingPathComponent(path)))
            XCTAssertNil(run(operation).error, path)
            XCTAssertNotNil(json(operation), "\(path) body was not decoded")
        }
    }

    func testStatusCodesAndDelete() throws {
        var request = URLRequest(url: try base().appendingPathComponent("status/418"))
        request.httpMethod = "DELETE"
        let operation = HTTPRequestOperation(request: request)
        let outcome = run(operation)
        XCTAssertEqual(operation.response?.statusCode, 418)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
    }

    func testSlowResponseWithinTimeoutAndDelayBeyondIt() throws {
        // Within: a 1 s delay under a 5 s idle limit succeeds.
        var patient = URLRequest(url: try base().appendingPathComponent("delay/1"))
        patient.timeoutInterval = 5
        let within = HTTPRequestOperation(request: patient)
        XCTAssertNil(run(within).error)
        XCTAssertEqual(within.response?.statusCode, 200)
        XCTAssertNotNil(json(within), "the delayed body arrived whole")
        // Beyond: the same delay under a 0.4 s idle limit times out.
        var slow = URLRequest(url: try base().appendingPathComponent("delay/1"))
        slow.timeoutInterval = 0.4
        let outcome = run(HTTPRequestOperation(request: slow))
        XCTAssertEqual(outcome.error?.code, NSURLErrorTimedOut)
    }
}
