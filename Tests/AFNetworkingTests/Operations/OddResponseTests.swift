import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Odd responses from curl's test corpus, played by a raw loopback server:
/// each ends as the response it is or as the specific error a reader needs —
/// never "unsupported URL" or "cancelled" for a server's fault. The same
/// replies through the real `afn` give curl's exit statuses.
final class OddResponseTests: OperationTestCase {
    /// gzip of "one".
    private static let gzipOne: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xCB, 0xCF, 0x4B, 0x05,
                                           0x00, 0xF1, 0x86, 0x6C, 0x7A, 0x03, 0x00, 0x00, 0x00]
    static let emptyLocation = Data("HTTP/1.1 302 Found\r\nLocation: \r\nContent-Length: 5\r\nConnection: close\r\n\r\nmoved".utf8)
    static let chunkedThenGzip = Data("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\nConnection: close\r\n\r\n".utf8)
    static let continueThenGarbage = Data("HTTP/1.1 100 Continue\r\n\r\nhello there".utf8)
    /// A gzip member, then a second one that is broken.
    static let damagedGzip = Data("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n".utf8)
        + Data(gzipOne) + Data([0x1F, 0x8B, 0x08, 0x00]) + Data("garbage-garbage".utf8)
    static let partial = Data("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\nshort".utf8)

    private func fetch(_ reply: Data, acceptingEveryStatus: Bool = false) throws -> (HTTPRequestOperation, Outcome) {
        let raw = try RawReplyServer(reply: reply)
        defer { raw.shutdown() }
        var request = URLRequest(url: raw.baseURL.appendingPathComponent("odd"))
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        if acceptingEveryStatus { operation.responseSerializer.acceptableStatusCodes = nil }
        return (operation, run(operation, timeout: 20))
    }

    func testARedirectWithoutALocationIsDeliveredAsItIs() throws {
        let (operation, outcome) = try fetch(Self.emptyLocation, acceptingEveryStatus: true)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.statusCode, 302)
        XCTAssertEqual(operation.responseString, "moved")
    }

    func testChunkedBeforeAnotherTransferCodingFailsClearly() throws {
        let (_, outcome) = try fetch(Self.chunkedThenGzip)
        let error = try XCTUnwrap(outcome.error, "an undelimitable body is not an empty success")
        XCTAssertEqual(error.domain, NSURLErrorDomain)
        XCTAssertEqual(error.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(error.localizedDescription.contains("chunked"), error.localizedDescription)
    }

    /// libcurl frames a body from each header line as it comes: a folded
    /// Transfer-Encoding or Content-Length, or chunked with parameters, is
    /// not chunked to it, and it would hand the framing over as the body.
    func testFramingFieldsCurlWouldReadDifferentlyAreABadServerResponse() throws {
        for framing in ["Transfer-Encoding:\r\n chunked", "Transfer-Encoding: chunked;ext=1", "Transfer-Encoding: gzip,\r\n chunked",
                        "Content-Length:\r\n 5"] {
            let reply = Data("HTTP/1.1 200 OK\r\n\(framing)\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)
            let (operation, outcome) = try fetch(reply)
            XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse, framing)
            XCTAssertNil(operation.responseData.flatMap { $0.isEmpty ? nil : $0 }, "\(framing): no framing delivered as the body")
        }
        // A folded field that frames nothing is joined and kept.
        let (operation, outcome) = try fetch(Data("HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\nok".utf8))
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "X-Folded"), "a b")
    }

    /// A 101 nobody asked for: libcurl would take it as the final answer and
    /// deliver what follows as its body (curl test 1801).
    func testAnUnaskedSwitchOfProtocolsIsABadServerResponse() throws {
        let reply = Data("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nlies!\n".utf8)
        let (operation, outcome) = try fetch(reply)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(operation.responseData?.isEmpty ?? true)
    }

    /// Equal lengths written differently agree (curl test 770).
    func testContentLengthsAgreeByValue() throws {
        let (operation, outcome) = try fetch(Data("HTTP/1.1 200 OK\r\nContent-Length: 6,06,6\r\nContent-Length: 6,    6\r\n\r\n-foo-\n".utf8))
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, "-foo-\n")
        let (_, conflicting) = try fetch(Data("HTTP/1.1 200 OK\r\nContent-Length: 6, 60\r\n\r\n-foo-\n".utf8))
        XCTAssertEqual(conflicting.error?.code, NSURLErrorBadServerResponse)
    }

    /// A coding the library does not know is delivered as received, with its
    /// Content-Encoding; more than five stacked fail as curl fails them
    /// (libcurl counts the codings it is told of, known or not).
    func testUnknownContentCodingsAreDeliveredAsReceivedUpToFive() throws {
        for codings in ["compress", "a, b, c, d, e"] {
            let (operation, outcome) = try fetch(Data("HTTP/1.1 200 OK\r\nContent-Encoding: \(codings)\r\nContent-Length: 2\r\n\r\nok".utf8))
            XCTAssertNil(outcome.error, codings)
            XCTAssertEqual(operation.responseString, "ok", codings)
            XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Encoding"), codings)
        }
        for codings in ["a, b, c, d, e, f", "gzip, gzip, gzip, gzip, gzip, gzip"] {
            let (_, outcome) = try fetch(Data("HTTP/1.1 200 OK\r\nContent-Encoding: \(codings)\r\nContent-Length: 2\r\n\r\nok".utf8))
            XCTAssertEqual(outcome.error?.code, NSURLErrorCannotDecodeContentData, codings)
        }
    }

    /// A redirect's body is not decoded (nobody reads it when it is
    /// followed): a damaged one does not fail the redirect, and one that is
    /// not followed arrives as received, with its Content-Encoding.
    func testARedirectsBodyIsNotDecoded() throws {
        server.route("/moved") { _ in
            [.head(status: 302, headers: [("Location", "/landed"), ("Content-Encoding", "gzip"), ("Content-Length", "5")]),
             .body(Data("moved".utf8)), .end]
        }
        server.respond("/landed", body: Data("fine".utf8))
        let followed = HTTPRequestOperation(request: request("/moved"))
        XCTAssertNil(run(followed).error)
        XCTAssertEqual(followed.responseString, "fine")

        let declined = HTTPRequestOperation(request: request("/moved"))
        declined.responseSerializer.acceptableStatusCodes = nil
        declined.setRedirectResponseBlock { _, _, _ in nil }
        XCTAssertNil(run(declined).error)
        XCTAssertEqual(declined.response?.statusCode, 302)
        XCTAssertEqual(declined.responseString, "moved")
    }

    /// A status line over curl's line limit fails as the server's fault.
    func testAStatusLineOverCurlsLimitIsABadServerResponse() throws {
        let (_, outcome) = try fetch(Data(("HTTP/1.1 200 " + String(repeating: "a", count: 200_000) + "\r\nContent-Length: 0\r\n\r\n").utf8))
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse, String(describing: outcome.error))
    }

    func testAnInterimResponseWithoutAFinalOneIsABadServerResponse() throws {
        let (_, outcome) = try fetch(Self.continueThenGarbage)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse, "not 'unsupported URL': \(String(describing: outcome.error))")
    }

    func testADamagedGzipBodyIsADecodingError() throws {
        let (_, outcome) = try fetch(Self.damagedGzip)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotDecodeContentData, "not 'cancelled': \(String(describing: outcome.error))")
        XCTAssertTrue(outcome.error?.localizedDescription.contains("Content-Encoding") == true)
    }

    func testATruncatedBodyAndAnEmptyReplySayWhichTheyAre() throws {
        let (_, partial) = try fetch(Self.partial)
        XCTAssertEqual(partial.error?.code, NSURLErrorNetworkConnectionLost)
        XCTAssertEqual(partial.error?.localizedDescription, "The connection closed before the whole response body arrived.")
        let (_, empty) = try fetch(Data())
        XCTAssertEqual(empty.error?.code, NSURLErrorNetworkConnectionLost)
        XCTAssertEqual(empty.error?.localizedDescription, "The server closed the connection without sending a response.")
    }

    // MARK: - afn

    private func afn(_ reply: Data, _ arguments: [String] = []) throws -> AFNTool.Run {
        let raw = try RawReplyServer(reply: reply)
        defer { raw.shutdown() }
        return try AFNTool.run(["get"] + arguments + [raw.baseURL.appendingPathComponent("odd").absoluteString])
    }

    func testAFNExitsWithCurlsStatusesForOddReplies() throws {
        XCTAssertEqual(try afn(Self.partial).status, 18, "partial file")
        XCTAssertEqual(try afn(Data()).status, 52, "empty reply")
        XCTAssertEqual(try afn(Self.damagedGzip).status, 61, "bad content encoding")
        XCTAssertEqual(try afn(CurlTransferCodingVectors.test2119).status, 61, "an unknown transfer coding, as curl's test 2119")
        let gzipChunked = try afn(CurlTransferCodingVectors.test1124)
        XCTAssertEqual(gzipChunked.status, 0, gzipChunked.stderr)
        XCTAssertEqual(gzipChunked.output, CurlTransferCodingVectors.linesText, "curl test 1124, decoded")
        let redirect = try afn(Self.emptyLocation, ["-i"])
        XCTAssertEqual(redirect.status, 0, redirect.stderr)
        XCTAssertTrue(redirect.output.hasPrefix("HTTP/1.1 302"), redirect.output)
    }

    func testAFNMaxRedirs() throws {
        server.route("/hop1") { _ in [.head(status: 302, headers: [("Location", "/hop2"), ("Content-Length", "3")]), .body(Data("one".utf8)), .end] }
        server.route("/hop2") { _ in [.head(status: 302, headers: [("Location", "/done"), ("Content-Length", "3")]), .body(Data("two".utf8)), .end] }
        server.respond("/done", body: Data("done".utf8))
        let start = url("hop1").absoluteString

        let none = try AFNTool.run(["get", "-i", "--max-redirs", "0", start])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertTrue(none.output.hasPrefix("HTTP/1.1 302"), "0 follows nothing: \(none.output)")
        XCTAssertTrue(none.output.hasSuffix("one"), none.output)

        let tooFew = try AFNTool.run(["get", "--max-redirs", "1", start])
        XCTAssertEqual(tooFew.status, 47, tooFew.stderr)
        XCTAssertTrue(tooFew.stderr.contains("maximum (1) redirects"), tooFew.stderr)

        let enough = try AFNTool.run(["get", "--max-redirs", "2", start])
        XCTAssertEqual(enough.status, 0, enough.stderr)
        XCTAssertEqual(enough.output, "done")

        XCTAssertEqual(try AFNTool.run(["get", "--max-redirs", "-1", start]).status, 64)

        // afn download honours it too.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("afn-redirs-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: file) }
        let cut = try AFNTool.run(["download", "--max-redirs", "1", "-o", file.path, start])
        XCTAssertEqual(cut.status, 47, cut.stderr)
        let whole = try AFNTool.run(["download", "--max-redirs", "2", "-o", file.path, start])
        XCTAssertEqual(whole.status, 0, whole.stderr)
        XCTAssertEqual(try String(contentsOf: file, encoding: .utf8), "done")
    }
}
