import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `afn download`, the real binary against nginx: stopped mid-body — by
/// SIGINT, or killed outright — it leaves `<output>.partial`; the next run
/// continues with a ranged request and the file is byte-identical.
final class AFNDownloadCommandTests: XCTestCase {
    private func afn() throws -> URL {
        try AFNTool.executable()
    }

    /// The size of `<output>.partial`, 0 when there is none.
    private static func partialBytes(_ output: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: output.path + ".partial"))?[.size] as? Int) ?? 0
    }

    private static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    /// Runs afn; once `condition` holds, sends it `signal` (SIGINT: Ctrl-C).
    private func run(_ arguments: [String], interruptWhen condition: ((Process) -> Bool)? = nil, signal: Int32 = SIGINT,
                     timeout: TimeInterval = 60) throws -> Int32 {
        let process = Process()
        process.executableURL = try afn()
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try Fixtures.launch(process)
        let deadline = Date().addingTimeInterval(timeout)
        var interrupted = false
        while process.isRunning && Date() < deadline {
            if !interrupted, let condition, condition(process) {
                kill(process.processIdentifier, signal)
                interrupted = true
            }
            usleep(20_000)
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// An output path and the note afn keeps next to it; they, the partial file and its sidecar are removed after the test.
    private func temporaryOutput() -> (output: URL, resumeFile: URL) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-download-\(UUID().uuidString).bin")
        let resumeFile = URL(fileURLWithPath: output.path + ".afnresume")
        addTeardownBlock {
            for suffix in ["", ".afnresume", ".partial", ".partial.json"] { try? FileManager.default.removeItem(atPath: output.path + suffix) }
        }
        return (output, resumeFile)
    }

    func testAnInterruptedDownloadContinuesOnTheNextRunByteExact() throws {
        let nginx = try SharedServers.nginx()
        let source = nginx.directory.appendingPathComponent("www/4m.bin")
        let (output, resumeFile) = temporaryOutput()
        let marker = UUID().uuidString
        let url = "\(nginx.httpURL.absoluteString)/slow/4m.bin?run=\(marker)"
        // Interrupted mid-body: once the partial file holds 256 KiB (of 4 MiB sent at 512 KiB/s).
        let first = try run(["download", url, "-o", output.path], interruptWhen: { _ in Self.partialBytes(output) >= 256 * 1024 })
        XCTAssertEqual(first, 130, "interrupted")
        XCTAssertTrue(FileManager.default.fileExists(atPath: resumeFile.path), "what waits is noted")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path), "nothing at the output until complete")

        let second = try run(["download", url, "-o", output.path])
        XCTAssertEqual(second, 0)
        XCTAssertEqual(try Data(contentsOf: output), try Data(contentsOf: source))
        XCTAssertFalse(FileManager.default.fileExists(atPath: resumeFile.path), "the note removed once done")
        XCTAssertFalse(Self.exists(output.path + ".partial") || Self.exists(output.path + ".partial.json"))
        XCTAssertTrue(nginx.logShows("\"GET /slow/4m.bin?run=\(marker) HTTP/1.1\" 206"), "the second run asked for the rest only")
    }

    /// Killed outright mid-body (nothing of afn runs at SIGKILL), a download
    /// leaves its partial file next to the output, and the next run continues
    /// it: no new temporary file, no start over, nothing left behind after.
    func testAKilledDownloadContinuesFromItsPartialFile() throws {
        let nginx = try SharedServers.nginx()
        let source = nginx.directory.appendingPathComponent("www/4m.bin")
        let (output, resumeFile) = temporaryOutput()
        let marker = UUID().uuidString
        let url = "\(nginx.httpURL.absoluteString)/slow/4m.bin?killed=\(marker)"
        let first = try run(["download", url, "-o", output.path], interruptWhen: { _ in Self.partialBytes(output) >= 256 * 1024 }, signal: SIGKILL)
        XCTAssertEqual(first, SIGKILL, "killed")
        XCTAssertGreaterThanOrEqual(Self.partialBytes(output), 256 * 1024, "the partial file outlives the process")
        XCTAssertTrue(Self.exists(output.path + ".partial.json"), "with what the next run needs to continue it")

        XCTAssertEqual(try run(["download", url, "-o", output.path]), 0)
        XCTAssertEqual(try Data(contentsOf: output), try Data(contentsOf: source))
        XCTAssertTrue(nginx.logShows("\"GET /slow/4m.bin?killed=\(marker) HTTP/1.1\" 206"), "the second run asked for the rest only")
        for leftover in [output.path + ".partial", output.path + ".partial.json", resumeFile.path] {
            XCTAssertFalse(Self.exists(leftover), leftover)
        }
    }

    /// A continued download answered with a redirect it does not follow
    /// (`--max-redirs 0`) keeps its partial file as it was — the 3xx's body is
    /// not appended to it — and the next run still completes it byte-exact.
    func testARedirectNotFollowedLeavesAContinuedPartialFileAsItWas() throws {
        let server = try ScriptedServer()
        defer { server.shutdown() }
        let entity = Data((0..<2000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        let phase = Locked(0)
        server.route("/entity") { request in
            switch phase.value {
            case 0:
                // Cut after half of it: exit 18, the partial file holds 1000 bytes.
                return [.head(status: 200, headers: [("ETag", "\"e1\""), ("Content-Length", "2000")]), .body(entity.prefix(1000)), .close]
            case 1:
                return [.head(status: 302, headers: [("Location", "/elsewhere"), ("Content-Length", "5")]), .body(Data("moved".utf8)), .end]
            default:
                guard request.headers.first(name: "range") == "bytes=1000-" else {
                    return [.head(status: 200, headers: [("ETag", "\"e1\""), ("Content-Length", "2000")]), .body(entity), .end]
                }
                return [.head(status: 206, headers: [("ETag", "\"e1\""), ("Content-Range", "bytes 1000-1999/2000"), ("Content-Length", "1000")]),
                        .body(entity.suffix(1000)), .end]
            }
        }
        let (output, _) = temporaryOutput()
        let url = server.baseURL.absoluteString + "/entity"
        XCTAssertEqual(try run(["download", url, "-o", output.path]), 18, "cut short")
        XCTAssertEqual(Self.partialBytes(output), 1000)

        phase.value = 1
        XCTAssertEqual(try run(["download", "--max-redirs", "0", url, "-o", output.path]), 1, "a 3xx is not the file")
        XCTAssertEqual(server.requests.last?.headers.first(name: "range"), "bytes=1000-", "it continued")
        XCTAssertEqual(Self.partialBytes(output), 1000, "the 302's body is not part of the file")
        XCTAssertFalse(Self.exists(output.path))

        phase.value = 2
        XCTAssertEqual(try run(["download", url, "-o", output.path]), 0)
        XCTAssertEqual(try Data(contentsOf: output), entity)
    }

    /// Past `--max-redirs` (exit 47), a download or `get --resume` that
    /// started from zero leaves nothing: no output, no partial file holding
    /// the 3xx's body, no sidecar, no note.
    func testPastMaxRedirsNothingIsLeftBehind() throws {
        let nginx = try SharedServers.nginx()
        // Two redirects: /redirect/redirect/1k.bin → /redirect/1k.bin → /1k.bin.
        let url = nginx.httpURL.appendingPathComponent("redirect/redirect/1k.bin").absoluteString
        for command in [["download"], ["get", "--resume"]] {
            let (output, resumeFile) = temporaryOutput()
            XCTAssertEqual(try run(command + ["--max-redirs", "1", url, "-o", output.path]), 47, "\(command)")
            for leftover in [output.path, output.path + ".partial", output.path + ".partial.json", resumeFile.path] {
                XCTAssertFalse(Self.exists(leftover), "\(command): \(leftover)")
            }
        }
    }

    func testDamagedResumeDataStartsOver() throws {
        let nginx = try SharedServers.nginx()
        let (output, resumeFile) = temporaryOutput()
        try Data("not resume data".utf8).write(to: resumeFile)
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("1k.bin").absoluteString, "-o", output.path]), 0)
        XCTAssertEqual(try Data(contentsOf: output).count, 1024)
        // Not a note afn wrote (nothing says so), so not afn's to remove.
        XCTAssertEqual(try? Data(contentsOf: resumeFile), Data("not resume data".utf8))
    }

    func testAFailedDownloadExitsWithOne() throws {
        let nginx = try SharedServers.nginx()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-download-\(UUID().uuidString).bin")
        addTeardownBlock { try? FileManager.default.removeItem(at: output) }
        // nginx answers 500 under /status/: the serializer's status check fails the download.
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("status/x").absoluteString, "-o", output.path]), 1)
        XCTAssertEqual(try run(["download", "ftp://example.invalid/x", "-o", output.path]), 64, "a usage error")
    }

    /// afn never destroys a file it did not create: something of the note's
    /// name that is not afn's note (a directory, a user's file) stays.
    func testWhatIsAtTheNotesNameIsLeftAloneUnlessItIsAfnsNote() throws {
        let nginx = try SharedServers.nginx()
        let (output, resumeFile) = temporaryOutput()
        try FileManager.default.createDirectory(at: resumeFile, withIntermediateDirectories: false)
        let kept = resumeFile.appendingPathComponent("precious.txt")
        try Data("mine".utf8).write(to: kept)
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("status/x").absoluteString, "-o", output.path]), 1)
        XCTAssertEqual(try? Data(contentsOf: kept), Data("mine".utf8), "the directory and its file stay")
        try FileManager.default.removeItem(at: resumeFile)

        try Data("a user's notes".utf8).write(to: resumeFile)
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("status/x").absoluteString, "-o", output.path]), 1)
        XCTAssertEqual(try? Data(contentsOf: resumeFile), Data("a user's notes".utf8))
    }

    func testAnErrorStatusLeavesAnExistingOutputAsItWas() throws {
        let nginx = try SharedServers.nginx()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-download-\(UUID().uuidString).bin")
        addTeardownBlock { try? FileManager.default.removeItem(at: output) }
        let original = Data("the user's file".utf8)
        try original.write(to: output)
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("status/x").absoluteString, "-o", output.path]), 1)
        XCTAssertEqual(try? Data(contentsOf: output), original, "nginx's 500 page does not replace the file")
    }

    /// The first progress line of a resumed run counts only this run's bytes:
    /// its rate can be no more than (total − offset) over the bar's 1 ms floor
    /// (it read "53.8 MiB 22279.6 MiB/s": the offset over a few milliseconds).
    func testTheFirstProgressLineAfterAResumeCountsOnlyThisRunsBytes() throws {
        let nginx = try SharedServers.nginx()
        let (output, resumeFile) = temporaryOutput()
        let url = "\(nginx.httpURL.absoluteString)/slow/4m.bin?rate=\(UUID().uuidString)"
        XCTAssertEqual(try run(["download", url, "-o", output.path], interruptWhen: { _ in Self.partialBytes(output) >= 256 * 1024 }), 130)
        XCTAssertTrue(Self.exists(resumeFile.path), "what waits is noted")
        let offset = Self.partialBytes(output)
        let offsetMiB = Double(offset) / 1_048_576
        XCTAssertGreaterThan(offset, 0)

        let second = try AFNTool.run(["download", url, "-o", output.path])
        XCTAssertEqual(second.status, 0, second.stderr)
        let lines = second.stderr.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).filter { $0.contains("MiB/s") }
        let first = try XCTUnwrap(lines.first, "a progress line: \(second.stderr)")
        let numbers = first.split(separator: " ").compactMap { Double($0) }
        // "<label> <bar> <pct>% <total> MiB <rate> MiB/s": the last two numbers.
        XCTAssertGreaterThanOrEqual(numbers.count, 2, String(first))
        let total = numbers[numbers.count - 2], rate = numbers[numbers.count - 1]
        XCTAssertGreaterThanOrEqual(total + 0.05, offsetMiB, "the bar starts at the offset: \(first)")
        XCTAssertLessThanOrEqual(rate, max(0, total - offsetMiB) / 0.001 + 0.1,
                                 "the rate counts bytes that were on disk before this run: \(first)")
    }
}
