import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Streaming multipart bodies over real connections.
final class MultipartUploadTests: OperationTestCase {
    private func temporaryFile(size: Int) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("afn-part-\(UUID().uuidString).bin")
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) }).write(to: url)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    func testMultipartBodyArrivesWithExactLength() throws {
        server.respond("/upload", body: Data("ok".utf8))
        let file = try temporaryFile(size: 200_000)
        let request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/upload").absoluteString,
                                                                       parameters: ["field": "value"]) { form in
            try form.appendPart(withFileURL: file, name: "file")
        }
        let operation = HTTPRequestOperation(request: request)
        XCTAssertNil(run(operation).error)
        let seen = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(seen.headers.first(name: "content-length"), request.value(forHTTPHeaderField: "Content-Length"))
        XCTAssertEqual(Int(seen.headers.first(name: "content-length") ?? ""), seen.body.count)
        let contents = try Data(contentsOf: file)
        XCTAssertNotNil(seen.body.range(of: contents), "the file part arrives byte for byte")
        XCTAssertNotNil(seen.body.range(of: Data("name=\"field\"".utf8)))
    }

    /// A file part that grew after it was appended fails the upload before
    /// the body is complete: it was cut at its old length and the server
    /// took the truncated file as the whole one.
    func testAFilePartThatGrewFailsAndTheServerNeverGetsACompleteBody() throws {
        server.respond("/upload", body: Data("ok".utf8))
        let file = try temporaryFile(size: 10_000)
        let request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/upload").absoluteString,
                                                                       parameters: nil) { form in
            try form.appendPart(withFileURL: file, name: "file")
        }
        try Data(repeating: 9, count: 20_000).write(to: file)
        let outcome = run(HTTPRequestOperation(request: request))
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorRequestBodyStreamExhausted)
        XCTAssertTrue(server.requests.isEmpty, "no complete request reached the server")
    }

    func testMultipartBodyIsRebuiltForA307Redirect() throws {
        server.route("/first") { _ in [.head(status: 307, headers: [("Location", "/second"), ("Content-Length", "0")]), .end] }
        server.respond("/second", body: Data("done".utf8))
        let file = try temporaryFile(size: 50_000)
        let request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/first").absoluteString,
                                                                       parameters: nil) { form in
            try form.appendPart(withFileURL: file, name: "file")
        }
        let operation = HTTPRequestOperation(request: request)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseString, "done")
        let bodies = server.requests.map(\.body)
        XCTAssertEqual(bodies.count, 2)
        guard bodies.count == 2 else { return }
        XCTAssertEqual(bodies[0], bodies[1], "the redirected request carries the whole body again")
        XCTAssertGreaterThan(bodies[1].count, 50_000)
    }

    func testAStreamThatCannotBeRebuiltFailsCleanlyOnA307() throws {
        server.route("/first") { request in
            // Read the whole body before redirecting, as a real server would.
            [.head(status: 307, headers: [("Location", "/second"), ("Content-Length", "0")]), .end]
        }
        server.respond("/second", body: Data("done".utf8))
        var request = self.request("/first", method: "POST")
        request.httpBodyStream = InputStream(data: Data(repeating: 1, count: 100_000))
        let outcome = run(HTTPRequestOperation(request: request))
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorRequestBodyStreamExhausted)
    }

    func testMultipartAgainstHTTPBin() throws {
        let httpbin = try SharedServers.httpbin()
        let file = try temporaryFile(size: 4096)
        let request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST",
                                                                       urlString: httpbin.baseURL.appendingPathComponent("post").absoluteString,
                                                                       parameters: ["greeting": "hello"]) { form in
            try form.appendPart(withFileURL: file, name: "upload", fileName: "part.bin", mimeType: "application/octet-stream")
        }
        let operation = HTTPRequestOperation(request: request)
        XCTAssertNil(run(operation).error)
        let json = try XCTUnwrap(operation.responseData.flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        XCTAssertEqual((json["form"] as? [String: String])?["greeting"], "hello")
        XCTAssertNotNil((json["files"] as? [String: Any])?["upload"])
    }
}
