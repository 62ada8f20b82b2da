@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The private cache against RFC 9111, from the RFC's text (issue 19): a
/// scripted server whose answers change with every request, so a test sees
/// whether an answer came from the cache (the server's count) and which one.
final class HTTPCachingRFC9111Tests: SessionTasksTestCase {
    private func count(_ path: String) -> Int { server.requests.filter { $0.uri == path }.count }

    /// Each answer names its sequence number in the body and `X-Answer`.
    private func routeCounting(_ path: String, status: Int = 200, headers: [(String, String)]) {
        let served = Locked(0)
        server.route(path) { _ in
            let number = served.withLock { value -> Int in
                value += 1
                return value
            }
            let body = Data("answer \(number)".utf8)
            return [.head(status: status, headers: headers + [("X-Answer", "\(number)"), ("Content-Length", "\(body.count)")]),
                    .body(body), .end]
        }
    }

    @discardableResult
    private func fetch(_ path: String, headers: [String: String] = [:],
                       configure: (HTTPRequestOperation) -> Void = { _ in }) -> (HTTPRequestOperation, Outcome) {
        var request = self.request(path)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let operation = HTTPRequestOperation(request: request)
        operation.responseSerializer.acceptableStatusCodes = nil
        configure(operation)
        return (operation, run(operation))
    }

    // MARK: - §4.1 Vary

    func testAResponseIsReusedOnlyForTheSameValuesOfItsVaryFields() {
        routeCounting("/vary", headers: [("Cache-Control", "max-age=3600"), ("Vary", "X-User, Accept-Language")])
        XCTAssertEqual(fetch("/vary", headers: ["X-User": "alice"]).0.responseString, "answer 1")
        XCTAssertEqual(fetch("/vary", headers: ["X-User": "alice"]).0.responseString, "answer 1", "same value: a hit")
        XCTAssertEqual(count("/vary"), 1)
        XCTAssertEqual(fetch("/vary", headers: ["X-User": "bob"]).0.responseString, "answer 2",
                       "another user never gets alice's answer")
        XCTAssertEqual(fetch("/vary").0.responseString, "answer 3", "a request without the field is another variant")
        XCTAssertEqual(count("/vary"), 3)
    }

    func testVaryValuesAreComparedAfterNormalisingListWhitespace() {
        routeCounting("/varylist", headers: [("Cache-Control", "max-age=3600"), ("Vary", "X-List")])
        fetch("/varylist", headers: ["X-List": "a,b"])
        XCTAssertEqual(fetch("/varylist", headers: ["X-List": "a, b"]).0.responseString, "answer 1")
        XCTAssertEqual(count("/varylist"), 1)
    }

    func testVaryStarIsNeverReused() {
        routeCounting("/varystar", headers: [("Cache-Control", "max-age=3600"), ("Vary", "*")])
        fetch("/varystar")
        XCTAssertEqual(fetch("/varystar").0.responseString, "answer 2")
    }

    /// The private-answer case: `Vary: Cookie` and two users' cookie storages.
    func testVaryCookieKeepsOneUsersAnswerFromAnother() throws {
        routeCounting("/me", headers: [("Cache-Control", "private, max-age=3600"), ("Vary", "Cookie")])
        let storage = CookieHandling.sharedStorage
        let url = self.url("/me")
        let cookie = try XCTUnwrap(HTTPCookie(properties: [.name: "session", .value: "alice", .domain: url.host!, .path: "/"]))
        storage.setCookie(cookie)
        defer { storage.deleteCookie(cookie) }
        XCTAssertEqual(fetch("/me").0.responseString, "answer 1")
        XCTAssertEqual(fetch("/me").0.responseString, "answer 1")
        let bob = try XCTUnwrap(HTTPCookie(properties: [.name: "session", .value: "bob", .domain: url.host!, .path: "/"]))
        storage.setCookie(bob)
        defer { storage.deleteCookie(bob) }
        XCTAssertEqual(fetch("/me").0.responseString, "answer 2", "bob's cookie: alice's answer is not his")
    }

    // MARK: - §3.2, §4.3.4 A 304 updates the stored header fields

    func testA304UpdatesTheStoredFieldsAndTheCallerSeesThem() {
        server.route("/updated") { request in
            if request.headers.first(name: "if-none-match") == "\"v1\"" {
                return [.head(status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=3600"), ("Test-Header", "b")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=0"), ("Test-Header", "a"),
                                                 ("Content-Length", "4")]), .body(Data("body".utf8)), .end]
        }
        XCTAssertEqual(fetch("/updated").0.response?.value(forHTTPHeaderField: "Test-Header"), "a")
        let (revalidated, _) = fetch("/updated")
        XCTAssertEqual(revalidated.responseString, "body")
        XCTAssertEqual(revalidated.response?.statusCode, 200)
        XCTAssertEqual(revalidated.response?.value(forHTTPHeaderField: "Test-Header"), "b", "the caller sees the merged head")
        XCTAssertEqual(revalidated.response?.value(forHTTPHeaderField: "Cache-Control"), "max-age=3600")
        let (hit, _) = fetch("/updated")
        XCTAssertEqual(count("/updated"), 2, "fresh for an hour now: the 304's max-age was stored")
        XCTAssertEqual(hit.response?.value(forHTTPHeaderField: "Test-Header"), "b")
    }

    /// §4.3.4: a 304 whose strong entity tag is not the stored one's selects
    /// nothing to update: the stored body is not relabelled, and the request
    /// goes out again without conditions.
    func testA304ForAnotherRepresentationIsNoConfirmation() throws {
        let plainRequests = Locked(0)
        server.route("/relabelled") { request in
            if request.headers.first(name: "if-none-match") == "\"a\"" {
                return [.head(status: 304, headers: [("ETag", "\"b\""), ("Cache-Control", "max-age=3600")]), .end]
            }
            let first = plainRequests.withLock { count -> Bool in
                count += 1
                return count == 1
            }
            let (tag, body) = first ? ("\"a\"", "one") : ("\"b\"", "two")
            return [.head(status: 200, headers: [("ETag", tag), ("Cache-Control", "max-age=0"), ("Content-Length", "3")]),
                    .body(Data(body.utf8)), .end]
        }
        XCTAssertEqual(fetch("/relabelled").0.responseString, "one")
        let (second, _) = fetch("/relabelled")
        XCTAssertEqual(second.responseString, "two", "not the stored body under the 304's tag")
        XCTAssertEqual(count("/relabelled"), 3)
        XCTAssertNil(server.requests.last?.headers.first(name: "if-none-match"), "asked again without conditions")

        // The rule itself: a weak tag matches weakly; no tag confirms what was asked about.
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:9/x"))
        let stored = CachedURLResponse(response: try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                                               headerFields: ["ETag": "\"a\""])), data: Data())
        func confirms(_ fields: [(name: String, value: String)]) -> Bool {
            CacheRules.confirmation(ReceivedResponse(url: url, statusCode: 304, statusLine: "HTTP/1.1 304 Not Modified", fields: fields), selects: stored)
        }
        XCTAssertTrue(confirms([("ETag", "\"a\"")]))
        XCTAssertTrue(confirms([("ETag", "W/\"a\"")]))
        XCTAssertFalse(confirms([("ETag", "\"b\"")]))
        XCTAssertTrue(confirms([]))
    }

    /// A revalidation redirected elsewhere does not carry the stored
    /// answer's validators there (they were the cache's, for this URL): the
    /// new place answers in full, not with a 304 the caller would get bare.
    func testARedirectedRevalidationAsksTheNewPlacePlainly() {
        let moved = Locked(false)
        server.route("/moving") { request in
            if moved.value {
                return [.head(status: 302, headers: [("Location", "/landed"), ("Content-Length", "0")]), .end]
            }
            moved.value = true
            return [.head(status: 200, headers: [("ETag", "\"m1\""), ("Cache-Control", "max-age=0"), ("Content-Length", "4")]),
                    .body(Data("old!".utf8)), .end]
        }
        server.route("/landed") { request in
            if request.headers.first(name: "if-none-match") != nil {
                return [.head(status: 304, headers: [("ETag", "\"m1\"")]), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "3")]), .body(Data("new".utf8)), .end]
        }
        fetch("/moving")
        let (second, _) = fetch("/moving")
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(second.responseString, "new")
        XCTAssertNil(server.requests.last?.headers.first(name: "if-none-match"), "the validators stayed behind")
    }

    /// A 304 whose fields say the response may no longer be stored removes
    /// the entry instead of refreshing it: the next request is unconditional.
    func testA304SayingNoStoreRemovesTheEntry() {
        server.route("/withdrawn") { request in
            if request.headers.first(name: "if-none-match") == "\"w1\"" {
                return [.head(status: 304, headers: [("ETag", "\"w1\""), ("Cache-Control", "no-store")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"w1\""), ("Cache-Control", "max-age=0"), ("Content-Length", "4")]),
                    .body(Data("body".utf8)), .end]
        }
        fetch("/withdrawn")
        let (revalidated, _) = fetch("/withdrawn")
        XCTAssertEqual(revalidated.responseString, "body", "the 304 still confirms the answer it was asked about")
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-none-match"), "\"w1\"")
        let (third, _) = fetch("/withdrawn")
        XCTAssertEqual(third.responseString, "body")
        XCTAssertEqual(count("/withdrawn"), 3)
        XCTAssertNil(server.requests.last?.headers.first(name: "if-none-match"), "nothing was left to revalidate")
    }

    // MARK: - §4.3.5 HEAD

    /// A `/path` answering GET with `getFields` (and a 4-byte body) and HEAD with `headFields`.
    private func routeWithHead(_ path: String, getFields: [(String, String)], headFields: [(String, String)]) {
        server.route(path) { request in
            if request.method == "HEAD" { return [.head(status: 200, headers: headFields), .end] }
            return [.head(status: 200, headers: getFields + [("Content-Length", "4")]), .body(Data("body".utf8)), .end]
        }
    }

    private func head(_ path: String) {
        let operation = HTTPRequestOperation(request: request(path, method: "HEAD"))
        XCTAssertNil(run(operation).error)
    }

    func testA200ToAHeadUpdatesTheStoredGetAnswer() {
        routeWithHead("/head-updated", getFields: [("ETag", "\"h1\""), ("Cache-Control", "max-age=0"), ("Template-A", "1")],
                      headFields: [("ETag", "\"h1\""), ("Cache-Control", "max-age=3600"), ("Template-A", "2"), ("Content-Length", "4")])
        fetch("/head-updated")
        head("/head-updated")
        let (hit, _) = fetch("/head-updated")
        XCTAssertEqual(count("/head-updated"), 2, "fresh for an hour after the HEAD: the GET was answered from the cache")
        XCTAssertEqual(hit.responseString, "body")
        XCTAssertEqual(hit.response?.value(forHTTPHeaderField: "Template-A"), "2", "the HEAD's fields replaced the stored ones")
        XCTAssertEqual(hit.response?.value(forHTTPHeaderField: "ETag"), "\"h1\"", "fields the HEAD left out are kept")
    }

    func testAHeadNamingAnotherRepresentationRemovesTheStoredAnswer() {
        let changes: [(path: String, head: [(String, String)])] = [
            ("/head-etag", [("ETag", "\"h2\""), ("Cache-Control", "max-age=3600")]),
            ("/head-modified", [("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT"), ("Cache-Control", "max-age=3600")]),
            ("/head-length", [("Content-Length", "5"), ("Cache-Control", "max-age=3600")]),
            ("/head-no-store", [("Cache-Control", "no-store")]),
        ]
        for change in changes {
            routeWithHead(change.path, getFields: [("ETag", "\"h1\""), ("Last-Modified", "Sun, 01 Nov 2026 00:00:00 GMT"),
                                                   ("Cache-Control", "max-age=3600")],
                          headFields: change.head)
            fetch(change.path)
            fetch(change.path)
            XCTAssertEqual(count(change.path), 1, "\(change.path): stored and fresh")
            head(change.path)
            fetch(change.path)
            XCTAssertEqual(count(change.path), 3, "\(change.path): the HEAD said the stored answer is not the current one")
            XCTAssertNil(server.requests.last?.headers.first(name: "if-none-match"), "\(change.path): removed, not revalidated")
        }
    }

    /// A HEAD under another security policy may remove a partition's answer
    /// but never rewrites what that partition is served.
    func testAHeadUnderAnotherPolicyDoesNotRewriteTheStoredAnswer() {
        routeWithHead("/head-partition", getFields: [("ETag", "\"p1\""), ("Cache-Control", "max-age=0"), ("Template-A", "1")],
                      headFields: [("ETag", "\"p1\""), ("Cache-Control", "max-age=3600"), ("Template-A", "2")])
        fetch("/head-partition")
        let other = HTTPRequestOperation(request: request("/head-partition", method: "HEAD"))
        other.securityPolicy = SecurityPolicy(pinningMode: .none)
        other.securityPolicy.validatesDomainName = false
        XCTAssertNil(run(other).error)
        let (again, _) = fetch("/head-partition")
        XCTAssertEqual(again.response?.value(forHTTPHeaderField: "Template-A"), "1", "revalidated, not refreshed by the other policy's HEAD")
        XCTAssertEqual(count("/head-partition"), 3)
    }

    // MARK: - One user's answers

    /// An answer to one `Authorization` is never served to a request with
    /// another or none; the same user's next request is still a hit.
    func testAnAnswerToOneAuthorizationIsNotServedToAnother() {
        server.route("/me") { request in
            let body = Data("for \(request.headers.first(name: "authorization") ?? "nobody")".utf8)
            return [.head(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Length", "\(body.count)")]), .body(body), .end]
        }
        XCTAssertEqual(fetch("/me", headers: ["Authorization": "Bearer u1"]).0.responseString, "for Bearer u1")
        XCTAssertEqual(fetch("/me", headers: ["Authorization": "Bearer u1"]).0.responseString, "for Bearer u1")
        XCTAssertEqual(count("/me"), 1, "the same user's answer is reused")
        XCTAssertEqual(fetch("/me", headers: ["Authorization": "Bearer u2"]).0.responseString, "for Bearer u2")
        XCTAssertEqual(fetch("/me").0.responseString, "for nobody")
        XCTAssertEqual(count("/me"), 3, "each other user's request went to the server")
    }

    /// An answer earned by answering the origin's challenge is not stored: a
    /// request without that credential is challenged, not served it.
    func testAnAnswerEarnedWithAChallengeCredentialIsNotServedToARequestWithoutIt() {
        server.route("/account") { request in
            guard let authorization = request.headers.first(name: "authorization") else {
                return [.head(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"r\""), ("Content-Length", "0")]), .end]
            }
            let body = Data("private to \(authorization)".utf8)
            return [.head(status: 200, headers: [("Cache-Control", "max-age=60"), ("Content-Length", "\(body.count)")]), .body(body), .end]
        }
        let (alice, _) = fetch("/account") { $0.credential = URLCredential(user: "alice", password: "pw", persistence: .none) }
        XCTAssertEqual(alice.response?.statusCode, 200)
        let (stranger, _) = fetch("/account")
        XCTAssertEqual(stranger.response?.statusCode, 401, "challenged, not given alice's answer")
        XCTAssertFalse(stranger.responseString?.contains("private") ?? false)
        XCTAssertEqual(count("/account"), 3)
    }

    // MARK: - §5.2.2.4 no-cache with a field list

    func testAQualifiedNoCacheWithholdsItsFieldsFromHitsButNotFromRevalidatedAnswers() {
        server.route("/qualified") { request in
            if request.headers.first(name: "if-none-match") == "\"q1\"" {
                return [.head(status: 304, headers: [("ETag", "\"q1\""), ("Cache-Control", "max-age=0, no-cache=\"set-token, x-other\""),
                                                     ("Set-Token", "fresh")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"q1\""), ("Cache-Control", "max-age=3600, no-cache=\"set-token, x-other\""),
                                                 ("Set-Token", "stale"), ("X-Other", "o"), ("X-Kept", "k"), ("Content-Length", "4")]),
                    .body(Data("body".utf8)), .end]
        }
        XCTAssertEqual(fetch("/qualified").0.response?.value(forHTTPHeaderField: "Set-Token"), "stale", "the server's own answer has it")
        let (hit, _) = fetch("/qualified")
        XCTAssertEqual(count("/qualified"), 1, "the rest of the response is reusable (RFC 9111 §5.2.2.4)")
        XCTAssertEqual(hit.responseString, "body")
        XCTAssertNil(hit.response?.value(forHTTPHeaderField: "Set-Token"), "a listed field is not sent unrevalidated")
        XCTAssertNil(hit.response?.value(forHTTPHeaderField: "X-Other"))
        XCTAssertEqual(hit.response?.value(forHTTPHeaderField: "X-Kept"), "k")
        // Revalidated (a request max-age=0), the answer may carry them again.
        let (revalidated, _) = fetch("/qualified", headers: ["Cache-Control": "max-age=0"])
        XCTAssertEqual(count("/qualified"), 2)
        XCTAssertEqual(revalidated.response?.value(forHTTPHeaderField: "Set-Token"), "fresh")
    }

    func testACommaInsideAQuotedArgumentDoesNotSplitTheDirective() {
        XCTAssertEqual(CacheRules.directives(in: #"max-age=60, no-cache="a, b", private, x="q\"t""#),
                       ["max-age=60", "no-cache=a, b", "private", #"x=q"t"#])
        XCTAssertEqual(CacheRules.directives(in: #"MAX-AGE="60""#), ["max-age=60"])
        XCTAssertEqual(CacheRules.directives(in: " , no-store ,"), ["no-store"])
    }

    /// The storability check reads the head's bytes: directive names without
    /// case, whole directives only, a comma inside quotes not splitting one.
    func testWhatMayBeStoredIsDecidedByWholeDirectives() throws {
        let request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1/s")))
        func mayStore(_ fields: [(name: String, value: String)], status: Int = 200) throws -> Bool {
            let head = ReceivedResponse(url: try XCTUnwrap(request.url), statusCode: status, statusLine: "HTTP/1.1 \(status) X", fields: fields)
            return CacheRules.mayStore(head, for: request)
        }
        XCTAssertTrue(try mayStore([("Cache-Control", "max-age=60")]))
        XCTAssertTrue(try mayStore([("cache-control", "PUBLIC")]))
        XCTAssertTrue(try mayStore([("Expires", "Thu, 01 Jan 2099 00:00:00 GMT")]))
        XCTAssertTrue(try mayStore([("ETag", "\"1\"")]))
        XCTAssertFalse(try mayStore([("ETag", "\"1\"")], status: 302), "no heuristic freshness for a 302")
        XCTAssertFalse(try mayStore([]), "nothing to judge freshness by")
        XCTAssertFalse(try mayStore([("Cache-Control", "max-age=60"), ("Cache-Control", " NO-STORE ")]))
        XCTAssertFalse(try mayStore([("Cache-Control", "max-age=60, no-store")]))
        XCTAssertTrue(try mayStore([("Cache-Control", #"max-age=60, no-cache="no-store, x""#)]), "no-store inside a quoted argument")
        XCTAssertTrue(try mayStore([("Cache-Control", "max-age=60, no-stored")]))
        XCTAssertFalse(try mayStore([("Cache-Control", "max-age"), ("Last-Modified", "x")], status: 302), "max-age without a value is no freshness")
        XCTAssertTrue(try mayStore([("Cache-Control", "no-store, must-understand, max-age=60")]))
        XCTAssertFalse(try mayStore([("Cache-Control", "no-store, Must-Understand, max-age=60")], status: 299))
        XCTAssertFalse(try mayStore([("Cache-Control", "max-age=60"), ("Vary", "Accept, *")]))
        XCTAssertTrue(try mayStore([("Cache-Control", "max-age=60"), ("Vary", "Accept, X-*")]))
    }

    /// §4.2.2: `public` makes any status heuristically cacheable; without it
    /// an unknown status has no freshness to be reused with.
    func testAPublicResponseOfAnyStatusGetsHeuristicFreshness() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let lastModified = formatter.string(from: Date().addingTimeInterval(-86_400))
        routeCounting("/public-599", status: 599, headers: [("Cache-Control", "public"), ("Last-Modified", lastModified)])
        XCTAssertEqual(fetch("/public-599").0.responseString, "answer 1")
        XCTAssertEqual(fetch("/public-599").0.responseString, "answer 1", "fresh for 10 % of a day: a hit")
        XCTAssertEqual(count("/public-599"), 1)
        routeCounting("/plain-599", status: 599, headers: [("Last-Modified", lastModified)])
        fetch("/plain-599")
        XCTAssertEqual(fetch("/plain-599").0.responseString, "answer 2", "not public: not reused")
    }

    // MARK: - §5.1 Age

    func testAHitCarriesItsAge() throws {
        routeCounting("/aged", headers: [("Cache-Control", "max-age=3600"), ("Age", "100")])
        fetch("/aged")
        let (hit, _) = fetch("/aged")
        XCTAssertEqual(count("/aged"), 1)
        let age = try XCTUnwrap(hit.response?.value(forHTTPHeaderField: "Age").flatMap { Int($0) })
        XCTAssertGreaterThanOrEqual(age, 100)
        XCTAssertLessThan(age, 100 + 60)
        routeCounting("/ageless", headers: [("Cache-Control", "max-age=3600")])
        fetch("/ageless")
        let generated = try XCTUnwrap(fetch("/ageless").0.response?.value(forHTTPHeaderField: "Age"), "a hit always carries Age")
        XCTAssertLessThan(try XCTUnwrap(Int(generated)), 60)
    }

    /// §5.1: an invalid Age is ignored (not read as a number, not "stale");
    /// of a list, the first member counts.
    func testAnInvalidAgeIsIgnoredAndAListCountsItsFirstMember() {
        for (index, invalid) in ["7200.0", "-7200", "abc", "1e9"].enumerated() {
            let path = "/ageinvalid\(index)"
            routeCounting(path, headers: [("Cache-Control", "max-age=3600"), ("Age", invalid)])
            fetch(path)
            XCTAssertEqual(fetch(path).0.responseString, "answer 1", "Age: \(invalid) is ignored: fresh by max-age")
        }
        routeCounting("/agelist", headers: [("Cache-Control", "max-age=3600"), ("Age", "7200, 0")])
        fetch("/agelist")
        XCTAssertEqual(fetch("/agelist").0.responseString, "answer 2", "7200 (the first member) is over max-age")
        routeCounting("/agegood", headers: [("Cache-Control", "max-age=3600"), ("Age", "60")])
        fetch("/agegood")
        XCTAssertEqual(fetch("/agegood").0.responseString, "answer 1")
    }

    // MARK: - §3.1 What is stored

    func testFieldsNamedInConnectionAreNotStored() {
        routeCounting("/hop", headers: [("Cache-Control", "max-age=3600"), ("Connection", "X-Hop"), ("X-Hop", "secret"),
                                        ("X-Kept", "yes")])
        XCTAssertEqual(fetch("/hop").0.response?.value(forHTTPHeaderField: "X-Hop"), "secret", "the live answer has it")
        let (hit, _) = fetch("/hop")
        XCTAssertEqual(count("/hop"), 1)
        XCTAssertNil(hit.response?.value(forHTTPHeaderField: "X-Hop"))
        XCTAssertEqual(hit.response?.value(forHTTPHeaderField: "X-Kept"), "yes")
    }

    /// §3.1: a proxy's authentication fields are not stored (the cache's key
    /// does not name the proxy), in the stored response or its kept head.
    func testAProxysAuthenticationFieldsAreNotStored() throws {
        routeCounting("/proxied", headers: [("Cache-Control", "max-age=3600"), ("Proxy-Authentication-Info", "nextnonce=\"a\""),
                                            ("Proxy-Authenticate", "Basic realm=\"p\""), ("X-Kept", "yes")])
        XCTAssertNotNil(fetch("/proxied").0.response?.value(forHTTPHeaderField: "Proxy-Authentication-Info"), "the live answer has it")
        let (hit, _) = fetch("/proxied")
        XCTAssertEqual(count("/proxied"), 1)
        XCTAssertNil(hit.response?.value(forHTTPHeaderField: "Proxy-Authentication-Info"))
        XCTAssertNil(hit.response?.value(forHTTPHeaderField: "Proxy-Authenticate"))
        XCTAssertEqual(hit.response?.value(forHTTPHeaderField: "X-Kept"), "yes")
        // The head kept beside the stored response (for `afn -i`) leaves them out too.
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:9/proxied"))
        let head = ReceivedResponse(url: url, statusCode: 200, statusLine: "HTTP/1.1 200 OK",
                                    fields: [("Proxy-Authentication-Info", "x"), ("X-Kept", "yes"), ("proxy-authenticate", "Basic")])
        let response = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["X-Kept": "yes"]))
        var userInfo: [AnyHashable: Any] = [:]
        CacheRules.keepReceivedHead(head, of: response, in: &userInfo)
        let kept = try XCTUnwrap(userInfo[CacheRules.receivedHeadKey] as? String)
        XCTAssertEqual(kept, "HTTP/1.1 200 OK\r\nX-Kept: yes")
    }

    /// RFC 9111 §3, RFC 9110 §15.1: more than 200 is cacheable.
    func testOtherCacheableStatusesAreStored() {
        for (index, status) in [203, 300, 301, 404, 410, 501].enumerated() {
            let path = "/status\(index)"
            routeCounting(path, status: status, headers: [("Cache-Control", "max-age=3600"), ("Location", "/elsewhere")])
            let (first, _) = fetch(path) { $0.setRedirectResponseBlock { _, _, _ in nil } }
            XCTAssertEqual(first.response?.statusCode, status)
            let (second, _) = fetch(path) { $0.setRedirectResponseBlock { _, _, _ in nil } }
            XCTAssertEqual(second.response?.statusCode, status, "\(status)")
            XCTAssertEqual(second.responseString, "answer 1", "\(status) is served from the cache")
            XCTAssertEqual(count(path), 1, "\(status)")
        }
    }

    func testMustUnderstandWithAnUnknownStatusIsNotStored() {
        routeCounting("/mu", status: 299, headers: [("Cache-Control", "max-age=3600, must-understand")])
        fetch("/mu")
        fetch("/mu")
        XCTAssertEqual(count("/mu"), 2)
    }

    /// §5.2.2.3: must-understand with a known status overrides no-store.
    func testMustUnderstandWithAKnownStatusOverridesNoStore() {
        routeCounting("/mu200", headers: [("Cache-Control", "max-age=3600, no-store, must-understand")])
        fetch("/mu200")
        XCTAssertEqual(fetch("/mu200").0.responseString, "answer 1")
        XCTAssertEqual(count("/mu200"), 1)
        routeCounting("/nostore", headers: [("Cache-Control", "max-age=3600, no-store")])
        fetch("/nostore")
        XCTAssertEqual(fetch("/nostore").0.responseString, "answer 2", "no-store alone still stores nothing")
    }

    // MARK: - §4.4 A newer answer that cannot be stored

    func testANewerAnswerWrittenToAStreamLeavesNoOlderOneToBeServed() {
        routeCounting("/replaced", headers: [("Cache-Control", "max-age=3600")])
        fetch("/replaced")
        var reload = request("/replaced")
        reload.cachePolicy = .reloadIgnoringLocalCacheData
        let streamed = HTTPRequestOperation(request: reload)
        streamed.outputStream = OutputStream(toMemory: ())
        XCTAssertNil(run(streamed).error)
        let third = fetch("/replaced").0.responseString
        XCTAssertNotEqual(third, "answer 1", "answer 2 replaced it")
        XCTAssertTrue(third == "answer 2" || third == "answer 3", String(describing: third))
    }

    // MARK: - §5.2.1 Request directives

    func testRequestDirectives() {
        routeCounting("/directives", headers: [("Cache-Control", "max-age=3600")])
        fetch("/directives")
        XCTAssertEqual(fetch("/directives", headers: ["Cache-Control": "no-cache"]).0.responseString, "answer 2")
        XCTAssertEqual(fetch("/directives", headers: ["Cache-Control": "max-age=0"]).0.responseString, "answer 3")
        XCTAssertEqual(fetch("/directives", headers: ["Pragma": "no-cache"]).0.responseString, "answer 4")
        XCTAssertEqual(fetch("/directives", headers: ["Cache-Control": "min-fresh=7200"]).0.responseString, "answer 5",
                       "not fresh for two more hours")
        XCTAssertEqual(fetch("/directives", headers: ["Cache-Control": "max-age=600"]).0.responseString, "answer 5",
                       "young enough")
        XCTAssertEqual(count("/directives"), 5)
    }

    /// §1.2.2: delta-seconds are digits; anything else is not a number of
    /// seconds (a response's max-age then makes it stale, a request's
    /// directive is ignored).
    func testDeltaSecondsAreDigitsOnly() throws {
        for text in ["inf", "+60", "1e3", "60.5", "-1", "", "0x10", " 6"] {
            XCTAssertNil(CacheRules.deltaSeconds(text), text)
        }
        XCTAssertEqual(CacheRules.deltaSeconds("0"), 0)
        XCTAssertEqual(CacheRules.deltaSeconds("3600"), 3600)
        XCTAssertEqual(CacheRules.deltaSeconds("99999999999999999999999"), 1e23)
        func lifetime(_ directive: String) -> TimeInterval? {
            CacheFreshness(directives: [directive], date: nil, expires: nil, lastModified: nil, age: nil, etag: nil, receivedAt: Date()).lifetime
        }
        XCTAssertEqual(lifetime("max-age=inf"), 0)
        XCTAssertEqual(lifetime("max-age=1e3"), 0)
        XCTAssertEqual(lifetime("max-age=60"), 60)
        func directives(_ value: String) throws -> RequestDirectives {
            var request = URLRequest(url: try XCTUnwrap(URL(string: "http://127.0.0.1/")))
            request.setValue(value, forHTTPHeaderField: "Cache-Control")
            return RequestDirectives(request)
        }
        XCTAssertTrue(try directives("max-stale=abc").maxStale == nil, "an invalid max-stale accepts no staleness")
        XCTAssertEqual(try directives("max-stale").maxStale, .some(TimeInterval?.none))
        XCTAssertEqual(try directives("max-stale=30").maxStale, .some(TimeInterval?.some(30)))
        XCTAssertNil(try directives("max-age=1e3").maxAge)
        XCTAssertNil(try directives("min-fresh=+5").minFresh)
    }

    func testNoStoreInTheRequestStoresNothing() {
        routeCounting("/nostore", headers: [("Cache-Control", "max-age=3600")])
        fetch("/nostore", headers: ["Cache-Control": "no-store"])
        XCTAssertEqual(fetch("/nostore").0.responseString, "answer 2")
    }

    func testMaxStaleAcceptsAStaleAnswerUnlessItMustBeRevalidated() {
        routeCounting("/stale", headers: [("Cache-Control", "max-age=1"), ("Age", "100")])
        fetch("/stale")
        XCTAssertEqual(fetch("/stale", headers: ["Cache-Control": "max-stale=1000"]).0.responseString, "answer 1")
        XCTAssertEqual(fetch("/stale", headers: ["Cache-Control": "max-stale=10"]).0.responseString, "answer 2",
                       "stale by ~99 s, over 10")
        routeCounting("/muststale", headers: [("Cache-Control", "max-age=1, must-revalidate"), ("Age", "100")])
        fetch("/muststale")
        XCTAssertEqual(fetch("/muststale", headers: ["Cache-Control": "max-stale"]).0.responseString, "answer 2")
    }

    func testOnlyIfCachedWithNothingStoredIsA504() {
        routeCounting("/uncached", headers: [("Cache-Control", "max-age=3600")])
        let (operation, _) = fetch("/uncached", headers: ["Cache-Control": "only-if-cached"])
        XCTAssertEqual(operation.response?.statusCode, 504)
        XCTAssertEqual(count("/uncached"), 0)
        fetch("/uncached")
        XCTAssertEqual(fetch("/uncached", headers: ["Cache-Control": "only-if-cached"]).0.responseString, "answer 1")
    }

    // MARK: - Dates

    func testAMonthInCapitalsIsStillAMonth() {
        routeCounting("/caps", headers: [("Expires", "Thu, 01 AUG 2099 00:00:00 GMT")])
        fetch("/caps")
        XCTAssertEqual(fetch("/caps").0.responseString, "answer 1")
    }

    // MARK: - Ordering with a disk-only cache

    /// Each request started after another sees that one's stored result,
    /// whatever the memory capacity (before: the 1st, 2nd, 1st, 2nd answers).
    func testADiskOnlyCacheAnswersInOrder() throws {
        routeCounting("/disk", headers: [("Cache-Control", "max-age=3600")])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-disk-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 0, diskCapacity: 50 << 20, diskPath: directory.path)
        let manager = makeManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        var bodies: [String] = []
        for _ in 0..<4 {
            let probe = makeProbe()
            let task = manager.dataTask(with: request("/disk"), uploadProgress: nil, downloadProgress: nil, completionHandler: probe.data)
            let outcome = run(task, probe)
            bodies.append((outcome.object as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "-")
        }
        XCTAssertEqual(bodies, Array(repeating: "answer 1", count: 4))
        XCTAssertEqual(count("/disk"), 1)
    }
}
