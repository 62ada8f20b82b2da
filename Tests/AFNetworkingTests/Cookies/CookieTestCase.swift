@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Base of the cookie suites: the scripted server plays every origin as an
/// HTTP proxy (curl sends `GET http://www.example.co.uk/… HTTP/1.1` to it and
/// never resolves the name), so tests can use real domain names and public
/// suffixes on loopback. A server sets cookies; the test checks the Cookie
/// header the server then received on the next request. Each rule runs
/// through an operation (the shared storage) and a session task (its
/// ephemeral configuration's storage).
class CookieTestCase: SessionTransferTestCase {
    enum Client: CaseIterable { case operation, session }

    /// A label unique to the test, part of every host it uses, so cookies in
    /// the shared storage never meet another test's.
    var site: String { sites.last ?? "" }
    private var sites: [String] = []
    private var served: Set<String> = []
    private var visitedHosts: Set<String> = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        // Servers send what hostile ones do (control characters in Set-Cookie).
        server.shutdown()
        server = try ScriptedServer(validatesHeaders: false)
        newSite()
    }

    override func tearDown() {
        // Whatever the test left in the shared storage for the hosts it
        // visited goes, even a cookie for a public suffix that a broken
        // policy let in (it would reach every later test's hosts).
        let shared = HTTPCookieStorage.shared
        for cookie in shared.cookies ?? [] {
            let domain = CookieJar.domainKey(cookie)
            let visitedHere = visitedHosts.contains { CookieDomain.domainMatches(host: $0, domain: domain) }
            if visitedHere || sites.contains(where: { cookie.domain.contains($0) || cookie.name.contains($0) }) {
                shared.deleteCookie(cookie)
            }
        }
        super.tearDown()
    }

    func newSite() {
        sites.append("t" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(10).lowercased())
    }

    var proxies: [AnyHashable: Any] { ["HTTPEnable": true, "HTTPProxy": "127.0.0.1", "HTTPPort": server.port] }

    /// One user agent: its storage and, for sessions, the manager on it.
    final class Agent {
        let client: Client
        let storage: HTTPCookieStorage
        let manager: URLSessionManager?
        init(client: Client, storage: HTTPCookieStorage, manager: URLSessionManager?) {
            self.client = client
            self.storage = storage
            self.manager = manager
        }
    }

    /// `proxied: false`: a session that talks to origins directly (nginx).
    func agent(_ client: Client, proxied: Bool = true, configure: (URLSessionConfiguration) -> Void = { _ in }) -> Agent {
        switch client {
        case .operation:
            return Agent(client: client, storage: .shared, manager: nil)
        case .session:
            let configuration = URLSessionConfiguration.ephemeral
            configuration.connectionProxyDictionary = proxied ? proxies : [:]
            configure(configuration)
            let manager = makeManager(configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            return Agent(client: client, storage: configuration.httpCookieStorage ?? .shared, manager: manager)
        }
    }

    /// Answers `url` (absolute, no query) with 200 and these Set-Cookie fields, one field each.
    func serve(_ url: String, setting cookies: [String] = []) {
        served.insert(url)
        server.respond(url, headers: cookies.map { ("Set-Cookie", $0) }, body: Data("ok".utf8))
    }

    /// Requests `url` through the agent; returns the Cookie header the server received.
    @discardableResult
    func visit(_ url: String, with agent: Agent, shouldHandleCookies: Bool = true,
               file: StaticString = #filePath, line: UInt = #line) -> String? {
        let key = String(url.split(separator: "?", maxSplits: 1)[0])
        if !served.contains(key) { serve(key) }
        var request = URLRequest(url: URL(string: url)!)
        request.timeoutInterval = 10
        request.httpShouldHandleCookies = shouldHandleCookies
        if let host = request.url?.host?.lowercased() { visitedHosts.insert(host) }
        let before = server.requests.count
        switch agent.client {
        case .operation:
            let operation = HTTPRequestOperation(request: request)
            operation.connectionProxyDictionary = proxies
            XCTAssertNil(run(operation).error, "GET \(url) by an operation", file: file, line: line)
        case .session:
            XCTAssertNil(runData(agent.manager!, request).1.error, "GET \(url) by a session task", file: file, line: line)
        }
        let received = server.requests.dropFirst(before).filter { $0.uri == url }
        XCTAssertEqual(received.count, 1, "the server saw GET \(url) once", file: file, line: line)
        return received.last?.headers.first(name: "cookie")
    }

    /// Runs `body` once per client, each with a fresh agent and site label.
    func forEachClient(_ body: (Agent) throws -> Void) rethrows {
        for client in Client.allCases {
            newSite()
            try body(agent(client))
        }
    }

    /// The Cookie header after `url` answered with `cookies`, on a visit to `next`.
    func header(after cookies: [String], at url: String, next: String, with agent: Agent,
                file: StaticString = #filePath, line: UInt = #line) -> String? {
        serve(url, setting: cookies)
        visit(url, with: agent, file: file, line: line)
        return visit(next, with: agent, file: file, line: line)
    }
}
