import Foundation
import XCTest

/// `afn batch` with the list's fields, `--output-dir`, `--manifest`,
/// `--resume` and `--limit-rate`, the real binary against nginx: a batch
/// killed outright continues in a new process to byte-identical files; a
/// list or manifest that is refused exits 2 and touches nothing.
final class AFNBatchResumeTests: XCTestCase {
    private var directory: URL!
    private var output: URL { directory.appendingPathComponent("out") }
    private var manifest: URL { directory.appendingPathComponent("batch.manifest") }

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-batch-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let directory = self.directory!
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
    }

    private func listFile(_ lines: [String], name: String = "list") throws -> URL {
        let file = directory.appendingPathComponent(name)
        try Data(lines.joined(separator: "\n").utf8).write(to: file)
        return file
    }

    private static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// The entries of the manifest (its format is the library's; read here only to know when to kill).
    private func manifestEntries() -> [String: [String: Any]] {
        guard let data = FileManager.default.contents(atPath: manifest.path),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return [:] }
        return object["entries"] as? [String: [String: Any]] ?? [:]
    }

    /// Every file under `root` with its bytes.
    private func snapshot(_ root: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return files }
        while let relative = walker.nextObject() as? String {
            files[relative] = FileManager.default.contents(atPath: root.appendingPathComponent(relative).path) ?? Data("<dir>".utf8)
        }
        return files
    }

    private func requests(_ nginx: NginxFixture, containing marker: String) -> Int {
        nginx.accessLog.split(separator: "\n").filter { $0.contains(marker) }.count
    }

    /// JSON lines by id.
    private func rows(_ run: AFNTool.Run) throws -> [String: [String: Any]] {
        var rows: [String: [String: Any]] = [:]
        for line in run.output.split(separator: "\n") {
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
            rows[try XCTUnwrap(object["id"] as? String)] = object
        }
        return rows
    }

    // MARK: - Killed and resumed

    /// Killed with SIGKILL once one entry is done and the next one's partial
    /// file holds bytes (slowed by --limit-rate); a new process with
    /// --resume sends nothing for the done entry, continues the partial one
    /// with Range, runs the rest, and every file is nginx's, byte for byte.
    func testABatchKilledMidwayResumesInANewProcessToByteIdenticalFiles() throws {
        let nginx = try SharedServers.nginx()
        let marker = UUID().uuidString
        let base = nginx.httpURL.absoluteString
        let list = try listFile([
            "# killed and resumed",
            "\(base)/1k.bin?k=\(marker)&n=small   id=small",
            "\(base)/4m.bin?k=\(marker)&n=big     id=big    after=small   out=big/4m.bin",
            "\(base)/text.txt?k=\(marker)&n=last  id=last   after=big",
        ])
        let process = Process()
        process.executableURL = try AFNTool.executable()
        process.arguments = ["batch", list.path, "--output-dir", output.path, "--manifest", manifest.path, "--limit-rate", "256K", "-s"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Fixtures.launch(process)
        let partial = output.appendingPathComponent("big/4m.bin.partial").path
        // Bounded wait (20 ms polls, 30 s at most) for the state to kill it in.
        let deadline = Date().addingTimeInterval(30)
        var ready = false
        while process.isRunning, Date() < deadline {
            ready = manifestEntries()["small"]?["state"] as? String == "done" && Self.size(partial) >= 128 * 1024
            if ready { break }
            usleep(20_000)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        XCTAssertTrue(ready, "never saw small done and big's partial file growing")
        XCTAssertEqual(process.terminationReason, .uncaughtSignal)
        let kept = Self.size(partial)
        XCTAssertLessThan(kept, 4 * 1024 * 1024, "the rate cap kept big from finishing")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.appendingPathComponent("text.txt").path))

        let resumed = try AFNTool.run(["batch", list.path, "--output-dir", output.path, "--manifest", manifest.path, "--resume", manifest.path, "--json", "-s"])
        XCTAssertEqual(resumed.status, 0, resumed.stderr + resumed.output)
        let byID = try rows(resumed)
        XCTAssertEqual(byID["small"]?["outcome"] as? String, "resumed-as-done")
        XCTAssertEqual(byID["big"]?["outcome"] as? String, "done")
        XCTAssertEqual(byID["big"]?["status"] as? Int, 206)
        XCTAssertGreaterThanOrEqual(byID["big"]?["resumedFrom"] as? Int ?? 0, kept, "continued from the partial file")
        XCTAssertEqual(byID["last"]?["outcome"] as? String, "done")

        let www = nginx.directory.appendingPathComponent("www")
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("1k.bin")), try Data(contentsOf: www.appendingPathComponent("1k.bin")))
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("big/4m.bin")), try Data(contentsOf: www.appendingPathComponent("4m.bin")))
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("text.txt")), try Data(contentsOf: www.appendingPathComponent("text.txt")))
        XCTAssertTrue(nginx.logShows("\"GET /4m.bin?k=\(marker)&n=big HTTP/1.1\" 206"), "big was continued with Range")
        XCTAssertEqual(requests(nginx, containing: "k=\(marker)&n=small"), 1, "the done entry was not sent again")
        XCTAssertEqual(Set(snapshot(output).keys), ["1k.bin", "big", "big/4m.bin", "text.txt"], "no partial file or sidecar left")
    }

    // MARK: - Refused: exit 2, nothing touched

    func testACorruptOrForeignManifestOrAnotherDirectoryExitsTwoAndTouchesNothing() throws {
        let nginx = try SharedServers.nginx()
        let marker = UUID().uuidString
        let base = nginx.httpURL.absoluteString
        let lines = ["\(base)/1k.bin?r=\(marker) id=a", "\(base)/text.txt?r=\(marker) id=b after=a"]
        let list = try listFile(lines)
        let first = try AFNTool.run(["batch", list.path, "--output-dir", output.path, "--manifest", manifest.path, "-s"])
        XCTAssertEqual(first.status, 0, first.stderr)
        // What a later run may not change: the output directory and the manifest.
        func state() -> [String: Data] { snapshot(output).merging(["<manifest>": (try? Data(contentsOf: manifest)) ?? Data()]) { $1 } }
        let before = state()
        let sent = requests(nginx, containing: marker)

        func refused(_ arguments: [String], saying: String, line: UInt = #line) throws {
            let run = try AFNTool.run(arguments)
            XCTAssertEqual(run.status, 2, run.stderr, line: line)
            XCTAssertTrue(run.stderr.contains(saying), run.stderr, line: line)
            XCTAssertEqual(state(), before, "something was touched", line: line)
            XCTAssertEqual(requests(nginx, containing: marker), sent, "something was sent", line: line)
        }
        // Another list: one more comment changes its content.
        let other = try listFile(["# changed"] + lines, name: "other-list")
        try refused(["batch", other.path, "--output-dir", output.path, "--resume", manifest.path], saying: "other content")
        let elsewhere = directory.appendingPathComponent("elsewhere")
        try refused(["batch", list.path, "--output-dir", elsewhere.path, "--resume", manifest.path], saying: "output directory")
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere.path))
        try refused(["batch", list.path, "--resume", manifest.path], saying: "output directory")
        // --manifest never writes over an existing file: --resume continues it.
        try refused(["batch", list.path, "--output-dir", output.path, "--manifest", manifest.path], saying: "--resume")

        let good = try Data(contentsOf: manifest)
        for damaged in [good.prefix(good.count / 2), Data("not json".utf8)] {
            try damaged.write(to: manifest)
            let damagedBefore = state()
            let run = try AFNTool.run(["batch", list.path, "--output-dir", output.path, "--resume", manifest.path])
            XCTAssertEqual(run.status, 2, run.stderr)
            XCTAssertTrue(run.stderr.contains("not usable"), run.stderr)
            XCTAssertEqual(state(), damagedBefore)
            XCTAssertEqual(requests(nginx, containing: marker), sent)
        }
    }

    func testListErrorsExitTwoBeforeAnythingIsSentOrMade() throws {
        let nginx = try SharedServers.nginx()
        let marker = UUID().uuidString
        let url = "\(nginx.httpURL.absoluteString)/1k.bin?l=\(marker)"
        let cases: [(lines: [String], saying: String)] = [
            (["\(url) id=a colour=red"], "unknown field 'colour='"),
            (["\(url) id=a", "\(url)&2 after=ghost"], "'ghost'"),
            (["\(url) id=a out=a", "\(url)&2 id=a out=b"], "two entries have the id 'a'"),
            (["\(url) id=a after=b out=a", "\(url)&2 id=b after=a out=b"], "cycle"),
            (["\(url) id=a out=../escape"], "'..' component"),
            (["\(url) id=a out=/tmp/x"], "absolute"),
            (["\(url) id=a", "\(url)&2 id=b"], "would both write 1k.bin"),
        ]
        for (lines, saying) in cases {
            let list = try listFile(lines)
            let run = try AFNTool.run(["batch", list.path, "--output-dir", output.path, "--manifest", manifest.path])
            XCTAssertEqual(run.status, 2, "\(lines): \(run.stderr)")
            XCTAssertTrue(run.stderr.contains(saying), "\(lines): \(run.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: output.path), "\(lines): the output directory was made")
            XCTAssertFalse(FileManager.default.fileExists(atPath: manifest.path), "\(lines): the manifest was written")
        }
        XCTAssertEqual(requests(nginx, containing: marker), 0)
        XCTAssertEqual(try AFNTool.run(["batch", "--limit-rate", "fast"], stdin: Data(url.utf8)).status, 64)
        // --resume M implies --manifest M: the same file twice is fine, two files are not.
        XCTAssertEqual(try AFNTool.run(["batch", "--manifest", "m", "--resume", "other"], stdin: Data(url.utf8)).status, 64)
    }

    // MARK: - Outcomes and statuses

    /// A failed line skips the lines after it (nothing sent for them); the
    /// exit status is the first line's in input order that did not succeed —
    /// for a skipped line, the failure it followed (here 22, a 404).
    func testAFailedDependencySkipsItsDependentsAndTheirStatusIsItsOwn() throws {
        let nginx = try SharedServers.nginx()
        let marker = UUID().uuidString
        let base = nginx.httpURL.absoluteString
        let run = try AFNTool.run(["batch", "--json", "-s", "-"], stdin: Data([
            "\(base)/1k.bin?s=\(marker)&n=skipped   after=missing",
            "\(base)/missing?s=\(marker)&n=missing  id=missing",
            "\(base)/1k.bin?s=\(marker)&n=ok        id=ok",
        ].joined(separator: "\n").utf8))
        XCTAssertEqual(run.status, 22, run.stderr)
        let byID = try rows(run)
        XCTAssertEqual(byID["#1"]?["outcome"] as? String, "skipped")
        XCTAssertEqual(byID["#1"]?["exitCode"] as? Int, 22)
        XCTAssertEqual(byID["missing"]?["outcome"] as? String, "failed")
        XCTAssertEqual(byID["ok"]?["outcome"] as? String, "done")
        XCTAssertEqual(requests(nginx, containing: "s=\(marker)&n=skipped"), 0, "a skipped line sends nothing")

        let table = try AFNTool.run(["batch", "-s"], stdin: Data([
            "\(base)/missing?s=\(marker)&n=t1 id=m", "\(base)/1k.bin?s=\(marker)&n=t2 after=m",
        ].joined(separator: "\n").utf8))
        XCTAssertEqual(table.status, 22)
        XCTAssertTrue(table.output.contains("OUTCOME"), table.output)
        XCTAssertTrue(table.output.contains("2 URLs, 0 succeeded, 1 failed, 1 skipped"), table.output)
    }

    /// An existing file afn did not make stays as it is: its line fails with 23.
    func testAnExistingFileIsNotWrittenOver() throws {
        let nginx = try SharedServers.nginx()
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let mine = output.appendingPathComponent("1k.bin")
        try Data("mine".utf8).write(to: mine)
        let run = try AFNTool.run(["batch", "--output-dir", output.path, "-"],
                                  stdin: Data("\(nginx.httpURL.absoluteString)/1k.bin?e=\(UUID().uuidString)".utf8))
        XCTAssertEqual(run.status, 23, run.stderr + run.output)
        XCTAssertTrue(run.output.contains("is not a file this batch made"), run.output)
        XCTAssertEqual(try Data(contentsOf: mine), Data("mine".utf8))
    }

    /// --limit-rate caps the whole batch: two 4 MiB bodies at 4M together
    /// take at least 1.5 s (8 MiB at 4 MiB/s, less the half second of burst
    /// the cap allows); per transfer they would take 0.5 s. A lower bound
    /// with room below it only: the library's rate tests measure the cap itself.
    func testTheRateLimitCapsTheWholeBatch() throws {
        let nginx = try SharedServers.nginx()
        let marker = UUID().uuidString
        let base = nginx.httpURL.absoluteString
        let started = Date()
        let run = try AFNTool.run(["batch", "--output-dir", output.path, "--limit-rate", "4M", "-j", "2", "-s", "-"], stdin: Data([
            "\(base)/4m.bin?rate=\(marker)&n=1 out=one.bin", "\(base)/4m.bin?rate=\(marker)&n=2 out=two.bin",
        ].joined(separator: "\n").utf8))
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 1.0, "8 MiB at 4 MiB/s for the batch")
        let source = try Data(contentsOf: nginx.directory.appendingPathComponent("www/4m.bin"))
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("one.bin")), source)
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("two.bin")), source)
    }
}
