@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// RFC 6265 §5.4 step 1 and 6265bis §5.7 (Secure from secure origins only,
/// no shadowing of Secure cookies from http, `__Secure-` and `__Host-`
/// prefixes): over http against the scripted server, over https against
/// nginx serving the test PKI.
final class CookieSecureTests: CookieTestCase {
    /// 6265bis §5.7 step 8: a Secure cookie cannot be set from http.
    func testASecureCookieCannotBeSetFromHTTP() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            XCTAssertEqual(header(after: ["s=1; Secure", "p=2"], at: "\(origin)/set", next: "\(origin)/next", with: agent), "p=2", "\(agent.client)")
            XCTAssertEqual(agent.storage.cookies?.filter { $0.domain.contains(site) }.map(\.name), ["p"], "\(agent.client): not stored")
        }
    }

    /// §5.4 step 1: a stored Secure cookie is never sent over http.
    func testASecureCookieIsNeverSentOverHTTP() throws {
        try forEachClient { agent in
            let host = "www.\(site).com"
            let secure = try XCTUnwrap(HTTPCookie(properties: [.name: "s", .value: "1", .domain: host, .path: "/", .secure: "TRUE"]))
            let plain = try XCTUnwrap(HTTPCookie(properties: [.name: "p", .value: "2", .domain: host, .path: "/"]))
            agent.storage.setCookie(secure)
            agent.storage.setCookie(plain)
            XCTAssertEqual(visit("http://\(host)/next", with: agent), "p=2", "\(agent.client)")
        }
    }

    /// 6265bis §5.7 step 16: http cannot overwrite a Secure cookie of the same name.
    func testHTTPCannotShadowASecureCookie() throws {
        try forEachClient { agent in
            let host = "www.\(site).com"
            let secure = try XCTUnwrap(HTTPCookie(properties: [.name: "s", .value: "kept", .domain: "." + host, .path: "/", .secure: "TRUE"]))
            agent.storage.setCookie(secure)
            XCTAssertNil(header(after: ["s=evil"], at: "http://\(host)/set", next: "http://\(host)/next", with: agent), "\(agent.client)")
            XCTAssertEqual(agent.storage.cookies?.filter { $0.domain.contains(site) }.map(\.value), ["kept"], "\(agent.client)")
        }
    }

    /// corelibs' storage files cookies under domain + path + name run
    /// together, so two cookies whose parts join alike (`_Host-sid` at `/_`,
    /// `__Host-sid` at `/`) cannot both be kept: an http origin's never
    /// removes a live Secure one (refused); otherwise the newer one wins, as
    /// corelibs would have it — so a planted http cookie cannot block an
    /// https login's cookie either.
    func testACookieWhoseStorageKeyCollidesNeverLetsHTTPRemoveASecureOne() throws {
        try forEachClient { agent in
            let host = "www.\(site).com"
            let secure = try XCTUnwrap(HTTPCookie(properties: [.name: "__Host-sid", .value: "kept", .domain: host, .path: "/", .secure: "TRUE"]))
            agent.storage.setCookie(secure)
            _ = header(after: ["_Host-sid=evil; Path=/_", "b=1; Path=/a", "ok=2"], at: "http://\(host)/set", next: "http://\(host)/next", with: agent)
            _ = header(after: ["ab=2; Path=/"], at: "http://\(host)/set", next: "http://\(host)/next", with: agent)
            let stored = (agent.storage.cookies ?? []).filter { $0.domain.contains(site) }
            XCTAssertEqual(stored.first { $0.name == "__Host-sid" }?.value, "kept", "\(agent.client): the Secure cookie stays")
            XCTAssertNil(stored.first { $0.name == "_Host-sid" }, "\(agent.client)")
            XCTAssertNil(stored.first { $0.name == "b" }, "\(agent.client): the newer of two plain colliding cookies wins")
            XCTAssertEqual(stored.first { $0.name == "ab" }?.value, "2", "\(agent.client)")
            XCTAssertNotNil(stored.first { $0.name == "ok" }, "\(agent.client)")
        }
    }

    /// A forwarding proxy's own 407 (here the scripted server, the proxy of
    /// these tests) sets no cookie for the origin: its `Set-Cookie` is the
    /// proxy's, whether the challenge is answered or is the result.
    func testAForwardingProxysOwn407SetsNoCookieForTheOrigin() throws {
        let url = "http://www.\(site).com/behind-proxy"
        let answered = Locked(0)
        server.route(url) { request in
            if request.headers.first(name: "proxy-authorization") != nil {
                answered.withLock { $0 += 1 }
                return [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
            }
            return [.head(status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"proxy\""), ("Set-Cookie", "proxytrack=1"),
                                                 ("Content-Length", "0")]), .end]
        }
        var request = URLRequest(url: URL(string: url)!)
        request.timeoutInterval = 10
        let answeredOperation = HTTPRequestOperation(request: request)
        answeredOperation.connectionProxyDictionary = proxies
        answeredOperation.credential = URLCredential(user: "u", password: "p", persistence: .none)
        XCTAssertNil(run(answeredOperation).error)
        XCTAssertEqual(answered.value, 1, "the proxy's challenge was answered")

        let unanswered = HTTPRequestOperation(request: request)
        unanswered.connectionProxyDictionary = proxies
        unanswered.shouldUseCredentialStorage = false
        _ = run(unanswered)
        XCTAssertEqual(unanswered.response?.statusCode, 407, "unanswered, the 407 is the result")
        XCTAssertNil(HTTPCookieStorage.shared.cookies?.first { $0.name == "proxytrack" && $0.domain.contains(site) },
                     "the proxy's cookie was stored for the origin")
    }

    /// Prefixed names from http: `__Secure-` and `__Host-` need Secure, which http cannot set.
    func testPrefixedCookiesAreRefusedOverHTTP() {
        forEachClient { agent in
            let origin = "http://www.\(site).com"
            let sent = header(after: ["__Secure-a=1", "__Host-b=2; Path=/", "__secure-c=3", "=__Host-d", "ok=5"],
                              at: "\(origin)/set", next: "\(origin)/next", with: agent)
            XCTAssertEqual(sent, "ok=5", "\(agent.client)")
        }
    }

    // MARK: - https (nginx with the test PKI)

    private func secureAgent(_ client: Client) throws -> (agent: Agent, https: String, http: String, policy: SecurityPolicy) {
        let nginx = try SharedServers.pkiNginx()
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [TestPKI.root]
        let agent = agent(client, proxied: false)
        agent.manager?.securityPolicy = policy
        return (agent, "https://localhost:\(nginx.httpsPort)", "http://localhost:\(nginx.httpPort)", policy)
    }

    /// Requests `url` directly (no proxy) and returns the body (nginx echoes the Cookie header there).
    private func fetch(_ url: String, _ agent: Agent, policy: SecurityPolicy, file: StaticString = #filePath, line: UInt = #line) -> String {
        var request = URLRequest(url: URL(string: url)!)
        request.timeoutInterval = 10
        switch agent.client {
        case .operation:
            let operation = HTTPRequestOperation(request: request)
            operation.securityPolicy = policy
            XCTAssertNil(run(operation).error, url, file: file, line: line)
            return operation.responseString ?? ""
        case .session:
            let outcome = runData(agent.manager!, request).1
            XCTAssertNil(outcome.error, url, file: file, line: line)
            return (outcome.object as? Data).map { String(decoding: $0, as: UTF8.self) } ?? ""
        }
    }

    /// Over https: Secure (with any value) and valid prefixed cookies are set
    /// and sent back over https only; invalid prefixed ones are refused:
    /// `__Secure-` without Secure (any case), `__Host-` with a path other
    /// than "/", without Path, or with any Domain.
    func testSecureAndPrefixedCookiesOverHTTPS() throws {
        for client in Client.allCases {
            newSite()
            let (agent, https, http, policy) = try secureAgent(client)
            let n = site
            defer {
                for cookie in agent.storage.cookies ?? [] where cookie.name.contains(n) { agent.storage.deleteCookie(cookie) }
            }
            XCTAssertEqual(fetch("\(https)/cookies/secure?n=\(n)", agent, policy: policy), "set")
            let sent = fetch("\(https)/cookies/echo", agent, policy: policy)
            let ours = sent.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { $0.contains(n) }
            XCTAssertEqual(ours, ["s\(n)=1", "__Secure-\(n)=2", "__Host-\(n)=3"], "\(client): \(sent)")
            let overHTTP = fetch("\(http)/cookies/echo", agent, policy: policy)
            XCTAssertFalse(overHTTP.contains(n), "\(client): Secure cookies stay off http: \(overHTTP)")
        }
    }

    /// The http server of the same host offers a Secure cookie: refused.
    func testASecureCookieFromTheHTTPSideOfTheHostIsRefused() throws {
        for client in Client.allCases {
            newSite()
            let (agent, https, http, policy) = try secureAgent(client)
            let n = site
            defer {
                for cookie in agent.storage.cookies ?? [] where cookie.name.contains(n) { agent.storage.deleteCookie(cookie) }
            }
            XCTAssertEqual(fetch("\(http)/cookies/secure?n=\(n)", agent, policy: policy), "set")
            XCTAssertFalse(fetch("\(https)/cookies/echo", agent, policy: policy).contains(n), "\(client)")
            XCTAssertFalse(agent.storage.cookies?.contains { $0.name.contains(n) } ?? true, "\(client)")
        }
    }
}
