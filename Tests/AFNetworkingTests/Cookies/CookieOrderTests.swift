@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// RFC 6265 §5.4 step 2 and §5.3 step 11: the order of the Cookie header.
final class CookieOrderTests: CookieTestCase {
    /// §5.4: cookies of one path go out in the order they were created.
    func testEarlierCreationFirst() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let names = ["a", "x", "m", "b", "z", "c", "q", "d"]
            let sent = header(after: names.map { "\($0)=\($0)" }, at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, names.map { "\($0)=\($0)" }.joined(separator: "; "), "\(agent.client)")
        }
    }

    /// §5.4: across responses too: the first response's cookie comes first.
    func testEarlierResponseFirst() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["z=1"], at: "\(origin)/one", next: "\(origin)/next", with: agent), "z=1")
            XCTAssertEqual(header(after: ["a=2"], at: "\(origin)/two", next: "\(origin)/next", with: agent), "z=1; a=2", "\(agent.client)")
        }
    }

    /// §5.4: longer paths first, whatever the creation order.
    func testLongerPathsFirst() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["short=1; Path=/", "long=2; Path=/a/b", "mid=3; Path=/a", "mid2=4; Path=/a/"],
                              at: "\(origin)/set", next: "\(origin)/a/b/c", with: agent)
            XCTAssertEqual(sent, "long=2; mid2=4; mid=3; short=1", "\(agent.client)")
        }
    }

    /// §5.3 step 11.3: a replaced cookie keeps the old one's creation time, so its place.
    func testAReplacedCookieKeepsItsPlace() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["a=1", "b=2", "c=3"], at: "\(origin)/set", next: "\(origin)/next", with: agent), "a=1; b=2; c=3")
            XCTAssertEqual(header(after: ["a=new"], at: "\(origin)/again", next: "\(origin)/next", with: agent), "a=new; b=2; c=3", "\(agent.client)")
        }
    }

    /// Set twice in one response, a cookie keeps the place of its first field.
    func testACookieSetTwiceInOneResponseKeepsItsFirstPlace() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["a=1", "b=1", "a=2"], at: "\(origin)/set", next: "\(origin)/next", with: agent), "a=2; b=1",
                           "\(agent.client)")
        }
    }

    /// A cookie deleted and set again is new: it goes last.
    func testADeletedCookieSetAgainIsNew() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["a=1", "b=2"], at: "\(origin)/set", next: "\(origin)/next", with: agent), "a=1; b=2")
            XCTAssertEqual(header(after: ["a=; Max-Age=0", "a=3"], at: "\(origin)/again", next: "\(origin)/next", with: agent), "b=2; a=3",
                           "\(agent.client)")
        }
    }
}
