@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOHTTP1
import XCTest

/// An operation's `credential` answers challenges from the original request's
/// origin only (scheme, host, port): two in-process servers are two origins,
/// and a redirect from one to the other must not carry the credential.
final class CredentialScopeTests: OperationTestCase {
    private var other: ScriptedServer!

    override func setUpWithError() throws {
        try super.setUpWithError()
        other = try ScriptedServer()
    }

    override func tearDown() {
        other?.shutdown()
        other = nil
        super.tearDown()
    }

    /// `/secret` on `server`: 401 with a Basic challenge, 200 once Authorization is sent.
    private func protect(_ server: ScriptedServer) {
        server.route("/secret") { request in
            if request.headers.first(name: "authorization") != nil {
                return [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
            }
            return [.head(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"scope\""), ("Content-Length", "0")]), .end]
        }
    }

    private func operation(_ url: URL) -> HTTPRequestOperation {
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        operation.credential = URLCredential(user: "user", password: "secret", persistence: .none)
        operation.shouldUseCredentialStorage = false
        return operation
    }

    func testTheCredentialAnswersItsOwnOrigin() {
        protect(server)
        let operation = operation(url("/secret"))
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 200)
    }

    func testTheCredentialNeverReachesAnotherOriginAfterARedirect() throws {
        protect(other)
        server.respond("/go", status: 302, headers: [("Location", "http://127.0.0.1:\(other.port)/secret")])
        let operation = operation(url("/go"))
        _ = run(operation)
        XCTAssertEqual(operation.response?.statusCode, 401, "the other origin's challenge was answered")
        XCTAssertFalse(other.requests.isEmpty, "the redirect was followed")
        XCTAssertTrue(other.requests.allSatisfy { $0.headers.first(name: "authorization") == nil },
                      "the other origin received the credential")
    }

    /// RFC 7617 §2: a user name holding ":" cannot be sent as Basic (the
    /// server would split it at the colon): the request fails, saying why, and
    /// nothing is sent with it.
    func testABasicChallengeIsNotAnsweredForAUserNameWithAColon() {
        protect(server)
        let operation = operation(url("/secret"))
        operation.credential = URLCredential(user: "team:alice", password: "secret", persistence: .none)
        let error = run(operation).error as NSError?
        XCTAssertEqual(error?.domain, NSURLErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorUserAuthenticationRequired)
        XCTAssertTrue(error?.localizedDescription.contains("RFC 7617") == true, "\(String(describing: error))")
        XCTAssertEqual(operation.response?.statusCode, 401, "the challenge is the response")
        XCTAssertEqual(server.requests.count, 1, "no second request")
        XCTAssertTrue(server.requests.allSatisfy { $0.headers.first(name: "authorization") == nil })
    }

    func testAChallengeBlockMayStillAnswerAnotherOrigin() throws {
        protect(other)
        server.respond("/go", status: 302, headers: [("Location", "http://127.0.0.1:\(other.port)/secret")])
        let operation = operation(url("/go"))
        operation.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
            challenge.sender?.use(URLCredential(user: "user", password: "secret", persistence: .none), for: challenge)
        }
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 200)
    }

    func testTheScopeIsSchemeHostAndPort() throws {
        let original = URL(string: "https://example.test/a")!
        func space(_ scheme: String, _ host: String, _ port: Int) -> URLProtectionSpace {
            URLProtectionSpace(host: host, port: port, protocol: scheme, realm: "r", authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        }
        func covers(_ space: URLProtectionSpace) -> Bool {
            // The space names where the challenge came from: for a server, the challenged URL's origin.
            let challenged = URL(string: "\(space.protocol ?? "http")://\(space.host):\(space.port)/b")
            return CredentialScope.covers(space, originalURL: original, challengedURL: challenged)
        }
        XCTAssertTrue(covers(space("https", "EXAMPLE.test", 443)))
        XCTAssertFalse(covers(space("http", "example.test", 80)), "plain http after https")
        XCTAssertFalse(covers(space("http", "example.test", 443)))
        XCTAssertFalse(covers(space("https", "example.test", 8443)))
        XCTAssertFalse(covers(space("https", "other.test", 443)))
    }

    /// A proxy's challenge is covered on a request to the original origin
    /// only: through a proxy that forwards plain http, a 407 may be the
    /// origin's own, and another origin reached by a redirect must not be
    /// able to have the credential sent to the proxy.
    func testAProxysChallengeIsCoveredOnTheWayToTheOriginalOriginOnly() {
        let original = URL(string: "http://example.test/a")!
        let proxy = URLProtectionSpace(proxyHost: "proxy.test", port: 3128, type: NSURLProtectionSpaceHTTPProxy, realm: "r",
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        XCTAssertTrue(CredentialScope.covers(proxy, originalURL: original, challengedURL: URL(string: "http://EXAMPLE.test:80/b")!))
        XCTAssertFalse(CredentialScope.covers(proxy, originalURL: original, challengedURL: URL(string: "http://other.test/a")!),
                       "a hop to another origin")
        XCTAssertFalse(CredentialScope.covers(proxy, originalURL: original, challengedURL: URL(string: "https://example.test/a")!),
                       "another scheme is another origin")
        XCTAssertFalse(CredentialScope.covers(proxy, originalURL: original, challengedURL: nil))
    }
}
