@testable import AFNetworking
import Foundation
import XCTest

/// The hand-written RFC 9110 date parser against known instants and bad input.
final class HTTPDateTests: XCTestCase {
    /// 1994-11-06 08:49:37 UTC, the example of RFC 9110 §5.6.7.
    let example: TimeInterval = 784_111_777

    func testTheThreeFormsOfTheSameInstant() {
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT"), example)
        XCTAssertEqual(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT"), example)
        XCTAssertEqual(HTTPDate.parse("Sun Nov  6 08:49:37 1994"), example)
    }

    func testAgreesWithFoundationAcrossTheCalendar() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            // 1970 … 2100, leap days and month ends included by chance.
            let instant = TimeInterval(UInt64.random(in: 0...4_102_444_800, using: &generator))
            let text = formatter.string(from: Date(timeIntervalSince1970: instant))
            XCTAssertEqual(HTTPDate.parse(text), instant, text)
        }
        XCTAssertEqual(HTTPDate.parse("Thu, 29 Feb 2024 23:59:59 GMT"), 1_709_251_199)
        XCTAssertEqual(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT"), 0)
    }

    func testTwoDigitYearsOfTheObsoleteFormFollowTheRFC() {
        XCTAssertEqual(HTTPDate.parse("Monday, 01-Jan-24 00:00:00 GMT"), 1_704_067_200)
        XCTAssertEqual(HTTPDate.parse("Friday, 01-Jan-99 00:00:00 GMT"), 915_148_800)
    }

    /// Browsers read a month name and `GMT` in any case (issue 19's cache runs: `AUG`, `gMT`).
    func testAMonthNameInAnyCaseIsTheMonth() {
        for text in ["Sun, 06 nov 1994 08:49:37 GMT", "Sun, 06 NOV 1994 08:49:37 GMT", "Sunday, 06-nOv-94 08:49:37 GMT",
                     "Sun, 06 Nov 1994 08:49:37 gMT", "Sunday, 06-Nov-94 08:49:37 gmt"] {
            XCTAssertEqual(HTTPDate.parse(text), 784_111_777, text)
        }
    }

    func testMalformedDatesAreNil() {
        for text in ["", "yesterday", "Sun, 06 Nov 1994 08:49:37", "Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 6 Nov 1994 08:49:37 GMT",
                     "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
                     "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT trailing", "Sun Nov  6 08:49:37 94",
                     "0", "Sun,", "Sun, 06 Nov 19\u{0}4 08:49:37 GMT", "Sun, 06 Nov 1994 08:4:37 GMT"] {
            XCTAssertNil(HTTPDate.parse(text), text.debugDescription)
        }
    }
}
