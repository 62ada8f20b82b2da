@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Which stored cookies go out with a request: swift-corelibs-foundation's
/// storage matches on the host alone, so the library applies RFC 6265's path,
/// Secure and expiry rules itself.
final class CookieRulesTests: OperationTestCase {
    private func cookie(_ name: String, path: String = "/", secure: Bool = false, expires: Date? = nil) -> HTTPCookie {
        var properties: [HTTPCookiePropertyKey: Any] = [.name: name, .value: "v", .domain: "127.0.0.1", .path: path]
        if secure { properties[.secure] = "TRUE" }
        if let expires { properties[.expires] = expires }
        return HTTPCookie(properties: properties)!
    }

    func testPathMatching() {
        XCTAssertTrue(CookiePath.matches(requestPath: "/docs", cookiePath: "/docs"))
        XCTAssertTrue(CookiePath.matches(requestPath: "/docs/a", cookiePath: "/docs"))
        XCTAssertTrue(CookiePath.matches(requestPath: "/docs/a", cookiePath: "/docs/"))
        XCTAssertTrue(CookiePath.matches(requestPath: "/anything", cookiePath: "/"))
        XCTAssertFalse(CookiePath.matches(requestPath: "/docsX", cookiePath: "/docs"))
        XCTAssertFalse(CookiePath.matches(requestPath: "/", cookiePath: "/docs"))
    }

    func testOnlyMatchingCookiesAreSent() throws {
        let storage = HTTPCookieStorage.shared
        let cookies = [cookie("root"), cookie("docs", path: "/docs"), cookie("other", path: "/other"), cookie("secure", secure: true),
                       cookie("expired", expires: Date(timeIntervalSinceNow: -60)), cookie("later", expires: Date(timeIntervalSinceNow: 3600))]
        cookies.forEach(storage.setCookie)
        defer { cookies.forEach(storage.deleteCookie) }
        server.respond("/docs/page", body: Data("p".utf8))
        XCTAssertNil(run(HTTPRequestOperation(request: request("/docs/page"))).error)
        let sent = try XCTUnwrap(server.requests.last?.headers.first(name: "cookie"))
        let names = Set(sent.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).split(separator: "=")[0] }.map(String.init))
        // Other tests' cookies for this host may be in the shared storage too.
        let ours: Set<String> = ["root", "docs", "other", "secure", "expired", "later"]
        XCTAssertEqual(names.intersection(ours), ["root", "docs", "later"], "not the other path, not Secure over http, not expired: \(sent)")
    }
}
