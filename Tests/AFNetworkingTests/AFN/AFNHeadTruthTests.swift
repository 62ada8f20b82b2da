import Foundation
import XCTest

/// `afn get -i/-v` print what went over the wire, as curl does: the server's
/// status line and reason phrase, its header fields in order and case, the
/// cache's conditional request and the 304 that answered it, and each retry;
/// `--no-cache` bypasses the cache (which `--help` names). The real binary
/// against the in-process server, with a cache directory of the test's own.
final class AFNHeadTruthTests: OperationTestCase {
    private var cacheHome: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cacheHome = FileManager.default.temporaryDirectory.appendingPathComponent("afn-cache-home-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: cacheHome, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: cacheHome)
        super.tearDown()
    }

    private func afn(_ arguments: [String], noting: String? = nil, whenNoted: (@Sendable () -> Void)? = nil) throws -> AFNTool.Run {
        try AFNTool.run(arguments, timeout: 30, environment: ["XDG_CACHE_HOME": cacheHome.path, "HOME": cacheHome.path],
                        noting: noting, whenNoted: whenNoted)
    }

    func testIncludePrintsTheStatusLineAndFieldsAsTheServerSentThem() throws {
        server.route("/teapot") { _ in
            [.headWithReason(status: 418, reason: "I'M A TEAPOT",
                             headers: [("X-Zeta", "1"), ("ETag", "\"t1\""), ("x-alpha", "2"), ("Content-Length", "3")]),
             .body(Data("tea".utf8)), .end]
        }
        let run = try afn(["get", "-i", url("/teapot").absoluteString])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.output.hasPrefix("HTTP/1.1 418 I'M A TEAPOT\r\n"), "lines end with CRLF, as curl prints them: \(run.output.debugDescription)")
        let head = run.output.components(separatedBy: "\r\n\r\n").first ?? ""
        let lines = head.components(separatedBy: "\r\n")
        XCTAssertEqual(lines.first, "HTTP/1.1 418 I'M A TEAPOT", "the reason phrase as sent, not a table's: \(head)")
        let names = lines.dropFirst().compactMap { $0.split(separator: ":").first.map(String.init) }
        let zeta = names.firstIndex(of: "X-Zeta"), etag = names.firstIndex(of: "ETag"), alpha = names.firstIndex(of: "x-alpha")
        XCTAssertNotNil(etag, "ETag in its own case: \(names)")
        XCTAssertNotNil(zeta)
        XCTAssertNotNil(alpha)
        if let zeta, let etag, let alpha { XCTAssertTrue(zeta < etag && etag < alpha, "in the order sent: \(names)") }
        XCTAssertTrue(run.output.hasSuffix("\r\n\r\ntea"), run.output)
    }

    func testARevalidatedAnswerShowsTheConditionalRequestAndThe304() throws {
        let body = Data("cached body".utf8)
        server.route("/fresh-check") { request in
            if request.headers.first(name: "if-none-match") == "\"c1\"" {
                return [.head(status: 304, headers: [("ETag", "\"c1\""), ("Cache-Control", "no-cache")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"c1\""), ("Cache-Control", "no-cache"), ("Content-Type", "text/plain"),
                                                 ("Content-Length", "\(body.count)")]), .body(body), .end]
        }
        let target = url("/fresh-check").absoluteString
        let first = try afn(["get", target])
        XCTAssertEqual(first.stdout, body, first.stderr)

        let second = try afn(["get", "-i", "-v", target])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-none-match"), "\"c1\"", "the second run revalidated")
        XCTAssertTrue(second.stderr.contains("> If-None-Match: \"c1\""), "the conditional field as sent: \(second.stderr)")
        XCTAssertTrue(second.stderr.contains("< HTTP/1.1 304"), "the server's answer: \(second.stderr)")
        XCTAssertTrue(second.output.hasPrefix("HTTP/1.1 304"), "-i shows the 304 first: \(second.output)")
        XCTAssertTrue(second.output.hasSuffix("\r\n\r\ncached body"), second.output)

        let bypass = try afn(["get", "-v", "--no-cache", target])
        XCTAssertEqual(bypass.stdout, body, bypass.stderr)
        XCTAssertNil(server.requests.last?.headers.first(name: "if-none-match"), "--no-cache sends no conditional request")
        XCTAssertTrue(bypass.stderr.contains("< HTTP/1.1 200"), bypass.stderr)
    }

    /// A cached answer's head is printed as the server sent it when it was
    /// stored — status line, fields in order and case, `Connection` too —
    /// not rebuilt from the stored response (sorted, `Etag`, no `Connection`).
    func testACachedAnswerPrintsItsStoredHeadAsReceived() throws {
        let body = Data("stored".utf8)
        server.route("/stored-head") { request in
            if request.headers.first(name: "if-none-match") == "\"s1\"" {
                return [.head(status: 304, headers: [("ETag", "\"s1\"")]), .end]
            }
            return [.headWithReason(status: 200, reason: "Fine Thanks",
                                    headers: [("X-Zeta", "1"), ("ETag", "\"s1\""), ("Connection", "keep-alive"), ("x-alpha", "2"),
                                              ("Content-Length", "\(body.count)")]),
                    .body(body), .end]
        }
        let target = url("/stored-head").absoluteString
        XCTAssertEqual(try afn(["get", target]).stdout, body)

        let second = try afn(["get", "-i", "-v", target])
        XCTAssertEqual(second.status, 0, second.stderr)
        let heads = second.output.components(separatedBy: "\r\n\r\n")
        XCTAssertEqual(heads.count, 3, "the 304, the stored head, the body: \(second.output)")
        XCTAssertTrue(heads.first?.hasPrefix("HTTP/1.1 304") == true, second.output)
        let stored = heads.count > 1 ? heads[1].components(separatedBy: "\r\n") : []
        let expected = ["HTTP/1.1 200 Fine Thanks", "X-Zeta: 1", "ETag: \"s1\"", "Connection: keep-alive", "x-alpha: 2", "Content-Length: 6"]
        XCTAssertEqual(Array(stored.prefix(expected.count)), expected, "the stored head as received: \(second.output)")
        XCTAssertEqual(heads.last, "stored")
        XCTAssertTrue(second.stderr.contains("* HTTP/1.1 200 Fine Thanks\n* X-Zeta: 1\n* ETag: \"s1\""), second.stderr)
    }

    /// `-v` prints a head when it arrives, not once the body is in: here the
    /// server holds the body back until afn's stderr shows the head (at most
    /// 20 s), so an afn that printed the head only with the body would get
    /// the body from the timeout, not from the head. An order, not a time
    /// from the launch (which a loaded machine stretches).
    func testVerbosePrintsTheHeadWhenItArrives() throws {
        let headPrinted = Locked(false)
        let releasedByTheHead = Locked(false)
        let headWasPrinted: @Sendable () -> Bool = {
            guard headPrinted.value else { return false }
            releasedByTheHead.value = true
            return true
        }
        server.route("/slow-body") { _ in
            [.head(status: 200, headers: [("Content-Length", "4")]), .waitUntil(headWasPrinted, timeout: 20),
             .body(Data("late".utf8)), .end]
        }
        let run = try afn(["get", "-v", "--no-cache", url("/slow-body").absoluteString], noting: "< HTTP/1.1 200",
                          whenNoted: { headPrinted.value = true })
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.output, "late")
        XCTAssertNotNil(run.notedAfter, "the head was printed: \(run.stderr)")
        XCTAssertTrue(releasedByTheHead.value, "printed when it arrived, before the body was sent: \(run.stderr)")
    }

    /// `-v` leaves `--max-redirs` in force (its own redirect block replaced
    /// the limit's, so every redirect was followed).
    func testVerboseKeepsTheRedirectLimit() throws {
        server.respond("/hop", status: 302, headers: [("Location", "/landing")], body: Data("moved".utf8))
        server.respond("/landing", body: Data("landed".utf8))
        let run = try afn(["get", "-v", "--no-cache", "--max-redirs", "0", url("/hop").absoluteString])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.output, "moved", "the 3xx is the response")
        XCTAssertFalse(server.requests.contains { $0.uri == "/landing" }, "the redirect was not followed")
        XCTAssertTrue(run.stderr.contains("* not following the redirect"), run.stderr)
    }

    func testVerboseShowsEachRetry() throws {
        let attempts = Locked(0)
        server.route("/flaky") { _ in
            let attempt = attempts.increment()
            return attempt == 1
                ? [.head(status: 503, headers: [("Retry-After", "0"), ("Content-Length", "0")]), .end]
                : [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
        }
        let target = url("/flaky").absoluteString
        let run = try afn(["get", "-v", "--no-cache", "--retry", "2", target])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.output, "ok")
        XCTAssertEqual(attempts.value, 2)
        XCTAssertEqual(run.stderr.components(separatedBy: "> GET \(target)").count - 1, 2, "both attempts are shown: \(run.stderr)")
        XCTAssertTrue(run.stderr.contains("* retry in 0.0 s (Retry-After)"), run.stderr)
    }

    func testHelpSaysThatACacheExistsAndWhere() throws {
        let run = try afn(["get", "--help"])
        XCTAssertTrue(run.output.contains("--no-cache"), run.output)
        XCTAssertTrue(run.output.contains("org.swift.foundation.URLCache/afn"), run.output)
    }
}
