@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
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

    /// A response with thousands of Set-Cookie fields ends as the fields say
    /// (the last one for a cookie wins; a domain keeps its newest 180), while
    /// only the fields that change that end state touch the storage.
    func testAFloodOfSetCookieFieldsEndsAsTheLastFieldsSay() throws {
        let storage = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "flood-\(UUID().uuidString)")
        storage.cookieAcceptPolicy = .always
        let url = try XCTUnwrap(URL(string: "http://flood.example/"))
        CookieJar.store(["gone=1"], for: url, in: storage)
        var fields = (0..<500).map { "n\($0)=v" }
        fields += (0..<3000).map { "same=\($0)" }
        fields += ["gone=; Max-Age=0", "never=; Max-Age=0"]
        CookieJar.store(fields, for: url, in: storage)
        let cookies = storage.cookies ?? []
        defer { for cookie in cookies { storage.deleteCookie(cookie) } }
        XCTAssertEqual(cookies.first { $0.name == "same" }?.value, "2999")
        XCTAssertNil(cookies.first { $0.name == "gone" }, "deleted")
        XCTAssertNil(cookies.first { $0.name == "never" })
        XCTAssertEqual(cookies.count, CookieJar.maximumCookiesPerDomain)
        XCTAssertTrue(cookies.contains { $0.name == "n499" }, "the newest are kept")
        XCTAssertTrue(cookies.contains { $0.name == "n321" })
        XCTAssertFalse(cookies.contains { $0.name == "n320" }, "the oldest are evicted")
    }
}
