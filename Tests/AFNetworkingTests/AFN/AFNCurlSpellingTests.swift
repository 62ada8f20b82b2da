import Foundation
import XCTest

/// `afn` takes curl's spellings: a URL without a scheme is http, `-s` is
/// silent, `-f` is `--fail` in every command, and `--help` says where the
/// response cache is. The real binary against nginx.
final class AFNCurlSpellingTests: XCTestCase {
    /// `host:port/path` of nginx's 1 KiB file, without the scheme.
    private func schemeless(_ nginx: NginxFixture, _ path: String = "1k.bin") -> String {
        let url = nginx.httpURL.appendingPathComponent(path).absoluteString
        return String(url.dropFirst("http://".count))
    }

    func testAURLWithoutASchemeIsHTTP() throws {
        let nginx = try SharedServers.nginx()
        XCTAssertFalse(schemeless(nginx).contains("://"))
        let get = try AFNTool.run(["get", schemeless(nginx)])
        XCTAssertEqual(get.status, 0, get.stderr)
        XCTAssertEqual(get.stdout, Data(repeating: UInt8(ascii: "a"), count: 1024))
        let batch = try AFNTool.run(["batch", "--json"], stdin: Data((schemeless(nginx) + "\n").utf8))
        XCTAssertEqual(batch.status, 0, batch.output + batch.stderr)
        XCTAssertTrue(batch.output.contains("\"bytes\":1024"), batch.output)
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-schemeless-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let download = try AFNTool.run(["download", schemeless(nginx), "-o", output.path])
        XCTAssertEqual(download.status, 0, download.stderr)
        XCTAssertEqual(try Data(contentsOf: output).count, 1024)
    }

    func testSilentWritesNoErrorMessageOrProgress() throws {
        let refused = "127.0.0.1:1/x"
        let loud = try AFNTool.run(["get", refused])
        XCTAssertEqual(loud.status, 7)
        XCTAssertTrue(loud.stderr.contains("afn: "), loud.stderr)
        for flag in ["-s", "--silent"] {
            let quiet = try AFNTool.run(["get", flag, refused])
            XCTAssertEqual(quiet.status, 7, "the exit status still tells")
            XCTAssertEqual(quiet.stderr, "", flag)
        }
        let nginx = try SharedServers.nginx()
        let missing = try AFNTool.run(["get", "-s", "-f", schemeless(nginx, "missing")])
        XCTAssertEqual(missing.status, 22)
        XCTAssertEqual(missing.stderr, "")
        let batch = try AFNTool.run(["batch", "-s"], stdin: Data((schemeless(nginx) + "\n").utf8))
        XCTAssertEqual(batch.status, 0)
        XCTAssertEqual(batch.stderr, "", "no progress line")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-silent-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let download = try AFNTool.run(["download", "-s", schemeless(nginx), "-o", output.path])
        XCTAssertEqual(download.status, 0)
        XCTAssertEqual(download.stderr, "", "no progress bar")
    }

    func testDashFIsFailInEveryCommandAndTheBatchListIsDashDashFile() throws {
        let nginx = try SharedServers.nginx()
        XCTAssertEqual(try AFNTool.run(["get", "-f", schemeless(nginx, "missing")]).status, 22)
        let file = try AFNTool.temporaryFile(self, name: "afn-urls", contents: Data(schemeless(nginx).utf8))
        let old = try AFNTool.run(["batch", "-f", file.path])
        XCTAssertEqual(old.status, 64, "batch has no -f FILE any more: a usage error, not a silent change")
        let new = try AFNTool.run(["batch", "--file", file.path])
        XCTAssertEqual(new.status, 0, new.stderr)
        XCTAssertTrue(new.output.contains("1 URLs, 1 succeeded, 0 failed"), new.output)
        // The same short letter means the same thing in every command's help.
        var meanings: [String: Set<String>] = [:]
        for command in ["get", "post", "put", "download", "batch"] {
            let help = try AFNTool.run([command, "--help"]).output
            for line in help.split(separator: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                guard text.hasPrefix("-"), text.count > 2, text.dropFirst().first?.isLetter == true,
                      text.dropFirst(2).first == "," else { continue }
                let short = String(text.prefix(2))
                let long = text.split(separator: ",")[1].trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
                meanings[short, default: []].insert(long)
            }
        }
        XCTAssertEqual(meanings["-f"], ["--fail"])
        XCTAssertEqual(meanings["-s"], ["--silent"])
        for (short, longs) in meanings { XCTAssertEqual(longs.count, 1, "\(short) means \(longs)") }
    }

    func testHelpSaysWhereTheCacheIsAndHowToBypassIt() throws {
        let help = try AFNTool.run(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.output.contains("~/.cache/org.swift.foundation.URLCache/afn"), help.output)
        XCTAssertTrue(help.output.contains("--no-cache"), help.output)
    }
}
