@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// RFC 6265 §5.2.3, §5.1.3 and §5.3 steps 5–6: the Domain attribute,
/// host-only cookies and public suffixes (libpsl).
final class CookieDomainTests: CookieTestCase {
    /// §5.3 step 6: without Domain the cookie is host-only: not sent to a subdomain or the parent.
    func testWithoutDomainTheCookieIsHostOnly() {
        forEachClient { agent in
            let host = "http://www.\(site).co.uk"
            XCTAssertEqual(header(after: ["h=1"], at: "\(host)/set", next: "\(host)/next", with: agent), "h=1", "\(agent.client)")
            XCTAssertNil(visit("http://sub.www.\(site).co.uk/next", with: agent), "\(agent.client): not to a subdomain")
            XCTAssertNil(visit("http://\(site).co.uk/next", with: agent), "\(agent.client): not to the parent")
        }
    }

    /// §5.2.3: a leading dot is ignored; the cookie goes to the domain and every host below it.
    func testALeadingDotIsIgnoredAndSubdomainsMatch() {
        forEachClient { agent in
            let domain = "\(site).co.uk"
            XCTAssertEqual(header(after: ["d=1; Domain=.\(domain)", "e=2; Domain=\(domain.uppercased())"], at: "http://www.\(domain)/set",
                                  next: "http://\(domain)/next", with: agent), "d=1; e=2", "\(agent.client)")
            XCTAssertEqual(visit("http://a.b.\(domain)/next", with: agent), "d=1; e=2", "\(agent.client)")
            XCTAssertNil(visit("http://x\(domain)/next", with: agent), "\(agent.client): a suffix that is not at a dot does not match")
        }
    }

    /// §5.2.3: an empty Domain is ignored (the cookie is host-only), not dropped.
    func testAnEmptyDomainIsIgnored() {
        forEachClient { agent in
            let host = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["e=1; Domain=", "f=2; Domain=; Path=/"], at: "\(host)/set", next: "\(host)/next", with: agent),
                           "e=1; f=2", "\(agent.client)")
            XCTAssertNil(visit("http://sub.www.\(site).com/next", with: agent), "\(agent.client): host-only")
        }
    }

    /// §5.3 step 6: a Domain that the request host does not domain-match rejects the cookie.
    func testAForeignDomainRejectsTheCookie() {
        forEachClient { agent in
            let host = "http://www.\(site).com"
            let sent = header(after: ["a=1; Domain=other\(site).com", "b=2; Domain=sub.www.\(site).com", "c=3; Domain=ww.\(site).com", "ok=4"],
                              at: "\(host)/set", next: "\(host)/next", with: agent)
            XCTAssertEqual(sent, "ok=4", "\(agent.client)")
            XCTAssertNil(visit("http://other\(site).com/next", with: agent), "\(agent.client)")
        }
    }

    /// §5.3 step 5: a Domain that is a public suffix (from libpsl: `com`,
    /// `co.uk`, the private `github.io`) rejects the cookie.
    func testAPublicSuffixDomainRejectsTheCookie() {
        forEachClient { agent in
            let sent = header(after: ["a=1; Domain=co.uk", "b=2; Domain=.uk", "ok=3"], at: "http://www.\(site).co.uk/set",
                              next: "http://www.\(site).co.uk/next", with: agent)
            XCTAssertEqual(sent, "ok=3", "\(agent.client)")
            XCTAssertNil(visit("http://other\(site).co.uk/next", with: agent), "\(agent.client): nothing for every co.uk host")
            XCTAssertNil(header(after: ["g=1; Domain=github.io"], at: "http://\(site).github.io/set",
                                next: "http://other\(site).github.io/next", with: agent), "\(agent.client)")
            XCTAssertNil(header(after: ["o=1; Domain=.org"], at: "http://www.\(site).org/set", next: "http://x\(site).org/next", with: agent))
        }
    }

    /// §5.3 step 5: a public-suffix Domain equal to the host itself makes a host-only cookie.
    func testAPublicSuffixEqualToTheHostIsHostOnly() {
        forEachClient { agent in
            // github.io is itself on the list (a private suffix).
            XCTAssertTrue(CookieDomain.isPublicSuffix("github.io"))
            XCTAssertFalse(CookieDomain.isPublicSuffix("\(site).github.io"))
            XCTAssertEqual(header(after: ["p=1; Domain=github.io"], at: "http://github.io/set", next: "http://github.io/next", with: agent),
                           "p=1", "\(agent.client)")
            XCTAssertNil(visit("http://\(site).github.io/next", with: agent), "\(agent.client): host-only, not for the suffix's hosts")
            let stored = agent.storage.cookies?.first { $0.name == "p" && $0.domain.hasSuffix("github.io") }
            XCTAssertEqual(stored?.domain, "github.io", "no leading dot: host-only")
            if let stored { agent.storage.deleteCookie(stored) }
        }
    }

    /// §5.1.3: IP addresses match only themselves; a Domain on one is taken only when identical.
    func testIPAddressesMatchOnlyThemselves() {
        forEachClient { agent in
            let sent = header(after: ["a\(site)=1; Domain=127.0.0.1", "b\(site)=2; Domain=0.0.1"], at: "\(server.baseURL.absoluteString)/set",
                              next: "\(server.baseURL.absoluteString)/next", with: agent)
            XCTAssertEqual(sent?.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.contains(site) },
                           ["a\(site)=1"], "\(agent.client)")
        }
    }

    /// §5.3 step 11: a host-only and a domain cookie with the same name,
    /// domain and path are one cookie: the later replaces the earlier.
    func testHostOnlyAndDomainCookieOfOneNameAreOneCookie() {
        forEachClient { agent in
            let domain = "\(site).com"
            XCTAssertEqual(header(after: ["n=host"], at: "http://\(domain)/set", next: "http://\(domain)/next", with: agent), "n=host")
            XCTAssertEqual(header(after: ["n=domain; Domain=\(domain)"], at: "http://\(domain)/set2", next: "http://\(domain)/next", with: agent),
                           "n=domain", "\(agent.client)")
            XCTAssertEqual(agent.storage.cookies?.filter { $0.domain.contains(site) }.count, 1)
        }
    }
}
