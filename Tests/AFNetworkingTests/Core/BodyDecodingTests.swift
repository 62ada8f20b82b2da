@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import CAFCompression
import Foundation
import XCTest

/// Which codings the library undoes for a response head, without I/O: the
/// transfer codings but chunked always, the content codings when all are
/// known, content first in the order applied (curl's tests 1122–1125, 1277,
/// 1482, 1483 and 2119 over the network: `TransferCodingTests`).
final class BodyDecodingTests: XCTestCase {
    private func plan(_ fields: [(name: String, value: String)], status: Int = 200, method: String = "GET") -> BodyDecoding.Plan {
        let response = ReceivedResponse(url: URL(string: "http://127.0.0.1/x")!, statusCode: status,
                                        statusLine: "HTTP/1.1 \(status) X", fields: fields)
        return BodyDecoding.plan(for: response, method: method)
    }

    private func problem(_ values: String...) -> String? {
        TransferCodingChain.problem(in: values.map { ArraySlice(Array($0.utf8)) })
    }

    func testTransferCodingsAreUndoneAlways() {
        XCTAssertEqual(plan([("Transfer-Encoding", "gzip")]), .decode([CAFDEC_GZIP]))
        XCTAssertEqual(plan([("Transfer-Encoding", "deflate, chunked")]), .decode([CAFDEC_DEFLATE]))
        XCTAssertEqual(plan([("Transfer-Encoding", "GZIP ; x=1, Chunked")]), .decode([CAFDEC_GZIP]))
        XCTAssertEqual(plan([("Transfer-Encoding", "chunked")]), .asReceived, "libcurl takes chunked apart")
        XCTAssertEqual(plan([("Transfer-Encoding", "identity, chunked")]), .asReceived)
        XCTAssertEqual(plan([]), .asReceived)
    }

    func testContentCodingsComeBeforeTransferCodingsInTheOrderApplied() {
        XCTAssertEqual(plan([("Transfer-Encoding", "gzip, chunked"), ("Content-Encoding", "deflate")]),
                       .decode([CAFDEC_DEFLATE, CAFDEC_GZIP]), "curl test 1277")
        XCTAssertEqual(plan([("Content-Encoding", "br"), ("Transfer-Encoding", "gzip"), ("Transfer-Encoding", "deflate, chunked")]),
                       .decode([CAFDEC_BROTLI, CAFDEC_GZIP, CAFDEC_DEFLATE]))
    }

    func testAnUnknownContentCodingStaysButTheTransferCodingIsStillUndone() {
        XCTAssertEqual(plan([("Content-Encoding", "compress")]), .asReceived)
        XCTAssertEqual(plan([("Content-Encoding", "compress"), ("Transfer-Encoding", "gzip, chunked")]), .decode([CAFDEC_GZIP]))
    }

    func testAnUnknownTransferCodingIsRefused() {
        guard case .refuse(let reason) = plan([("Transfer-Encoding", "identityx")]) else {
            return XCTFail("curl test 2119: identityx is no coding")
        }
        XCTAssertTrue(reason.contains("identityx"), reason)
        guard case .refuse = plan([("Transfer-Encoding", Array(repeating: "gzip", count: 6).joined(separator: ", "))]) else {
            return XCTFail("more stacked codings than a decoder is made for")
        }
    }

    func testABodylessAnswerHasNothingToUndoOrRefuse() {
        XCTAssertEqual(plan([("Transfer-Encoding", "identityx")], method: "HEAD"), .asReceived)
        XCTAssertEqual(plan([("Transfer-Encoding", "gzip, chunked")], status: 304), .asReceived)
        XCTAssertEqual(plan([("Content-Encoding", "gzip")], status: 204), .asReceived)
    }

    func testChunkedNamedAgainIsChunkedOnceButNothingMayFollowIt() {
        XCTAssertNil(problem("chunked, chunked"), "curl test 1482")
        XCTAssertNil(problem("chunked", "chunked"), "curl test 1483")
        XCTAssertNil(problem("gzip, chunked, chunked"))
        XCTAssertNil(problem("gzip"), "delimited by the connection's close")
        XCTAssertNotNil(problem("chunked, gzip"))
        XCTAssertNotNil(problem("chunked", "gzip"))
        XCTAssertNotNil(problem("chunked, identity"))
    }

    /// The length of the body as delivered: a decoded body's is unknown,
    /// whatever Content-Length says of the coded bytes.
    func testExpectedContentLengthIsUnknownForADecodedBody() {
        func length(_ fields: [(name: String, value: String)]) -> Int64 {
            ReceivedResponse(url: URL(string: "http://127.0.0.1/x")!, statusCode: 200, statusLine: "HTTP/1.1 200 OK", fields: fields)
                .expectedContentLength
        }
        XCTAssertEqual(length([("Content-Length", "50170")]), 50_170)
        XCTAssertEqual(length([("Content-Length", "50170"), ("Content-Encoding", "gzip")]), -1)
        XCTAssertEqual(length([("Content-Length", "44"), ("Transfer-Encoding", "gzip")]), -1, "curl test 1122")
        XCTAssertEqual(length([("Content-Length", "5"), ("Content-Encoding", "compress")]), 5, "delivered as received")
        XCTAssertEqual(length([("Content-Length", "5"), ("Content-Encoding", "identity")]), 5)
    }
}
