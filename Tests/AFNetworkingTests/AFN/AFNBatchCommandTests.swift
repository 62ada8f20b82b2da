import Foundation
import XCTest

/// `afn batch`, the real binary against nginx: URLs from stdin or a file,
/// run `-j` at a time, a progress line on stderr, a summary on stdout, and a
/// failing exit status when any URL failed.
final class AFNBatchCommandTests: XCTestCase {
    /// Ten lines: six that succeed, two 404s, one refused connection and one
    /// that is not a URL (plus a comment and a blank line, which are skipped).
    private func list(_ nginx: NginxFixture) -> (lines: [String], good: [String]) {
        let base = nginx.httpURL.absoluteString
        let good = (0..<6).map { "\(base)/\($0 % 2 == 0 ? "1k.bin" : "text.txt")?n=\($0)" }
        let lines = [
            good[0], good[1],
            "\(base)/missing-1",
            "# a comment", "",
            good[2],
            "http://127.0.0.1:\(Fixtures.refusedPort)/refused",
            good[3], good[4],
            "not a url",
            "\(base)/missing-2",
            good[5],
        ]
        return (lines, good)
    }

    func testABatchWithFailuresPrintsASummaryAndFails() throws {
        let nginx = try SharedServers.nginx()
        let (lines, good) = list(nginx)
        let run = try AFNTool.run(["batch", "-j", "4"], stdin: Data(lines.joined(separator: "\n").utf8))
        XCTAssertEqual(run.status, 22, "the first failure in input order is a 404: \(run.stderr)")

        let rows = run.output.split(separator: "\n").map(String.init)
        XCTAssertEqual(rows.count, 12, "a header, ten rows and a total line: \(run.output)")
        XCTAssertTrue(rows.first?.hasPrefix("URL") == true, run.output)
        XCTAssertTrue(["STATUS", "BYTES", "TIME"].allSatisfy { rows.first?.contains($0) == true }, run.output)
        XCTAssertEqual(rows.last, "10 URLs, 6 succeeded, 4 failed")
        for url in good {
            let row = try XCTUnwrap(rows.first { $0.hasPrefix(url + " ") }, url)
            XCTAssertTrue(row.contains(" 200 "), row)
        }
        XCTAssertTrue(rows.contains { $0.hasPrefix("\(nginx.httpURL.absoluteString)/missing-1 ") && $0.contains(" 404 ") })
        XCTAssertTrue(rows.contains { $0.hasPrefix("not a url ") && $0.contains("not an http(s) URL") })
        // The rows keep the input order.
        let order = rows.dropFirst().dropLast().compactMap { row in lines.first { !$0.isEmpty && row.hasPrefix($0 + " ") } }
        XCTAssertEqual(order, lines.filter { !$0.isEmpty && !$0.hasPrefix("#") })
        XCTAssertTrue(run.stderr.contains("10/10 done, 4 failed"), run.stderr)
    }

    func testJSONLinesFromAFile() throws {
        let nginx = try SharedServers.nginx()
        let (lines, _) = list(nginx)
        let file = try AFNTool.temporaryFile(self, name: "afn-urls", contents: Data(lines.joined(separator: "\n").utf8))
        let run = try AFNTool.run(["batch", "-j", "4", "--json", "--file", file.path])
        XCTAssertNotEqual(run.status, 0)
        let objects = try run.output.split(separator: "\n").map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
        }
        XCTAssertEqual(objects.count, 10)
        XCTAssertEqual(objects.filter { $0["exitCode"] as? Int == 0 }.count, 6)
        XCTAssertEqual(objects.filter { $0["status"] as? Int == 404 }.count, 2)
        XCTAssertEqual(objects.filter { $0["exitCode"] as? Int == 7 }.count, 1, "the refused connection")
        XCTAssertEqual(objects.filter { $0["exitCode"] as? Int == 3 }.count, 1, "the line that is not a URL")
        let first = objects[0]
        XCTAssertEqual(first["bytes"] as? Int, 1024)
        XCTAssertNotNil(first["time"] as? Double)
        XCTAssertTrue(first["error"] is NSNull)
    }

    func testAllSucceedingExitsZero() throws {
        let nginx = try SharedServers.nginx()
        let urls = (0..<5).map { "\(nginx.httpURL.absoluteString)/1k.bin?all=\($0)" }
        let run = try AFNTool.run(["batch", "-j", "2"], stdin: Data(urls.joined(separator: "\n").utf8))
        XCTAssertEqual(run.status, 0, run.output + run.stderr)
        XCTAssertTrue(run.output.contains("5 URLs, 5 succeeded, 0 failed"), run.output)
    }

    func testUsageErrors() throws {
        let zero = try AFNTool.run(["batch", "-j", "0"])
        XCTAssertEqual(zero.status, 64)
        XCTAssertTrue(zero.stderr.contains("Usage: afn batch"), zero.stderr)
        XCTAssertEqual(try AFNTool.run(["batch", "--file", "/nonexistent/\(UUID().uuidString)"]).status, 64)
        XCTAssertEqual(try AFNTool.run(["batch"], stdin: Data("\n# nothing\n".utf8)).status, 64, "no URLs")
    }
}
