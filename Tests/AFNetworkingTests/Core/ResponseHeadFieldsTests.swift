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
}
