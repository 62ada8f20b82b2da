@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// RFC 6265 §5.2 (and 6265bis §5.6): how one Set-Cookie field is read.
final class CookieParsingTests: CookieTestCase {
    /// §5.2 / §3: one field is one cookie; a comma is part of the value.
    func testACommaInsideAValueDoesNotSplitTheField() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["foo=\"bar, baz=qux\""], at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "foo=\"bar, baz=qux\"", "\(agent.client)")
        }
    }

    /// §5.2 step 1: the name is everything before the first "=", commas included.
    func testACommaInANameIsPartOfTheName() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["b,az=qux"], at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "b,az=qux", "\(agent.client)")
            XCTAssertEqual(agent.storage.cookies?.filter { $0.domain.contains(site) }.map(\.name), ["b,az"])
        }
    }

    /// §5.2 steps 4–5 and §5.2.5: attribute names in any case, with any
    /// value, surrounded by whitespace, are still Secure (so never stored
    /// from, or sent over, http).
    func testSecureWithAnyValueOrCaseIsSecure() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["a=1; Secure=", "b=2; Secure=1", "c=3; secure =x", "d=4; SECURE", "e=5; Securex"],
                              at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "e=5", "\(agent.client): only the cookie whose attribute is not Secure")
        }
    }

    /// §5.2.6: HttpOnly in any case and with any value sets the flag, which is kept.
    func testHttpOnlyWithAnyValueIsKept() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["a=1; HttpOnly=no", "b=2; httponly", "c=3"], at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "a=1; b=2; c=3", "\(agent.client): HttpOnly cookies are sent over HTTP")
            let stored = Dictionary(uniqueKeysWithValues: (agent.storage.cookies ?? []).filter { $0.domain.contains(site) }.map { ($0.name, $0.isHTTPOnly) })
            XCTAssertEqual(stored, ["a": true, "b": true, "c": false], "\(agent.client)")
        }
    }

    /// 6265bis §5.6.7: SameSite is parsed (any case; unknown values mean
    /// "Default") and kept with the cookie.
    func testSameSiteIsParsedAndKept() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["a=1; SameSite=strict", "b=2; samesite=Lax", "c=3; SameSite=None", "d=4; SameSite=bogus"],
                              at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "a=1; b=2; c=3; d=4", "\(agent.client)")
            var policies: [String: String] = [:]
            for cookie in (agent.storage.cookies ?? []) where cookie.domain.contains(site) {
                policies[cookie.name] = CookieLedger.shared.entry(for: cookie, in: agent.storage)?.sameSite.rawValue
            }
            XCTAssertEqual(policies, ["a": "Strict", "b": "Lax", "c": "None", "d": "Default"], "\(agent.client)")
        }
    }

    /// §5.2 step 3: whitespace around the name and value is dropped; the
    /// value keeps its quotes.
    func testWhitespaceAroundNameAndValueIsTrimmed() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["  a  =  \"q\"  ; Path=/", "\tb\t=\t2"], at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "a=\"q\"; b=2", "\(agent.client)")
        }
    }

    /// RFC 6265 §5.2 steps 2 and 5: a field without "=", or with an empty
    /// name, is ignored as a whole (6265bis's nameless cookies are not kept).
    func testAFieldWithoutEqualsOrWithAnEmptyNameIsIgnored() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["justavalue; Path=/", "=x", " =y; Path=/", "=; Path=/", "\t", "ok=1"],
                              at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "ok=1", "\(agent.client)")
        }
    }

    /// 6265bis §5.6 step 1: a control character (other than HTAB) anywhere
    /// ignores the whole field.
    func testAControlCharacterIgnoresTheField() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["bad=a\u{01}b", "also=1; Path=/\u{7F}", "good=1"], at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "good=1", "\(agent.client)")
        }
    }

    /// 6265bis §5.6 step 5: a name and value over 4096 bytes together are ignored.
    func testANameAndValueOver4096BytesAreIgnored() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let fits = String(repeating: "v", count: 4096 - 3)
            let over = String(repeating: "v", count: 4096 - 3 + 1)
            let sent = header(after: ["fit=\(fits)", "big=\(over)"], at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "fit=\(fits)", "\(agent.client)")
        }
    }

    /// `httpShouldHandleCookies = false` stores nothing and sends nothing.
    func testHTTPShouldHandleCookiesFalseStoresAndSendsNothing() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            serve("\(origin)/set", setting: ["a=1"])
            visit("\(origin)/set", with: agent, shouldHandleCookies: false)
            XCTAssertNil(visit("\(origin)/next", with: agent), "\(agent.client): nothing was stored")
            visit("\(origin)/set", with: agent)
            XCTAssertEqual(visit("\(origin)/next", with: agent), "a=1", "\(agent.client): control")
            XCTAssertNil(visit("\(origin)/next", with: agent, shouldHandleCookies: false), "\(agent.client): nothing is sent")
        }
    }
}
