@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `stale-while-revalidate` (RFC 5861 §3), from the RFC's text. Entries are
/// made stale at once with `Age` (`max-age=1`, `Age: 10`), so no test waits
/// for a clock; the background request is observed on the scripted server.
final class StaleWhileRevalidateTests: SessionTasksTestCase {
    private func count(_ path: String) -> Int { server.requests.filter { $0.uri == path }.count }
    private func conditionals(_ path: String) -> [ScriptedServer.Request] {
        server.requests.filter { $0.uri == path && $0.headers.first(name: "if-none-match") != nil }
    }

    @discardableResult
    private func fetch(_ path: String, prepare: (inout URLRequest) -> Void = { _ in },
                       configure: (HTTPRequestOperation) -> Void = { _ in }) -> HTTPRequestOperation {
        var request = self.request(path)
        prepare(&request)
        let operation = HTTPRequestOperation(request: request)
        operation.responseSerializer.acceptableStatusCodes = nil
        configure(operation)
        XCTAssertNil(run(operation).error)
        return operation
    }

    /// Waits (bounded) until the server saw `requests` requests for `path`
    /// and no background revalidation of it is under way.
    private func waitForRevalidation(_ path: String, requests: Int, file: StaticString = #filePath, line: UInt = #line) {
        let key = url(path).absoluteString
        XCTAssertTrue(spin(until: { count(path) >= requests && !StaleRevalidation.isRunning(key: key) }),
                      "the background revalidation ended", file: file, line: line)
    }

    /// Served stale at once; one conditional request behind it, even for two
    /// requests in the window; its 304 updates the entry the third one gets.
    func testAStaleAnswerInItsWindowIsServedAtOnceAndRevalidatedOnce() {
        let release = DispatchSemaphore(value: 0)
        let heldTooLong = Locked(false)
        server.route("/swr") { request in
            if request.headers.first(name: "if-none-match") == "\"s1\"" {
                // Held until both stale answers are in: a library that waited
                // for this answer would keep the test waiting here.
                if release.wait(timeout: .now() + 10) == .timedOut { heldTooLong.value = true }
                return [.head(status: 304, headers: [("ETag", "\"s1\""), ("Cache-Control", "max-age=3600"), ("X-Updated", "yes")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"s1\""), ("Cache-Control", "max-age=1, stale-while-revalidate=3600"),
                                                 ("Age", "10"), ("Content-Length", "5")]), .body(Data("first".utf8)), .end]
        }
        XCTAssertEqual(fetch("/swr").responseString, "first")
        let stale = fetch("/swr")
        let again = fetch("/swr")
        release.signal()
        XCTAssertFalse(heldTooLong.value, "the stale answers did not wait for the revalidation")
        for answer in [stale, again] {
            XCTAssertEqual(answer.responseString, "first")
            XCTAssertEqual(answer.response?.statusCode, 200)
            XCTAssertGreaterThanOrEqual(answer.response?.value(forHTTPHeaderField: "Age").flatMap { Int($0) } ?? -1, 10)
        }
        waitForRevalidation("/swr", requests: 2)
        XCTAssertEqual(conditionals("/swr").count, 1, "one background revalidation per entry at a time")
        let updated = fetch("/swr")
        XCTAssertEqual(count("/swr"), 2, "fresh again after the 304: a hit")
        XCTAssertEqual(updated.responseString, "first")
        XCTAssertEqual(updated.response?.value(forHTTPHeaderField: "X-Updated"), "yes", "the 304's fields were merged")
        XCTAssertEqual(updated.response?.value(forHTTPHeaderField: "Cache-Control"), "max-age=3600")
    }

    /// A 200 to the background request replaces the entry, without running
    /// the operation's will-cache block (user code).
    func testABackground200ReplacesTheEntryWithoutUserBlocks() {
        let served = Locked(0)
        server.route("/replace") { _ in
            let number = served.withLock { value -> Int in
                value += 1
                return value
            }
            let control = number == 1 ? "max-age=1, stale-while-revalidate=3600" : "max-age=3600"
            return [.head(status: 200, headers: [("ETag", "\"r\(number)\""), ("Cache-Control", control), ("Age", number == 1 ? "10" : "0"),
                                                 ("Content-Length", "8")]), .body(Data("answer \(number)".utf8)), .end]
        }
        let willCache = Locked(0)
        let counting: (HTTPRequestOperation) -> Void = { operation in
            operation.setCacheResponseBlock { _, proposal in
                willCache.withLock { $0 += 1 }
                return proposal
            }
        }
        XCTAssertEqual(fetch("/replace", configure: counting).responseString, "answer 1")
        XCTAssertEqual(fetch("/replace", configure: counting).responseString, "answer 1", "served stale")
        waitForRevalidation("/replace", requests: 2)
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-none-match"), "\"r1\"", "a conditional request")
        XCTAssertEqual(fetch("/replace").responseString, "answer 2")
        XCTAssertEqual(count("/replace"), 2)
        XCTAssertEqual(willCache.value, 1, "only the foreground answer went through the block")
    }

    /// The background request runs on a driver whose answers to follow-ups
    /// are always no: a redirect is not followed, a challenge not answered,
    /// and neither (nor an error) changes the entry, which stays stale.
    func testABackgroundRedirectChallengeOrErrorChangesNothingAndIsNotFollowed() {
        for (path, head) in [("/swr-302", [(name: "Location", value: "/elsewhere")]),
                             ("/swr-401", [(name: "WWW-Authenticate", value: "Basic realm=\"r\"")]),
                             ("/swr-500", [])] as [(String, [(name: String, value: String)])] {
            let status = Int(path.suffix(3)) ?? 500
            server.route(path) { request in
                if request.headers.first(name: "if-none-match") != nil {
                    return [.head(status: status, headers: head + [("Content-Length", "4")]), .body(Data("nope".utf8)), .end]
                }
                return [.head(status: 200, headers: [("ETag", "\"e\""), ("Cache-Control", "max-age=1, stale-while-revalidate=3600"),
                                                     ("Age", "10"), ("Content-Length", "5")]), .body(Data("first".utf8)), .end]
            }
            XCTAssertEqual(fetch(path).responseString, "first", path)
            XCTAssertEqual(fetch(path).responseString, "first", "\(path): served stale")
            waitForRevalidation(path, requests: 2)
            XCTAssertEqual(fetch(path).responseString, "first", "\(path): the entry is unchanged and still stale")
            waitForRevalidation(path, requests: 3)
            XCTAssertEqual(conditionals(path).count, 2, "\(path): each stale answer revalidated again in the background")
        }
        XCTAssertEqual(count("/elsewhere"), 0, "the redirect was not followed")
    }

    /// Past the window the request revalidates before it is answered.
    func testOutsideTheWindowTheRequestWaitsForTheServer() {
        let served = Locked(0)
        server.route("/late") { _ in
            let number = served.withLock { value -> Int in
                value += 1
                return value
            }
            return [.head(status: 200, headers: [("ETag", "\"l\(number)\""), ("Cache-Control", "max-age=1, stale-while-revalidate=10"),
                                                 ("Age", "100"), ("Content-Length", "8")]), .body(Data("answer \(number)".utf8)), .end]
        }
        fetch("/late")
        XCTAssertEqual(fetch("/late").responseString, "answer 2")
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-none-match"), "\"l1\"")
    }

    /// `must-revalidate` and a request's `no-cache` keep a stale answer from being served.
    func testMustRevalidateAndRequestNoCacheOverrideTheWindow() {
        let served = Locked(0)
        server.route("/strict") { _ in
            let number = served.withLock { value -> Int in
                value += 1
                return value
            }
            return [.head(status: 200, headers: [("Cache-Control", "max-age=1, stale-while-revalidate=3600, must-revalidate"),
                                                 ("Age", "10"), ("Content-Length", "8")]), .body(Data("answer \(number)".utf8)), .end]
        }
        fetch("/strict")
        XCTAssertEqual(fetch("/strict").responseString, "answer 2")
        server.route("/asked") { request in
            [.head(status: 200, headers: [("Cache-Control", "max-age=1, stale-while-revalidate=3600"), ("Age", "10"),
                                          ("Content-Length", "1")]), .body(Data("\(request.headers.first(name: "cache-control") ?? "-")".prefix(1).utf8)), .end]
        }
        fetch("/asked")
        let noCache = fetch("/asked", prepare: { $0.setValue("no-cache", forHTTPHeaderField: "Cache-Control") })
        XCTAssertEqual(noCache.responseString, "n", "answered by the server")
    }

    /// The background request sends cookies as the request would:
    /// `httpShouldHandleCookies = false` sends and stores none.
    func testTheBackgroundRequestHonoursHTTPShouldHandleCookies() throws {
        let storage = CookieHandling.sharedStorage
        let cookie = try XCTUnwrap(HTTPCookie(properties: [.name: "swr", .value: "1", .domain: url("/").host!, .path: "/"]))
        storage.setCookie(cookie)
        defer {
            storage.deleteCookie(cookie)
            for set in storage.cookies(for: url("/")) ?? [] where set.name == "background" { storage.deleteCookie(set) }
        }
        let route: ScriptedServer.Route = { request in
            let fields = [("ETag", "\"c1\""), ("Cache-Control", "max-age=1, stale-while-revalidate=3600"), ("Age", "10")]
            if request.headers.first(name: "if-none-match") != nil {
                return [.head(status: 304, headers: fields + [("Set-Cookie", "background=1")]), .end]
            }
            return [.head(status: 200, headers: fields + [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
        }
        server.route("/cookies", route)
        server.route("/withcookies", route)
        let noCookies: (inout URLRequest) -> Void = { $0.httpShouldHandleCookies = false }
        fetch("/cookies", prepare: noCookies)
        fetch("/cookies", prepare: noCookies)
        waitForRevalidation("/cookies", requests: 2)
        let background = try XCTUnwrap(conditionals("/cookies").first)
        XCTAssertNil(background.headers.first(name: "cookie"), "no Cookie for a request that handles none")
        XCTAssertFalse((storage.cookies(for: url("/")) ?? []).contains { $0.name == "background" }, "nor is its Set-Cookie stored")
        fetch("/withcookies")
        fetch("/withcookies")
        waitForRevalidation("/withcookies", requests: 2)
        // Other suites may leave cookies for this host in the shared storage: ours must be among those sent.
        let sent = try XCTUnwrap(conditionals("/withcookies").first).headers.first(name: "cookie") ?? ""
        XCTAssertTrue(sent.components(separatedBy: "; ").contains("swr=1"), sent)
        XCTAssertTrue((storage.cookies(for: url("/")) ?? []).contains { $0.name == "background" }, "its Set-Cookie is stored")
    }

    /// The background request is the request that matched the variant
    /// (its `Vary` fields as sent), and its answer is stored for that variant.
    func testTheBackgroundRequestKeepsTheVariant() {
        server.route("/variant") { request in
            let user = request.headers.first(name: "x-user") ?? "-"
            if request.headers.first(name: "if-none-match") != nil {
                return [.head(status: 200, headers: [("Vary", "X-User"), ("Cache-Control", "max-age=3600"), ("ETag", "\"\(user)2\""),
                                                     ("Content-Length", "\(user.utf8.count + 1)")]), .body(Data("\(user)2".utf8)), .end]
            }
            return [.head(status: 200, headers: [("Vary", "X-User"), ("Cache-Control", "max-age=1, stale-while-revalidate=3600"),
                                                 ("Age", "10"), ("ETag", "\"\(user)1\""), ("Content-Length", "\(user.utf8.count + 1)")]),
                    .body(Data("\(user)1".utf8)), .end]
        }
        let alice: (inout URLRequest) -> Void = { $0.setValue("alice", forHTTPHeaderField: "X-User") }
        XCTAssertEqual(fetch("/variant", prepare: alice).responseString, "alice1")
        XCTAssertEqual(fetch("/variant", prepare: alice).responseString, "alice1", "served stale")
        waitForRevalidation("/variant", requests: 2)
        XCTAssertEqual(conditionals("/variant").first?.headers.first(name: "x-user"), "alice")
        XCTAssertEqual(fetch("/variant", prepare: alice).responseString, "alice2", "alice's variant was replaced")
        XCTAssertEqual(fetch("/variant", prepare: { $0.setValue("bob", forHTTPHeaderField: "X-User") }).responseString, "bob1",
                       "bob never gets alice's answer")
        XCTAssertEqual(count("/variant"), 3)
    }

    /// A session's own cache (and its cookie settings) are the ones revalidated.
    func testASessionTaskRevalidatesInItsConfigurationsCache() throws {
        server.route("/session") { request in
            if request.headers.first(name: "if-none-match") == "\"t1\"" {
                return [.head(status: 304, headers: [("ETag", "\"t1\""), ("Cache-Control", "max-age=3600"), ("X-Updated", "yes")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"t1\""), ("Cache-Control", "max-age=1, stale-while-revalidate=3600"),
                                                 ("Age", "10"), ("Content-Length", "4")]), .body(Data("task".utf8)), .end]
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-swr-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = URLSessionConfiguration.default
        let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 16 << 20, diskPath: directory.path)
        configuration.urlCache = cache
        let manager = makeManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        var heads: [HTTPURLResponse?] = []
        for step in 0..<3 {
            if step == 2 { waitForRevalidation("/session", requests: 2) }
            let probe = makeProbe()
            let task = manager.dataTask(with: request("/session"), uploadProgress: nil, downloadProgress: nil, completionHandler: probe.data)
            let outcome = run(task, probe)
            XCTAssertEqual((outcome.object as? Data).map { String(decoding: $0, as: UTF8.self) }, "task")
            heads.append(task.response as? HTTPURLResponse)
        }
        XCTAssertEqual(count("/session"), 2)
        XCTAssertNil(heads[1]?.value(forHTTPHeaderField: "X-Updated"), "the stale answer")
        XCTAssertEqual(heads[2]?.value(forHTTPHeaderField: "X-Updated"), "yes", "the session's cache entry was updated")
        if case .entry = CacheIndex.index(for: URLCache.shared).lookup(url("/session").absoluteString) {
            XCTFail("nothing went to URLCache.shared")
        }
    }
}
