import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Redirects: the redirect block, method and body rules, header hygiene.
final class RedirectTests: OperationTestCase {
    private func redirect(_ path: String, status: Int, to location: String) {
        server.route(path) { _ in [.head(status: status, headers: [("Location", location), ("Content-Length", "5")]), .body(Data("moved".utf8)), .end] }
    }

    func testRedirectBlockSeesEachHopWithTheProposedRequestAndResponse() {
        redirect("/one", status: 301, to: "/two")
        redirect("/two", status: 302, to: "/three")
        server.respond("/three", body: Data("end".utf8))
        let operation = HTTPRequestOperation(request: request("/one"))
        let hops = Locked<[(String, Int)]>([])
        operation.setRedirectResponseBlock { _, proposed, response in
            hops.append((proposed.url?.path ?? "", (response as? HTTPURLResponse)?.statusCode ?? 0))
            return proposed
        }
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(hops.value.map(\.0), ["/two", "/three"])
        XCTAssertEqual(hops.value.map(\.1), [301, 302])
        XCTAssertEqual(operation.responseString, "end", "redirect bodies never reach the output")
        XCTAssertEqual(operation.response?.url?.path, "/three")
    }

    func testReturningNilStopsAtTheRedirectWithItsBody() {
        redirect("/one", status: 302, to: "/two")
        server.respond("/two", body: Data("never".utf8))
        let operation = HTTPRequestOperation(request: request("/one"))
        operation.responseSerializer.acceptableStatusCodes = IndexSet(integersIn: 200..<400)
        operation.setRedirectResponseBlock { _, _, _ in nil }
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 302)
        XCTAssertEqual(operation.responseString, "moved")
        XCTAssertEqual(server.requests.count, 1)
    }

    func testReturningAnotherRequestSendsThatOne() {
        redirect("/one", status: 302, to: "/two")
        server.respond("/elsewhere", body: Data("chosen".utf8))
        let operation = HTTPRequestOperation(request: request("/one"))
        let elsewhere = request("/elsewhere")
        operation.setRedirectResponseBlock { _, _, _ in elsewhere }
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseString, "chosen")
    }

    /// A relative Location is resolved against the request's URL without its
    /// fragment, and a target without a fragment keeps the request's (RFC
    /// 9110 §10.2.2); a Location that is no URL is not followed.
    func testRelativeLocationsIgnoreAndInheritTheFragment() throws {
        redirect("/dir/a", status: 302, to: "b?p=2")
        server.respond("/dir/b", body: Data("b".utf8))
        let operation = HTTPRequestOperation(request: URLRequest(url: try XCTUnwrap(URL(string: url("dir/a").absoluteString + "#x/y"))))
        let hops = Locked<[URL]>([])
        operation.setRedirectResponseBlock { _, next, _ in
            if let url = next.url { hops.append(url) }
            return next
        }
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseString, "b")
        XCTAssertEqual(server.requests.last?.uri, "/dir/b?p=2", "resolved against /dir/a, not inside the fragment")
        XCTAssertEqual(hops.value.first?.absoluteString, url("dir/b").absoluteString + "?p=2#x/y", "the fragment is inherited")

        redirect("/odd", status: 302, to: "http://[::1")
        let odd = HTTPRequestOperation(request: request("/odd"))
        odd.responseSerializer.acceptableStatusCodes = IndexSet(integersIn: 200..<400)
        XCTAssertNil(run(odd).error, "a Location that is no URL is delivered, not failed")
        XCTAssertEqual(odd.response?.statusCode, 302)
    }

    func testPostBecomesGetOn301302303AndStaysPostOn307308() throws {
        server.respond("/target", body: Data("ok".utf8))
        for (status, method) in [(301, "GET"), (302, "GET"), (303, "GET"), (307, "POST"), (308, "POST")] {
            redirect("/r\(status)", status: status, to: "/target")
            var post = request("/r\(status)", method: "POST")
            post.setValue("text/plain", forHTTPHeaderField: "Content-Type")
            post.setValue("identity", forHTTPHeaderField: "Content-Encoding")
            post.setValue("en", forHTTPHeaderField: "Content-Language")
            post.httpBody = Data("payload".utf8)
            XCTAssertNil(run(HTTPRequestOperation(request: post)).error, "\(status)")
            let last = try XCTUnwrap(server.requests.last)
            XCTAssertEqual(last.method, method, "\(status)")
            XCTAssertEqual(last.body, method == "POST" ? Data("payload".utf8) : Data(), "\(status)")
            XCTAssertEqual(last.headers.first(name: "content-type"), method == "POST" ? "text/plain" : nil, "\(status)")
            // The fields that described the dropped body go with it (RFC 9110 §15.4).
            XCTAssertEqual(last.headers.first(name: "content-encoding"), method == "POST" ? "identity" : nil, "\(status)")
            XCTAssertEqual(last.headers.first(name: "content-language"), method == "POST" ? "en" : nil, "\(status)")
        }
    }

    func testAuthorizationAndCookieAreNotForwardedToAnotherHost() throws {
        // 127.0.0.1 and localhost are different origins reaching the same server.
        redirect("/same", status: 302, to: "http://127.0.0.1:\(server.port)/landing")
        redirect("/cross", status: 302, to: "http://localhost:\(server.port)/landing")
        server.respond("/landing", body: Data("ok".utf8))
        for (path, forwarded) in [("/same", true), ("/cross", false)] {
            var request = self.request(path)
            request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
            request.setValue("session=abc", forHTTPHeaderField: "Cookie")
            XCTAssertNil(run(HTTPRequestOperation(request: request)).error)
            let landing = try XCTUnwrap(server.requests.last)
            XCTAssertEqual(landing.uri, "/landing")
            XCTAssertEqual(landing.headers.first(name: "authorization") != nil, forwarded, path)
            XCTAssertEqual(landing.headers.first(name: "cookie") != nil, forwarded, path)
        }
    }

    func testRedirectWithoutLocationIsAFinalResponse() {
        server.route("/nowhere") { _ in [.head(status: 302, headers: [("Content-Length", "4")]), .body(Data("stay".utf8)), .end] }
        let operation = HTTPRequestOperation(request: request("/nowhere"))
        operation.responseSerializer.acceptableStatusCodes = IndexSet(integersIn: 200..<400)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 302)
        XCTAssertEqual(operation.responseString, "stay")
    }

    func testCancelBetweenHopsEndsCancelled() {
        redirect("/one", status: 302, to: "/two")
        server.respond("/two", body: Data("x".utf8))
        let operation = HTTPRequestOperation(request: request("/one"))
        operation.setRedirectResponseBlock { operation, proposed, _ in
            operation.cancel()
            return proposed
        }
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(server.requests.count, 1)
    }
}

/// A proxy's 407 challenge, answered with the operation's credential.
final class ProxyAuthenticationTests: OperationTestCase {
    func testProxyChallengeIsAnsweredWithProxyAuthorization() throws {
        server.route("http://behind.proxy.example/doc") { request in
            guard let answer = request.headers.first(name: "proxy-authorization") else {
                return [.head(status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"gateway\""), ("Content-Length", "0")]), .end]
            }
            let expected = "Basic " + Data("proxyuser:proxypass".utf8).base64EncodedString()
            return answer == expected
                ? [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
                : [.head(status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"gateway\""), ("Content-Length", "0")]), .end]
        }
        setenv("http_proxy", "http://127.0.0.1:\(server.port)", 1)
        defer { unsetenv("http_proxy") }
        var request = URLRequest(url: URL(string: "http://behind.proxy.example/doc")!)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        let seen = Locked<URLProtectionSpace?>(nil)
        operation.setWillSendRequestForAuthenticationChallengeBlock { _, challenge in
            seen.value = challenge.protectionSpace
            challenge.sender?.use(URLCredential(user: "proxyuser", password: "proxypass", persistence: .none), for: challenge)
        }
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseString, "ok")
        XCTAssertEqual(seen.value?.isProxy(), true)
        XCTAssertEqual(seen.value?.realm, "gateway")
        XCTAssertEqual(seen.value?.authenticationMethod, NSURLAuthenticationMethodHTTPBasic)
    }
}
