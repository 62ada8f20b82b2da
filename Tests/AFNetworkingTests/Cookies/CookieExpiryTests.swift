@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// RFC 6265 §5.2.1–§5.2.2, §5.3 step 3 and §5.1.1: Max-Age, Expires, deletion
/// and the cookie-date algorithm.
final class CookieExpiryTests: CookieTestCase {
    /// The cookie is set, then a second field answers at `/change`; returns
    /// the Cookie header sent afterwards.
    private func afterChange(_ change: [String], with agent: Agent, first: [String] = ["id=1"]) -> String? {
        let origin = "http://www.\(site).com"
        XCTAssertNotNil(header(after: first, at: "\(origin)/set", next: "\(origin)/next", with: agent), "\(agent.client): control")
        serve("\(origin)/change", setting: change)
        visit("\(origin)/change", with: agent)
        return visit("\(origin)/after", with: agent)
    }

    /// §5.2.2 and §5.3 step 3: Max-Age=0 (the usual log-out) deletes the stored cookie.
    func testMaxAgeZeroDeletes() {
        forEachClient { agent in
            XCTAssertNil(afterChange(["id=; Max-Age=0"], with: agent), "\(agent.client)")
            XCTAssertEqual(agent.storage.cookies?.filter { $0.domain.contains(site) }.count, 0)
        }
    }

    /// §5.2.2: a negative Max-Age deletes too.
    func testNegativeMaxAgeDeletes() {
        forEachClient { agent in
            XCTAssertNil(afterChange(["id=2; Max-Age=-1"], with: agent), "\(agent.client)")
        }
    }

    /// §5.3 step 3: Max-Age wins over Expires, whichever comes first: a
    /// future Max-Age keeps a cookie whose Expires is past, and Max-Age=0
    /// deletes despite a future Expires.
    func testMaxAgeWinsOverExpires() {
        forEachClient { agent in
            let kept = afterChange(["id=2; Expires=Wed, 09 Jun 2021 10:18:14 GMT; Max-Age=3600"], with: agent)
            XCTAssertEqual(kept, "id=2", "\(agent.client)")
            let expiry = agent.storage.cookies?.first { $0.domain.contains(site) }?.expiresDate
            XCTAssertEqual(expiry?.timeIntervalSinceNow ?? 0, 3600, accuracy: 300, "\(agent.client): expires in Max-Age seconds")
            XCTAssertNil(afterChange(["id=3; Max-Age=0; Expires=Fri, 01 Jan 2100 00:00:00 GMT"], with: agent), "\(agent.client)")
        }
    }

    /// §5.2.2: a Max-Age that is not "-"? digits is ignored (the cookie is
    /// then a session cookie, not deleted).
    func testAnInvalidMaxAgeIsIgnored() {
        forEachClient { agent in
            XCTAssertEqual(afterChange(["id=2; Max-Age=0x10", "x=1; Max-Age=1.5"], with: agent), "id=2; x=1", "\(agent.client)")
            XCTAssertEqual(agent.storage.cookies?.filter { $0.domain.contains(site) }.allSatisfy { $0.expiresDate == nil }, true)
        }
    }

    /// §5.3 step 11–12: an Expires in the past deletes the stored cookie of
    /// that name, domain and path.
    func testAPastExpiresDeletes() {
        forEachClient { agent in
            XCTAssertNil(afterChange(["id=; Expires=Thu, 01 Jan 1970 00:00:00 GMT"], with: agent), "\(agent.client)")
        }
    }

    /// A deletion removes only the cookie with the same name, domain and path.
    func testADeletionKeepsOtherPaths() {
        forEachClient { agent in
            let sent = afterChange(["id=; Path=/other; Max-Age=0"], with: agent, first: ["id=1; Path=/"])
            XCTAssertEqual(sent, "id=1", "\(agent.client)")
        }
    }

    /// §5.1.1: dates in the formats servers really send, with two-digit
    /// years (70–99 → 19xx, 00–69 → 20xx), parse; each past one deletes.
    func testOddDateFormatsAreParsed() {
        let past = [
            "Wed, 09-Jun-21 10:18:14 GMT",        // RFC 850 with a two-digit year: 2021
            "Sunday, 06-Nov-94 08:49:37 GMT",     // two-digit year 94: 1994
            "Sun Nov  6 08:49:37 1994",           // asctime
            "Wed, 09 Jun 2021 10:18:14",          // no zone
            "09 Jun 2021 10:18:14 GMT",           // no weekday
            "Jun 9 10:18:14 2021",                // the time before the year
            "2021 Jun 09 10:18:14",               // the year first
            "Wed, 09-JUN-2021 10:18:14 GMT",      // an upper-case month
            "Wed 09 June 2021 1:2:3",             // a long month name, one-digit time fields
        ]
        forEachClient { agent in
            for date in past {
                XCTAssertNil(afterChange(["id=0; Expires=\(date)"], with: agent), "\(agent.client): \(date) is in the past")
            }
        }
    }

    /// §5.1.1 step 3–5: two-digit years 00–69 are 20xx (so "30" is in the
    /// future), and an invalid date is ignored rather than deleting.
    func testTwoDigitYearsAndInvalidDates() {
        forEachClient { agent in
            XCTAssertEqual(afterChange(["id=2; Expires=Wed, 09-Jun-69 10:18:14 GMT"], with: agent), "id=2", "\(agent.client): 2069")
            XCTAssertNil(afterChange(["id=3; Expires=Wed, 09-Jun-70 10:18:14 GMT"], with: agent), "\(agent.client): 1970")
            for invalid in ["Feb 30 2001 10:00:00", "Jun 9 1600 10:00:00", "Jun 9 2001 24:00:00", "Jun 32 2001 10:00:00", "9 Jun 10:00:00", "yesterday"] {
                XCTAssertEqual(afterChange(["id=4; Expires=\(invalid)"], with: agent), "id=4", "\(agent.client): \(invalid) is ignored")
            }
        }
    }

    /// 6265bis §5.6.1–§5.6.2: no cookie outlives 400 days, whatever Max-Age or Expires say.
    func testTheLifetimeIsCappedAt400Days() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["m=1; Max-Age=99999999999999999999", "e=2; Expires=Fri, 01 Jan 9999 00:00:00 GMT"],
                              at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "m=1; e=2", "\(agent.client)")
            for cookie in agent.storage.cookies ?? [] where cookie.domain.contains(site) {
                let days = (cookie.expiresDate?.timeIntervalSinceNow ?? 0) / 86400
                XCTAssertEqual(days, 400, accuracy: 0.1, "\(agent.client): \(cookie.name)")
            }
        }
    }

    /// §5.1.1, the algorithm itself, against dates worked out by hand.
    func testTheCookieDateAlgorithm() {
        func date(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int, _ s: Int) -> Date {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            return calendar.date(from: DateComponents(year: y, month: mo, day: d, hour: h, minute: mi, second: s))!
        }
        XCTAssertEqual(CookieDate.parse("Wed, 09-Jun-21 10:18:14 GMT"), date(2021, 6, 9, 10, 18, 14))
        XCTAssertEqual(CookieDate.parse("Sun Nov  6 08:49:37 1994"), date(1994, 11, 6, 8, 49, 37))
        XCTAssertEqual(CookieDate.parse("Thu, 01 Jan 70 00:00:00 GMT"), date(1970, 1, 1, 0, 0, 0))
        XCTAssertEqual(CookieDate.parse("1 Jan 00 0:0:0"), date(2000, 1, 1, 0, 0, 0))
        XCTAssertEqual(CookieDate.parse("Jan 1 69 0:0:0"), date(2069, 1, 1, 0, 0, 0))
        XCTAssertEqual(CookieDate.parse("29 Feb 2024 23:59:59x"), date(2024, 2, 29, 23, 59, 59), "trailing non-digits are allowed")
        XCTAssertNil(CookieDate.parse("29 Feb 2023 10:00:00"), "not a leap year")
        XCTAssertNil(CookieDate.parse("9 Jun 2021 10:18:144"), "three-digit seconds")
        XCTAssertNil(CookieDate.parse("9 Jun 2 10:18:14"), "a one-digit year is no year")
    }
}
