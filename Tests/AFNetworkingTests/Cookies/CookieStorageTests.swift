@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Where cookies live (`HTTPCookieStorage`: `.shared` for operations, the
/// configuration's for sessions), what 2.x code sees in it, sharing between
/// managers, and the per-domain limit.
final class CookieStorageTests: CookieTestCase {
    /// Stored cookies are ordinary `HTTPCookie`s: a domain cookie's domain
    /// has a leading dot, a host-only one has none; Max-Age and Expires
    /// become `expiresDate`.
    func testStoredCookiesAreInspectable() {
        forEachClient { agent in
            let domain = "\(site).com"
            serve("http://www.\(domain)/dir/set", setting: ["h=1", "d=2; Domain=\(domain); Path=/; Max-Age=600"])
            visit("http://www.\(domain)/dir/set", with: agent)
            let stored = (agent.storage.cookies ?? []).filter { $0.domain.contains(site) }.sorted { $0.name < $1.name }
            XCTAssertEqual(stored.map(\.name), ["d", "h"], "\(agent.client)")
            XCTAssertEqual(stored.map(\.domain), [".\(domain)", "www.\(domain)"])
            XCTAssertEqual(stored.map(\.path), ["/", "/dir"])
            XCTAssertNotNil(stored.first?.expiresDate)
            XCTAssertNil(stored.last?.expiresDate, "a session cookie")
        }
    }

    /// Cookies 2.x code puts in the storage are sent (host-only without a dot, domain-wide with one).
    func testSeededCookiesAreSent() throws {
        try forEachClient { agent in
            let domain = "\(site).com"
            agent.storage.setCookie(try XCTUnwrap(HTTPCookie(properties: [.name: "host", .value: "1", .domain: "www.\(domain)", .path: "/"])))
            agent.storage.setCookie(try XCTUnwrap(HTTPCookie(properties: [.name: "wide", .value: "2", .domain: ".\(domain)", .path: "/"])))
            let both = visit("http://www.\(domain)/x", with: agent)?.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            XCTAssertEqual(Set(both ?? []), ["host=1", "wide=2"], "\(agent.client)")
            XCTAssertEqual(visit("http://api.\(domain)/x", with: agent), "wide=2", "\(agent.client)")
        }
    }

    /// Two session managers on one configuration storage see each other's cookies.
    func testTwoSessionManagersShareOneStorage() {
        let storage = URLSessionConfiguration.ephemeral.httpCookieStorage!
        let first = agent(.session) { $0.httpCookieStorage = storage }
        let second = agent(.session) { $0.httpCookieStorage = storage }
        let origin = "http://www.\(site).com"
        serve("\(origin)/set", setting: ["shared=1"])
        visit("\(origin)/set", with: first)
        XCTAssertEqual(visit("\(origin)/next", with: second), "shared=1")
        XCTAssertNil(visit("\(origin)/next", with: agent(.session)), "a manager with a storage of its own does not")
    }

    /// Operations and sessions on the default configuration share `HTTPCookieStorage.shared`.
    func testOperationsAndDefaultSessionsShareTheSharedStorage() {
        let operations = agent(.operation)
        let sessions = agent(.session) { $0.httpCookieStorage = .shared }
        let origin = "http://www.\(site).com"
        serve("\(origin)/set", setting: ["both=1"])
        visit("\(origin)/set", with: operations)
        XCTAssertEqual(visit("\(origin)/next", with: sessions), "both=1")
    }

    /// A configuration's `httpCookieAcceptPolicy = .never` stores nothing.
    func testAcceptPolicyNeverStoresNothing() {
        let never = agent(.session) { $0.httpCookieAcceptPolicy = .never }
        let origin = "http://www.\(site).com"
        XCTAssertNil(header(after: ["a=1"], at: "\(origin)/set", next: "\(origin)/next", with: never))
    }

    /// Browsers keep at most 180 cookies per domain: the 181st evicts the oldest.
    func testTheOldestCookieOfAFullDomainIsEvicted() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let first = (0..<180).map { "c\($0)=\($0)" }
            XCTAssertEqual(header(after: first, at: "\(origin)/set", next: "\(origin)/next", with: agent)?.split(separator: ";").count, 180)
            let sent = header(after: ["late=1"], at: "\(origin)/more", next: "\(origin)/next", with: agent) ?? ""
            let names = sent.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).split(separator: "=")[0] }
            XCTAssertEqual(names.count, 180, "\(agent.client)")
            XCTAssertFalse(names.contains("c0"), "\(agent.client): the oldest went")
            XCTAssertEqual(names.first, "c1", "\(agent.client)")
            XCTAssertEqual(names.last, "late", "\(agent.client)")
        }
    }

    /// §5.3: a full domain evicts its expired cookies (still in the storage,
    /// never sent) before its oldest live one.
    func testAFullDomainEvictsExpiredCookiesFirst() throws {
        let storage = try XCTUnwrap(URLSessionConfiguration.ephemeral.httpCookieStorage)
        let url = try XCTUnwrap(URL(string: "http://www.\(site).com/set"))
        let start = Date()
        CookieJar.store((0..<179).map { "c\($0)=\($0); Max-Age=3600" }, for: url, in: storage, now: start)
        CookieJar.store(["brief=1; Max-Age=10"], for: url, in: storage, now: start.addingTimeInterval(1))
        CookieJar.store(["late=1; Max-Age=3600"], for: url, in: storage, now: start.addingTimeInterval(20))
        let names = Set((storage.cookies ?? []).map(\.name))
        XCTAssertTrue(names.contains("c0"), "the oldest live cookie stays while an expired one can go")
        XCTAssertFalse(names.contains("brief"))
        XCTAssertTrue(names.contains("late"))
        XCTAssertEqual(names.count, 180)
    }
}
