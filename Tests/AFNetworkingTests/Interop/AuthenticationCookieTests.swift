import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Basic and Digest authentication and cookies, against httpbin.
final class AuthenticationCookieTests: OperationTestCase {
    private func binURL(_ path: String) throws -> URL {
        try XCTUnwrap(URL(string: try SharedServers.httpbin().baseURL.absoluteString + path))
    }

    func testBasicWithTheOperationsCredential() throws {
        let operation = HTTPRequestOperation(request: URLRequest(url: try binURL("/basic-auth/alice/wonder")))
        operation.credential = URLCredential(user: "alice", password: "wonder", persistence: .none)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 200)
    }

    func testDigestWithTheOperationsCredential() throws {
        let operation = HTTPRequestOperation(request: URLRequest(url: try binURL("/digest-auth/auth/bob/builder")))
        operation.credential = URLCredential(user: "bob", password: "builder", persistence: .none)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 200)
    }

    func testWrongCredentialsDoNotLoopAndEndWith401() throws {
        let operation = HTTPRequestOperation(request: URLRequest(url: try binURL("/basic-auth/alice/wonder")))
        operation.credential = URLCredential(user: "alice", password: "wrong", persistence: .none)
        let outcome = run(operation)
        XCTAssertEqual(operation.response?.statusCode, 401)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
    }

    func testChallengeBlockGetsTheProtectionSpaceAndUsesACredential() throws {
        let target = try binURL("/digest-auth/auth/carol/secret")
        let operation = HTTPRequestOperation(request: URLRequest(url: target))
        let seen = Locked<[(String, Int, String?, Int)]>([])
        operation.setWillSendRequestForAuthenticationChallengeBlock { operation, challenge in
            let space = challenge.protectionSpace
            seen.append((space.host, space.port, space.authenticationMethod, challenge.previousFailureCount))
            XCTAssertTrue(challenge.sender === operation)
            XCTAssertEqual((challenge.failureResponse as? HTTPURLResponse)?.statusCode, 401)
            let password = challenge.previousFailureCount == 0 ? "wrong" : "secret"
            challenge.sender?.use(URLCredential(user: "carol", password: password, persistence: .none), for: challenge)
        }
        XCTAssertNil(run(operation).error)
        let hops = seen.value
        XCTAssertEqual(hops.count, 2, "wrong first, right second")
        XCTAssertEqual(hops.first?.0, target.host)
        XCTAssertEqual(hops.first?.1, target.port)
        XCTAssertEqual(hops.first?.2, NSURLAuthenticationMethodHTTPDigest)
        XCTAssertEqual(hops.map(\.3), [0, 1])
    }

    func testChallengeBlockCanContinueWithoutOrCancel() throws {
        let continuing = HTTPRequestOperation(request: URLRequest(url: try binURL("/basic-auth/a/b")))
        continuing.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
            XCTAssertEqual(challenge.protectionSpace.authenticationMethod, NSURLAuthenticationMethodHTTPBasic)
            challenge.sender?.continueWithoutCredential(for: challenge)
        }
        run(continuing)
        XCTAssertEqual(continuing.response?.statusCode, 401)

        let cancelling = HTTPRequestOperation(request: URLRequest(url: try binURL("/basic-auth/a/b")))
        cancelling.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in challenge.sender?.cancel(challenge) }
        XCTAssertEqual(run(cancelling).error?.code, NSURLErrorCancelled)
    }

    func testCredentialStorageIsConsultedWhenAllowed() throws {
        let target = try binURL("/basic-auth/dave/stored")
        let space = URLProtectionSpace(host: target.host!, port: target.port!, protocol: "http", realm: "Fake Realm",
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        URLCredentialStorage.shared.setDefaultCredential(URLCredential(user: "dave", password: "stored", persistence: .forSession), for: space)
        defer { URLCredentialStorage.shared.remove(URLCredential(user: "dave", password: "stored", persistence: .forSession), for: space) }

        let allowed = HTTPRequestOperation(request: URLRequest(url: target))
        XCTAssertNil(run(allowed).error)
        let refused = HTTPRequestOperation(request: URLRequest(url: target))
        refused.shouldUseCredentialStorage = false
        run(refused)
        XCTAssertEqual(refused.response?.statusCode, 401)
    }

    /// The credentials the shared storage holds for `url`'s host and port.
    private func storedCredentials(for url: URL) -> [URLCredential] {
        URLCredentialStorage.shared.allCredentials
            .filter { $0.key.host == url.host && $0.key.port == url.port }
            .flatMap { $0.value.values }
    }

    private func forgetCredentials(for url: URL) {
        for (space, byUser) in URLCredentialStorage.shared.allCredentials where space.host == url.host && space.port == url.port {
            for credential in byUser.values { URLCredentialStorage.shared.remove(credential, for: space) }
        }
    }

    /// A credential a challenge was answered with is remembered only once the
    /// server took it, and never by an operation that may not use the storage.
    func testOnlyAnAcceptedCredentialIsRememberedAndOnlyWhenStorageIsAllowed() throws {
        let target = try binURL("/basic-auth/erin/right")
        forgetCredentials(for: target)
        defer { forgetCredentials(for: target) }

        let wrong = HTTPRequestOperation(request: URLRequest(url: target))
        wrong.credential = URLCredential(user: "erin", password: "wrong", persistence: .forSession)
        run(wrong)
        XCTAssertEqual(wrong.response?.statusCode, 401)
        XCTAssertTrue(storedCredentials(for: target).isEmpty, "a refused password is not remembered")

        let private_ = HTTPRequestOperation(request: URLRequest(url: target))
        private_.credential = URLCredential(user: "erin", password: "right", persistence: .forSession)
        private_.shouldUseCredentialStorage = false
        XCTAssertNil(run(private_).error)
        XCTAssertTrue(storedCredentials(for: target).isEmpty, "an operation that may not use the storage writes nothing to it")

        let remembered = HTTPRequestOperation(request: URLRequest(url: target))
        remembered.credential = URLCredential(user: "erin", password: "right", persistence: .forSession)
        XCTAssertNil(run(remembered).error)
        XCTAssertEqual(storedCredentials(for: target).map(\.user), ["erin"], "the accepted credential is remembered")
    }

    func testCookiesAreStoredAndSentBack() throws {
        let setter = HTTPRequestOperation(request: URLRequest(url: try binURL("/cookies/set?flavour=oatmeal")))
        XCTAssertNil(run(setter).error)  // 302 to /cookies, which echoes what it received
        let echoed = setter.responseData.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        XCTAssertEqual((echoed?["cookies"] as? [String: String])?["flavour"], "oatmeal", "the cookie went out on the redirect hop")
        let stored = HTTPCookieStorage.shared.cookies(for: try binURL("/cookies")) ?? []
        XCTAssertTrue(stored.contains { $0.name == "flavour" && $0.value == "oatmeal" })

        var without = URLRequest(url: try binURL("/cookies"))
        without.httpShouldHandleCookies = false
        let plain = HTTPRequestOperation(request: without)
        XCTAssertNil(run(plain).error)
        let none = plain.responseData.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
        XCTAssertEqual((none?["cookies"] as? [String: String])?.isEmpty, true)
        for cookie in stored { HTTPCookieStorage.shared.deleteCookie(cookie) }
    }
}
