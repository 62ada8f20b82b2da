@_spi(AFNetworkingInternal) import AFNetworkingTransport
import XCTest

/// The head's fields as `HTTPURLResponse` takes them: one entry per name
/// (compared without ASCII case), repeated fields joined with ", " under the
/// first spelling — the same by the scan (small heads) and the hashing path.
final class ResponseHeadFieldsTests: XCTestCase {
    func testRepeatedNamesJoinUnderTheFirstSpelling() {
        let fields = [("Content-Type", "text/plain"), ("Vary", "Accept"), ("set-cookie", "a=1"), ("VARY", "Origin"), ("Set-Cookie", "b=2")]
        XCTAssertEqual(ResponseHead.headerFields(fields.map { (name: $0.0, value: $0.1) }),
                       ["Content-Type": "text/plain", "Vary": "Accept, Origin", "set-cookie": "a=1, b=2"])
    }

    func testTheScanAndTheHashingPathAgree() {
        // Past the scan's limit, with repeats in mixed case among many distinct names.
        var fields: [(name: String, value: String)] = []
        for index in 0..<(ResponseHead.smallHeadFieldCount + 8) { fields.append(("X-Field-\(index)", "\(index)")) }
        fields += [("x-field-3", "again"), ("X-FIELD-39", "more")]
        let large = ResponseHead.headerFields(fields)
        XCTAssertEqual(large["X-Field-3"], "3, again")
        XCTAssertEqual(large["X-Field-39"], "39, more")
        XCTAssertEqual(large.count, ResponseHead.smallHeadFieldCount + 8)
        let small = Array(fields.prefix(4)) + [("x-field-3", "again")]
        XCTAssertEqual(ResponseHead.headerFields(small)["X-Field-3"], "3, again")
    }

    func testNamesMatchOnlyAcrossTheCaseOfASCIILetters() {
        XCTAssertTrue(ResponseHead.sameFieldName("Content-Length", "content-LENGTH"))
        XCTAssertFalse(ResponseHead.sameFieldName("Content-Length", "Content-Lengths"))
        // '@' and '`' differ by the case bit but are not letters; nor are '[' and '{'.
        XCTAssertFalse(ResponseHead.sameFieldName("A@", "A`"))
        XCTAssertFalse(ResponseHead.sameFieldName("x[", "x{"))
        XCTAssertFalse(ResponseHead.sameFieldName("Etag", "Etaf"))
        XCTAssertTrue(ResponseHead.sameFieldName("", ""))
    }

    /// A head read line by line, as curl hands it over.
    private func read(_ lines: [String]) throws -> ReceivedResponse {
        var head = ResponseHead()
        for line in lines + [""] {
            var bytes = Array((line + "\r\n").utf8)
            let result = bytes.withUnsafeMutableBufferPointer { head.consume(line: UnsafeBufferPointer($0)) }
            if line.isEmpty { XCTAssertEqual(result, .complete) } else { XCTAssertEqual(result, .pending) }
        }
        return head.response(for: try XCTUnwrap(URL(string: "http://127.0.0.1/")))
    }

    /// Each interim head starts the size count afresh; their number is bounded
    /// on its own, so a server cannot send 1xx heads forever.
    func testInterimHeadsAreBoundedInNumber() {
        var head = ResponseHead()
        func feed(_ line: String) -> ResponseHead.LineResult {
            var bytes = Array((line + "\r\n").utf8)
            return bytes.withUnsafeMutableBufferPointer { head.consume(line: UnsafeBufferPointer($0)) }
        }
        for _ in 0..<ResponseHead.maximumInterimHeads {
            XCTAssertEqual(feed("HTTP/1.1 103 Early Hints"), .pending)
            XCTAssertEqual(feed(""), .pending)
        }
        XCTAssertEqual(feed("HTTP/1.1 100 Continue"), .pending)
        guard case .invalid(let reason) = feed("") else { return XCTFail("the 101st interim head is refused") }
        XCTAssertTrue(reason.contains("interim"), reason)
    }

    func testTheVersionIsTheStatusLinesFirstWord() throws {
        XCTAssertEqual(try read(["HTTP/1.1 200 OK", "Content-Length: 0"]).httpVersion, "HTTP/1.1")
        XCTAssertEqual(try read(["HTTP/2 204"]).httpVersion, "HTTP/2")
        XCTAssertEqual(try read(["HTTP/1.0 404 Not Found"]).httpVersion, "HTTP/1.0")
        XCTAssertEqual(try read(["HTTP/3 200"]).httpVersion, "HTTP/3")
    }

    func testAHeadKeptPastItsBufferReadsTheSame() throws {
        // Small (the buffer's spare room is dropped) and past the 512 bytes
        // reserved (the buffer grew): the kept head reads as what was sent.
        let small = try read(["HTTP/1.1 200 OK", "Server: t", "Vary: A", "vary: B"])
        XCTAssertEqual(small.statusLine, "HTTP/1.1 200 OK")
        XCTAssertEqual(small.fields.map(\.name), ["Server", "Vary", "vary"])
        XCTAssertEqual(small.values(forField: "VARY"), ["A", "B"])
        let names = (0..<40).map { "X-Field-\($0)" }
        let large = try read(["HTTP/1.1 200 OK"] + names.map { "\($0): \(String(repeating: "v", count: 20))" })
        XCTAssertEqual(large.fields.map(\.name), names)
        XCTAssertEqual(large.value(forField: "x-field-39"), String(repeating: "v", count: 20))
    }

    func testListMembersSplitAtCommasOutsideQuotesAcrossRepeatedFields() throws {
        let response = try read(["HTTP/1.1 200 OK", #"Cache-Control: max-age=60, no-cache="a, b" ,, x="q\",t""#,
                                 "Server: s", "CACHE-CONTROL:\tNo-Store\t", "cache-control: ,"])
        var members: [String] = []
        response.forEachListMember(ofField: "cache-control") { members.append(String(decoding: $0.bytes, as: UTF8.self)) }
        XCTAssertEqual(members, ["max-age=60", #"no-cache="a, b""#, #"x="q\",t""#, "No-Store"])
        var seen: [String] = []
        response.forEachListMember(ofField: "cache-control") { member in
            if member.equals("no-store") { seen.append("no-store") }
            if member.named("no-cache") { seen.append("no-cache") }
            if member.named("max-age"), member.hasArgument { seen.append("max-age") }
            if member.named("max") || member.equals("no-stor") { seen.append("wrong") }
        }
        XCTAssertEqual(seen, ["max-age", "no-cache", "no-store"])
        var none = 0
        response.forEachListMember(ofField: "vary") { _ in none += 1 }
        XCTAssertEqual(none, 0)
    }

    func testContentLengthListsMustAgreeItemByItem() throws {
        func result(_ value: String) -> ResponseHead.LineResult {
            var head = ResponseHead()
            var last = ResponseHead.LineResult.pending
            for line in ["HTTP/1.1 200 OK", "Content-Length: \(value)", ""] {
                var bytes = Array((line + "\r\n").utf8)
                last = bytes.withUnsafeMutableBufferPointer { head.consume(line: UnsafeBufferPointer($0)) }
            }
            return last
        }
        XCTAssertEqual(result("42"), .complete)
        XCTAssertEqual(result("42 ,\t42"), .complete)
        for bad in ["42,", ",42", "42, 43", "", " , ", "4 2", "+42", "42,,42"] {
            guard case .invalid = result(bad) else { return XCTFail("Content-Length: \(bad) was accepted") }
        }
    }

    func testTheExpectedLengthIsContentLengthAsAnInteger() throws {
        XCTAssertEqual(try read(["HTTP/1.1 200 OK", "Content-Length: 1024"]).expectedContentLength, 1024)
        XCTAssertEqual(try read(["HTTP/1.1 200 OK", "Content-Length: 0"]).expectedContentLength, 0)
        XCTAssertEqual(try read(["HTTP/1.1 200 OK", "Content-Length: 9223372036854775807"]).expectedContentLength, Int64.max)
        XCTAssertEqual(try read(["HTTP/1.1 200 OK", "Content-Length: 9223372036854775808"]).expectedContentLength, -1)
        XCTAssertEqual(try read(["HTTP/1.1 200 OK", "Content-Length: 7, 7"]).expectedContentLength, -1)
        XCTAssertEqual(try read(["HTTP/1.1 200 OK"]).expectedContentLength, -1)
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1/"))
        XCTAssertEqual(ReceivedResponse(url: url, statusCode: 200, statusLine: "HTTP/1.1 200 OK", fields: [("Content-Length", "+12")]).expectedContentLength, 12,
                       "a head built by hand reads as Int64 does")
    }
}
