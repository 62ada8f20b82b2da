@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// RFC 6265 §5.1.4 and §5.2.4: default-path, the Path attribute and path-match.
final class CookiePathTests: CookieTestCase {
    /// §5.1.4: without Path, the cookie's path is the request path's directory.
    func testTheDefaultPathIsTheDirectory() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["d=1"], at: "\(origin)/a/b/page", next: "\(origin)/a/b/other", with: agent), "d=1", "\(agent.client)")
            XCTAssertEqual(visit("\(origin)/a/b", with: agent), "d=1", "\(agent.client): the directory itself")
            XCTAssertNil(visit("\(origin)/a/", with: agent), "\(agent.client): not above it")
            XCTAssertNil(visit("\(origin)/a/bc", with: agent), "\(agent.client): not a sibling that shares the prefix")
            XCTAssertEqual(agent.storage.cookies?.first { $0.domain.contains(site) }?.path, "/a/b")
        }
    }

    /// §5.1.4: a request path with one "/" (or none) defaults to "/".
    func testTheDefaultPathOfATopLevelPageIsRoot() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["r=1"], at: "\(origin)/page", next: "\(origin)/x/y", with: agent), "r=1", "\(agent.client)")
        }
    }

    /// §5.2.4: a Path that is empty or does not start with "/" means the default-path.
    func testARelativeOrEmptyPathMeansTheDefault() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["e=1; Path=", "r=2; Path=relative"], at: "\(origin)/dir/page", next: "\(origin)/dir/x", with: agent)
            XCTAssertEqual(sent, "e=1; r=2", "\(agent.client)")
            XCTAssertNil(visit("\(origin)/other", with: agent), "\(agent.client)")
        }
    }

    /// §5.1.4: a cookie path ending in "/" matches the request path with that
    /// trailing slash (read from the raw path: `URL.path` drops it) and below.
    func testATrailingSlashPathMatchesThatPath() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["t=1; Path=/a/b/"], at: "\(origin)/set", next: "\(origin)/a/b/", with: agent), "t=1", "\(agent.client)")
            XCTAssertEqual(visit("\(origin)/a/b/c", with: agent), "t=1", "\(agent.client)")
            XCTAssertNil(visit("\(origin)/a/b", with: agent), "\(agent.client): /a/b is not within /a/b/")
        }
    }

    /// §5.1.4: the path is compared as sent, percent-encoded, case-sensitively.
    func testThePathIsComparedAsSent() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["p=1; Path=/a%20b"], at: "\(origin)/set", next: "\(origin)/a%20b/c", with: agent), "p=1", "\(agent.client)")
            XCTAssertNil(visit("\(origin)/A%20b/c", with: agent), "\(agent.client): paths are case-sensitive")
        }
    }
}
