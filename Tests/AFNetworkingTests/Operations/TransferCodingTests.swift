import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Transfer codings (RFC 9112 §7) in curl's own test vectors, played byte
/// for byte by a raw loopback server. A transfer coding is hop-by-hop: the
/// recipient must undo it (RFC 9112 §6.1), so the caller always gets the
/// representation. curl undoes gzip and deflate only when asked
/// (`--tr-encoding`); this library always does, and so answers as curl does
/// with it. A coding it cannot undo fails as curl fails (test 2119).
final class TransferCodingTests: OperationTestCase {
    private typealias Vectors = CurlTransferCodingVectors

    private func fetch(_ reply: Data, connection: [String] = []) throws -> (HTTPRequestOperation, Outcome) {
        let raw = try RawReplyServer(reply: reply)
        defer { raw.shutdown() }
        var request = URLRequest(url: raw.baseURL.appendingPathComponent("te"))
        request.timeoutInterval = 10
        for value in connection { request.addValue(value, forHTTPHeaderField: "Connection") }
        let operation = HTTPRequestOperation(request: request)
        return (operation, run(operation, timeout: 20))
    }

    private func assertLines(_ reply: Data, connection: [String] = [], file: StaticString = #filePath, line: UInt = #line) throws {
        let (operation, outcome) = try fetch(reply, connection: connection)
        XCTAssertNil(outcome.error, file: file, line: line)
        XCTAssertEqual(operation.response?.statusCode, 200, file: file, line: line)
        XCTAssertEqual(operation.responseString, Vectors.linesText, "decoded, not the gzip bytes", file: file, line: line)
    }

    /// The decoded body of tests 1123 and 1277: curl's data-xml1 (zlib has
    /// checked its checksum, so its length and ends say the rest).
    private func assertXMLListing(_ reply: Data, file: StaticString = #filePath, line: UInt = #line) throws -> Data? {
        let (operation, outcome) = try fetch(reply)
        XCTAssertNil(outcome.error, file: file, line: line)
        let body = operation.responseData ?? Data()
        XCTAssertEqual(body.count, Vectors.xmlListingCount, file: file, line: line)
        let text = String(decoding: body, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix(Vectors.xmlListingPrefix), String(text.prefix(80)), file: file, line: line)
        XCTAssertTrue(text.hasSuffix(Vectors.xmlListingSuffix), String(text.suffix(80)), file: file, line: line)
        return operation.responseData
    }

    // curl test 1122: `Transfer-Encoding: gzip` alone, with a Content-Length
    // that counts the gzip bytes (ignored: the body ends when the server closes).
    func testGzipTransferCodingAloneIsDecoded() throws {
        try assertLines(Vectors.test1122)
    }

    // curl test 1123: `Transfer-Encoding: deflate, chunked` (a zlib stream).
    func testDeflateThenChunkedIsDecoded() throws {
        _ = try assertXMLListing(Vectors.test1123)
    }

    // curl test 1124: `Transfer-Encoding: gzip, chunked`.
    func testGzipThenChunkedIsDecoded() throws {
        try assertLines(Vectors.test1124)
    }

    // curl test 1125: the same with the caller's own `Connection: close`.
    func testGzipThenChunkedIsDecodedWithACustomConnectionField() throws {
        try assertLines(Vectors.test1125, connection: ["close"])
    }

    // curl test 1617: the same with two `Connection` values of the caller's.
    func testGzipThenChunkedIsDecodedWithTwoConnectionValues() throws {
        try assertLines(Vectors.test1617, connection: ["this", "that"])
    }

    // curl test 1277: `Transfer-Encoding: gzip, chunked` over
    // `Content-Encoding: deflate`: the transfer coding is undone first, then
    // the content coding; the same listing as test 1123's.
    func testATransferCodingOverAContentCodingAreBothUndone() throws {
        let both = try assertXMLListing(Vectors.test1277)
        let deflateOnly = try assertXMLListing(Vectors.test1123)
        XCTAssertNotNil(both)
        XCTAssertEqual(both, deflateOnly, "two encodings of one listing")
    }

    // curl test 1482: `Transfer-Encoding: chunked, chunked` names chunked
    // twice for a body chunked once; its trailer fields follow the body.
    func testChunkedNamedTwiceInOneFieldIsChunkedOnce() throws {
        try assertChunky(Vectors.test1482)
    }

    // curl test 1483: two `Transfer-Encoding: chunked` fields, then trailers.
    func testTwoChunkedFieldsAreChunkedOnce() throws {
        try assertChunky(Vectors.test1483)
    }

    private func assertChunky(_ reply: Data, file: StaticString = #filePath, line: UInt = #line) throws {
        let (operation, outcome) = try fetch(reply)
        XCTAssertNil(outcome.error, "the trailer lines are trailers, not a new status line", file: file, line: line)
        XCTAssertEqual(operation.response?.statusCode, 200, file: file, line: line)
        XCTAssertEqual(operation.responseString, Vectors.chunkyText, file: file, line: line)
        XCTAssertEqual(operation.responseTrailerFields, ["chunky-trailer": "header data", "another-header": "yes"],
                       file: file, line: line)
    }

    // curl test 2119: `Transfer-Encoding: identityx` is no coding anyone
    // knows. The body cannot be decoded, so the request fails as curl's does
    // (CURLE_BAD_CONTENT_ENCODING, 61): NSURLErrorCannotDecodeContentData,
    // which afn turns into the same exit status 61.
    func testAnUnknownTransferCodingFails() throws {
        let (_, outcome) = try fetch(Vectors.test2119)
        let error = try XCTUnwrap(outcome.error, "a body still in an unknown coding is no answer")
        XCTAssertEqual(error.domain, NSURLErrorDomain)
        XCTAssertEqual(error.code, NSURLErrorCannotDecodeContentData)
        XCTAssertTrue(error.localizedDescription.contains("identityx"), error.localizedDescription)
    }
}
