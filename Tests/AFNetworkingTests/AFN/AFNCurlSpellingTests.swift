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
        // -f is --fail here too; the list may be given as FILE (issue 29), so
        // `batch -f FILE` reads FILE, as the old -f FILE did: no silent change.
        let old = try AFNTool.run(["batch", "-f", file.path])
        XCTAssertEqual(old.status, 0, old.stderr)
        XCTAssertTrue(old.output.contains("1 URLs, 1 succeeded, 0 failed"), old.output)
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
        XCTAssertEqual(meanings["-O"], ["--remote-name"])
        for (short, longs) in meanings { XCTAssertEqual(longs.count, 1, "\(short) means \(longs)") }
    }

    /// An empty directory of the test's own, the working directory of runs that name files.
    private func workingDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-cwd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return directory
    }

    private func contents(of directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    func testDashOhDashIsStdout() throws {
        let nginx = try SharedServers.nginx()
        let directory = try workingDirectory()
        let run = try AFNTool.run(["get", "-o", "-", schemeless(nginx)], directory: directory)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout, Data(repeating: UInt8(ascii: "a"), count: 1024), "the body on stdout")
        XCTAssertEqual(contents(of: directory), [], "no file named '-'")
        XCTAssertEqual(try AFNTool.run(["get", "--resume", "-o", "-", schemeless(nginx)], directory: directory).status, 64,
                       "nothing to continue from on stdout")
        XCTAssertEqual(try AFNTool.run(["download", "-o", "-", schemeless(nginx)], directory: directory).status, 64)
        XCTAssertEqual(contents(of: directory), [])
    }

    func testRemoteNameSavesUnderTheURLsLastSegmentAndRefusesNone() throws {
        let nginx = try SharedServers.nginx()
        let directory = try workingDirectory()
        let file = directory.appendingPathComponent("1k.bin")
        try Data("older".utf8).write(to: file)
        let get = try AFNTool.run(["get", "-O", schemeless(nginx)], directory: directory)
        XCTAssertEqual(get.status, 0, get.stderr)
        XCTAssertEqual(get.stdout, Data())
        XCTAssertEqual(try Data(contentsOf: file).count, 1024, "written over, as -o does")
        try FileManager.default.removeItem(at: file)
        let download = try AFNTool.run(["download", "-O", schemeless(nginx)], directory: directory)
        XCTAssertEqual(download.status, 0, download.stderr)
        XCTAssertEqual(try Data(contentsOf: file).count, 1024)
        try FileManager.default.removeItem(at: file)
        for url in [nginx.httpURL.absoluteString + "/", nginx.httpURL.absoluteString + "/www/..", nginx.httpURL.absoluteString + "/."] {
            for command in ["get", "download"] {
                let run = try AFNTool.run([command, "-O", url], directory: directory)
                XCTAssertEqual(run.status, 64, "\(command) -O \(url): \(run.stderr)")
            }
        }
        XCTAssertEqual(contents(of: directory), [], "nothing written for a URL naming no file")
        XCTAssertEqual(try AFNTool.run(["get", "-O", "-o", "x", schemeless(nginx)], directory: directory).status, 64)
    }

    func testContinueAtDashIsResume() throws {
        let nginx = try SharedServers.nginx()
        let directory = try workingDirectory()
        let output = directory.appendingPathComponent("out.bin").path
        let get = try AFNTool.run(["get", "-C", "-", "-o", output, schemeless(nginx)])
        XCTAssertEqual(get.status, 0, get.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: output)).count, 1024)
        let download = try AFNTool.run(["download", "-C", "-", "-o", output, schemeless(nginx)])
        XCTAssertEqual(download.status, 0, download.stderr)
        XCTAssertEqual(try AFNTool.run(["get", "-C", "100", "-o", output, schemeless(nginx)]).status, 64, "an offset is not taken")
        XCTAssertEqual(try AFNTool.run(["get", "-C", "-", schemeless(nginx)]).status, 64, "nothing to continue on stdout")
    }

    func testDashCapitalISendsHEADAndPrintsTheHead() throws {
        let nginx = try SharedServers.nginx()
        let marker = UUID().uuidString
        let run = try AFNTool.run(["get", "-I", schemeless(nginx) + "?head=\(marker)"])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.output.hasPrefix("HTTP/1.1 200 OK\r\n"), run.output)
        XCTAssertTrue(run.output.contains("\r\nContent-Length: 1024\r\n"), run.output)
        XCTAssertTrue(run.output.hasSuffix("\r\n\r\n"), "the head only: \(run.output)")
        XCTAssertTrue(nginx.logShows("\"HEAD /1k.bin?head=\(marker) HTTP/1.1\" 200"), nginx.accessLog)
        XCTAssertEqual(try AFNTool.run(["get", "-I", "-X", "POST", schemeless(nginx)]).status, 64)
    }

    func testLocationAndShowErrorAreAccepted() throws {
        let nginx = try SharedServers.nginx()
        let followed = try AFNTool.run(["get", "-L", schemeless(nginx, "redirect/1k.bin")])
        XCTAssertEqual(followed.status, 0, followed.stderr)
        XCTAssertEqual(followed.stdout.count, 1024)
        let shown = try AFNTool.run(["get", "-sS", "127.0.0.1:1/x"])
        XCTAssertEqual(shown.status, 7)
        XCTAssertTrue(shown.stderr.contains("afn: "), "-S: the error still shows: \(shown.stderr)")
        let directory = try workingDirectory()
        let download = try AFNTool.run(["download", "-sSL", "-o", directory.appendingPathComponent("f").path, schemeless(nginx, "redirect/1k.bin")])
        XCTAssertEqual(download.status, 0, download.stderr)
        let file = try AFNTool.temporaryFile(self, name: "afn-urls", contents: Data(schemeless(nginx).utf8))
        XCTAssertEqual(try AFNTool.run(["batch", "-sSL", "--file", file.path]).status, 0)
    }

    /// `-f` in batch and download (which always fail on an HTTP error status)
    /// is accepted; no help lists an option its command does not have.
    func testFailIsAcceptedEverywhereAndHelpListsOnlyRealOptions() throws {
        let nginx = try SharedServers.nginx()
        let file = try AFNTool.temporaryFile(self, name: "afn-urls", contents: Data(schemeless(nginx, "missing").utf8))
        XCTAssertEqual(try AFNTool.run(["batch", "-f", "--file", file.path]).status, 22)
        let directory = try workingDirectory()
        let output = directory.appendingPathComponent("f").path
        XCTAssertEqual(try AFNTool.run(["download", "-f", "-o", output, schemeless(nginx)]).status, 0)
        XCTAssertEqual(try AFNTool.run(["download", "-f", "-o", output, schemeless(nginx, "missing")]).status, 1)
        for command in ["download", "batch"] {
            let help = try AFNTool.run([command, "--help"]).output
            XCTAssertFalse(help.contains("-v"), "\(command) has no -v: \(help)")
        }
    }

    func testHelpSaysWhereTheCacheIsAndHowToBypassIt() throws {
        let help = try AFNTool.run(["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.output.contains("~/.cache/org.swift.foundation.URLCache/afn"), help.output)
        XCTAssertTrue(help.output.contains("--no-cache"), help.output)
    }
}
