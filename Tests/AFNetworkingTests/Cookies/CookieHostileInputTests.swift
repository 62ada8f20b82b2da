@testable import AFNetworking
import Foundation
import XCTest

/// Set-Cookie values and dates are hostile input: the parser and the
/// cookie-date algorithm answer every string (a cookie, a date, or nil)
/// without trapping, and what they accept keeps the limits.
final class CookieHostileInputTests: XCTestCase {
    func testArbitraryFieldsNeitherTrapNorBreakTheLimits() {
        // A fixed linear congruential sequence: the same strings every run.
        var seed: UInt64 = 0x5EED_C00C
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        let alphabet = Array("=;,\" \t-:./_aZ09Max-AgeExpiresDomainPathSecureHttpOnlySameSite__Host-\u{1}\u{7F}é".unicodeScalars)
        for _ in 0..<3000 {
            let length = Int(next() % 160)
            var field = String.UnicodeScalarView()
            for _ in 0..<length { field.append(alphabet[Int(next() % UInt64(alphabet.count))]) }
            let text = String(field)
            _ = CookieDate.parse(text)
            guard let cookie = SetCookieParser.parse(text) else { continue }
            XCTAssertLessThanOrEqual(cookie.name.utf8.count + cookie.value.utf8.count, SetCookieParser.maximumNameValueBytes)
            XCTAssertFalse(cookie.name.isEmpty && cookie.value.isEmpty)
            XCTAssertFalse(text.unicodeScalars.contains { $0 == "\u{1}" || $0 == "\u{7F}" }, "control characters ignore the field")
            if let path = cookie.path { XCTAssertEqual(path.first, "/") }
            if let domain = cookie.domain { XCTAssertFalse(domain.isEmpty, "an empty Domain is ignored") }
        }
        // Octets, not Swift Characters: a combining mark after "=" or ";"
        // forms one Character with it, but the "=" still separates.
        let combining = SetCookieParser.parse("a=\u{301}b;\u{301}x; Path=/p")
        XCTAssertEqual(combining?.name, "a")
        XCTAssertEqual(combining?.value, "\u{301}b")
        XCTAssertEqual(combining?.path, "/p")
        XCTAssertEqual(SetCookieParser.parse("a=b; Max-Age=99999999999999999999999999")?.maxAge, .max, "saturates, no overflow")
        XCTAssertEqual(SetCookieParser.parse("a=b; Max-Age=-99999999999999999999999999")?.maxAge, -.max)
    }
}
