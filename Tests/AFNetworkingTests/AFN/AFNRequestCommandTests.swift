import Foundation
import XCTest

/// `afn get`, `afn post` and `afn put`, the real binary against nginx, httpbin
/// and a scripted server: what they print and the curl-style exit statuses.
final class AFNRequestCommandTests: XCTestCase {
    func testGetWithIncludePrintsTheHeadThenTheBody() throws {
        let nginx = try SharedServers.nginx()
        let run = try AFNTool.run(["get", "-i", nginx.httpURL.appendingPathComponent("1k.bin").absoluteString])
        XCTAssertEqual(run.status, 0, run.stderr)
        let text = run.output
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 200"), text)
        let parts = text.components(separatedBy: "\r\n\r\n")
        XCTAssertEqual(parts.count, 2, "a blank line separates the head from the body")
        XCTAssertTrue(parts[0].lowercased().contains("content-length: 1024"), parts[0])
        XCTAssertEqual(parts.last, String(repeating: "a", count: 1024))
    }

    func testGetWithoutIncludePrintsTheBodyOnly() throws {
        let nginx = try SharedServers.nginx()
        let run = try AFNTool.run(["get", nginx.httpURL.appendingPathComponent("1k.bin").absoluteString])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, Data(repeating: UInt8(ascii: "a"), count: 1024))
    }

    func testVerboseTracesTheExchangeOnStandardError() throws {
        let nginx = try SharedServers.nginx()
        let run = try AFNTool.run(["get", "-v", nginx.httpURL.appendingPathComponent("1k.bin").absoluteString])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.stderr.contains("> GET \(nginx.httpURL.absoluteString)/1k.bin"), run.stderr)
        XCTAssertTrue(run.stderr.contains("< HTTP/1.1 200"), run.stderr)
        XCTAssertTrue(run.stderr.contains("* timing:"), run.stderr)
        XCTAssertEqual(run.stdout.count, 1024, "the body still goes to stdout, alone")
    }

    func testPostDataFromAFileIsSentAsIs() throws {
        let httpbin = try SharedServers.httpbin()
        let body = "first line\nsecond line, with = & signs\n"
        let file = try AFNTool.temporaryFile(self, contents: Data(body.utf8))
        let run = try AFNTool.run(["post", httpbin.baseURL.appendingPathComponent("post").absoluteString,
                                   "-d", "@\(file.path)", "-H", "Content-Type: text/plain"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let echo = try run.json()
        XCTAssertEqual(echo["data"] as? String, body)
        let headers = echo["headers"] as? [String: Any]
        XCTAssertEqual(headers?["Content-Type"] as? String, "text/plain")
    }

    func testPutSendsTheBodyWithPut() throws {
        let httpbin = try SharedServers.httpbin()
        let run = try AFNTool.run(["put", httpbin.baseURL.appendingPathComponent("put").absoluteString, "-d", "replaced",
                                   "-H", "Content-Type: text/plain"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try run.json()["data"] as? String, "replaced")
    }

    func testMultipartFormFieldsAndFiles() throws {
        let httpbin = try SharedServers.httpbin()
        let file = try AFNTool.temporaryFile(self, name: "afn-upload", contents: Data("file contents\n".utf8))
        let run = try AFNTool.run(["post", httpbin.baseURL.appendingPathComponent("post").absoluteString,
                                   "-F", "greeting=hello world", "-F", "upload=@\(file.path)"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let echo = try run.json()
        XCTAssertEqual((echo["form"] as? [String: Any])?["greeting"] as? String, "hello world")
        XCTAssertEqual((echo["files"] as? [String: Any])?["upload"] as? String, "file contents\n")
        let contentType = (echo["headers"] as? [String: Any])?["Content-Type"] as? String
        XCTAssertTrue(contentType?.hasPrefix("multipart/form-data; boundary=") == true, String(describing: contentType))
    }

    func testAMissingFormFileExits26() throws {
        let httpbin = try SharedServers.httpbin()
        let run = try AFNTool.run(["post", httpbin.baseURL.appendingPathComponent("post").absoluteString,
                                   "-F", "upload=@/nonexistent/\(UUID().uuidString)"])
        XCTAssertEqual(run.status, 26, run.stderr)
    }

    func testJSONOutputIsOneParseableObject() throws {
        let httpbin = try SharedServers.httpbin()
        let run = try AFNTool.run(["post", "--json", httpbin.baseURL.appendingPathComponent("post").absoluteString,
                                   "-d", #"{"answer": 42}"#])
        XCTAssertEqual(run.status, 0, run.stderr)
        let object = try run.json()
        XCTAssertEqual(object["status"] as? Int, 200)
        XCTAssertEqual(object["exitCode"] as? Int, 0)
        XCTAssertTrue(object["error"] is NSNull)
        let headers = try XCTUnwrap(object["headers"] as? [String: Any])
        XCTAssertFalse(headers.isEmpty)
        let metrics = try XCTUnwrap(object["metrics"] as? [String: Any], "metrics are reported")
        XCTAssertNotNil(metrics["total"] as? Double)
        XCTAssertEqual(metrics["httpVersion"] as? String, "HTTP/1.1")
        // The body is parsed JSON: httpbin's echo of the JSON we sent.
        let body = try XCTUnwrap(object["body"] as? [String: Any])
        XCTAssertEqual((body["json"] as? [String: Any])?["answer"] as? Int, 42)
        let sentHeaders = body["headers"] as? [String: Any]
        XCTAssertEqual(sentHeaders?["Content-Type"] as? String, "application/json")
        XCTAssertEqual(sentHeaders?["Accept"] as? String, "application/json")
    }

    func testJSONOutputReportsTransportErrors() throws {
        let run = try AFNTool.run(["get", "--json", "http://127.0.0.1:\(Fixtures.refusedPort)/"])
        XCTAssertEqual(run.status, 7, run.stderr)
        let object = try run.json()
        XCTAssertTrue(object["status"] is NSNull)
        XCTAssertEqual(object["exitCode"] as? Int, 7)
        XCTAssertNotNil((object["error"] as? [String: Any])?["message"] as? String)
    }

    func testFailOnA404Exits22WithoutTheBody() throws {
        let nginx = try SharedServers.nginx()
        let url = nginx.httpURL.appendingPathComponent("missing-\(UUID().uuidString)").absoluteString
        let failing = try AFNTool.run(["get", "-f", url])
        XCTAssertEqual(failing.status, 22, failing.stderr)
        XCTAssertTrue(failing.stdout.isEmpty, failing.output)
        XCTAssertTrue(failing.stderr.contains("404"), failing.stderr)

        // Without --fail (curl's rule): the error page is printed and the status is 0.
        let lenient = try AFNTool.run(["get", url])
        XCTAssertEqual(lenient.status, 0, lenient.stderr)
        XCTAssertTrue(lenient.output.contains("404"), lenient.output)
    }

    func testFailRemovesTheOutputFile() throws {
        let nginx = try SharedServers.nginx()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-fail-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: output) }
        let run = try AFNTool.run(["get", "--fail", "-o", output.path, nginx.httpURL.appendingPathComponent("missing").absoluteString])
        XCTAssertEqual(run.status, 22, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testATotalTimeLimitExits28() throws {
        let server = try ScriptedServer()
        addTeardownBlock { server.shutdown() }
        // A byte every 0.2 s for 20 s: never idle for a second, yet far longer than the total limit,
        // so only a total limit ends it (an idle limit in its place lets it succeed).
        server.route("/drip") { _ in AFNRequestCommandTests.drip(count: 100, every: 0.2) }
        let started = Date()
        let run = try AFNTool.run(["get", "--max-time", "1", server.baseURL.appendingPathComponent("drip").absoluteString])
        XCTAssertEqual(run.status, 28, run.stderr)
        // The bound includes launching the debug binary (seconds on a loaded machine, more under
        // ThreadSanitizer), so it is set against the drip, not the limit: well before the 20 s body
        // could have ended, so the limit, not the server, ended it.
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "the limit, not the server, ended it")
        XCTAssertLessThan(run.stdout.count, 100, "the body was cut short")
    }

    /// A 200 whose `count` body bytes arrive one every `every` seconds.
    static func drip(count: Int, every: Double) -> [ScriptedServer.Step] {
        var actions: [ScriptedServer.Step] = [.head(status: 200, headers: [("Content-Length", "\(count)")])]
        for _ in 0..<count { actions += [.body(Data("x".utf8)), .wait(every)] }
        return actions + [.end]
    }

    func testAnIdleTimeoutExits28() throws {
        let server = try ScriptedServer()
        addTeardownBlock { server.shutdown() }
        server.route("/drip") { _ in
            [.head(status: 200, headers: [("Content-Length", "4")]), .body(Data("ab".utf8)), .wait(20), .body(Data("cd".utf8)), .end]
        }
        let run = try AFNTool.run(["get", "--timeout", "3", server.baseURL.appendingPathComponent("drip").absoluteString])
        XCTAssertEqual(run.status, 28, run.stderr)
        // An idle limit is not a total one: a body that keeps coming for 5 s outlives a 3 s idle limit.
        // (Gaps of 0.2 s against 3 s: a stalled second on a loaded machine is no idle time-out.)
        server.route("/steady") { _ in AFNRequestCommandTests.drip(count: 25, every: 0.2) }
        let steady = try AFNTool.run(["get", "--timeout", "3", server.baseURL.appendingPathComponent("steady").absoluteString])
        XCTAssertEqual(steady.status, 0, steady.stderr)
        XCTAssertEqual(steady.stdout, Data(repeating: UInt8(ascii: "x"), count: 25))
    }

    func testNothingListeningExits7() throws {
        let run = try AFNTool.run(["get", "http://127.0.0.1:\(Fixtures.refusedPort)/"])
        XCTAssertEqual(run.status, 7, run.stderr)
        XCTAssertTrue(run.stderr.hasPrefix("afn: "), run.stderr)
    }

    func testABadURLPrintsTheSubcommandsUsageAndExits64() throws {
        for (command, extra) in [("get", [String]()), ("post", ["-d", "x"]), ("put", ["-d", "x"])] {
            let run = try AFNTool.run([command, "not a url"] + extra)
            XCTAssertEqual(run.status, 64, "\(command): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains("not an http(s) URL"), run.stderr)
            XCTAssertTrue(run.stderr.contains("Usage: afn \(command)"), "\(command)'s usage, not the root's: \(run.stderr)")
        }
    }

    func testConflictingOptionsAreUsageErrors() throws {
        let run = try AFNTool.run(["post", "http://127.0.0.1:1/", "-d", "x", "-F", "a=b"])
        XCTAssertEqual(run.status, 64, run.stderr)
        XCTAssertTrue(run.stderr.contains("Usage: afn post"), run.stderr)
        let pin = try AFNTool.run(["get", "--pin", "md5/abc", "http://127.0.0.1:1/"])
        XCTAssertEqual(pin.status, 64, pin.stderr)
        XCTAssertTrue(pin.stderr.contains("Usage: afn get"), pin.stderr)
    }

    func testHelpDocumentsTheExitStatuses() throws {
        let run = try AFNTool.run(["--help"])
        XCTAssertEqual(run.status, 0)
        for line in ["22", "28", "60", "cannot connect"] { XCTAssertTrue(run.output.contains(line), line) }
    }
}
