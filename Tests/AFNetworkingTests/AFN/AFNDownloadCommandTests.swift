@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `afn download`, the real binary against nginx: interrupted with SIGINT
/// mid-body it saves resume data; the next run continues with a ranged
/// request and the file is byte-identical.
final class AFNDownloadCommandTests: XCTestCase {
    private func afn() throws -> URL {
        try AFNTool.executable()
    }

    /// The size of the download file (`AFNetworking-Download-….tmp`) process `pid` holds open, if any.
    private static func downloadFileBytes(of pid: Int32) -> Int {
        let fds = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []
        for name in names {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fds)/\(name)"),
                  (target as NSString).lastPathComponent.hasPrefix("AFNetworking-Download-") else { continue }
            return ((try? FileManager.default.attributesOfItem(atPath: target))?[.size] as? Int) ?? 0
        }
        return 0
    }

    private func run(_ arguments: [String], interruptWhen condition: ((Process) -> Bool)? = nil, timeout: TimeInterval = 60) throws -> Int32 {
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
                kill(process.processIdentifier, SIGINT)
                interrupted = true
            }
            usleep(20_000)
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// An output path and the resume file afn keeps next to it, both removed after the test.
    private func temporaryOutput() -> (output: URL, resumeFile: URL) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-download-\(UUID().uuidString).bin")
        let resumeFile = URL(fileURLWithPath: output.path + ".afnresume")
        addTeardownBlock {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(at: resumeFile)
        }
        return (output, resumeFile)
    }

    func testAnInterruptedDownloadContinuesOnTheNextRunByteExact() throws {
        let nginx = try SharedServers.nginx()
        let source = nginx.directory.appendingPathComponent("www/4m.bin")
        let (output, resumeFile) = temporaryOutput()
        let marker = UUID().uuidString
        let url = "\(nginx.httpURL.absoluteString)/slow/4m.bin?run=\(marker)"
        // Interrupted mid-body: once the download file it writes holds 256 KiB (of 4 MiB sent at 512 KiB/s).
        let first = try run(["download", url, "-o", output.path], interruptWhen: { Self.downloadFileBytes(of: $0.processIdentifier) >= 256 * 1024 })
        XCTAssertEqual(first, 130, "interrupted")
        XCTAssertTrue(FileManager.default.fileExists(atPath: resumeFile.path), "resume data saved")
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path), "nothing at the output until complete")

        let second = try run(["download", url, "-o", output.path])
        XCTAssertEqual(second, 0)
        XCTAssertEqual(try Data(contentsOf: output), try Data(contentsOf: source))
        XCTAssertFalse(FileManager.default.fileExists(atPath: resumeFile.path), "resume data removed once done")
        XCTAssertTrue(nginx.logShows("\"GET /slow/4m.bin?run=\(marker) HTTP/1.1\" 206"), "the second run asked for the rest only")
    }

    func testDamagedResumeDataStartsOver() throws {
        let nginx = try SharedServers.nginx()
        let (output, resumeFile) = temporaryOutput()
        try Data("not resume data".utf8).write(to: resumeFile)
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("1k.bin").absoluteString, "-o", output.path]), 0)
        XCTAssertEqual(try Data(contentsOf: output).count, 1024)
        XCTAssertFalse(FileManager.default.fileExists(atPath: resumeFile.path))
    }

    func testAFailedDownloadExitsWithOne() throws {
        let nginx = try SharedServers.nginx()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-download-\(UUID().uuidString).bin")
        addTeardownBlock { try? FileManager.default.removeItem(at: output) }
        // nginx answers 500 under /status/: the serializer's status check fails the download.
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("status/x").absoluteString, "-o", output.path]), 1)
        XCTAssertEqual(try run(["download", "ftp://example.invalid/x", "-o", output.path]), 64, "a usage error")
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

    /// A killed `afn download` cannot delete its partial file: the first
    /// download of a later process removes it once it is a day old.
    func testADownloadSweepsPartialFilesAbandonedForADay() throws {
        let nginx = try SharedServers.nginx()
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-download-\(UUID().uuidString).bin")
        let directory = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let abandoned = directory.appendingPathComponent("AFNetworking-Download-\(UUID().uuidString).tmp")
        let recent = directory.appendingPathComponent("AFNetworking-Download-\(UUID().uuidString).tmp")
        addTeardownBlock {
            for url in [output, abandoned, recent] { try? FileManager.default.removeItem(at: url) }
        }
        try Data(repeating: 7, count: 4096).write(to: abandoned)
        try Data(repeating: 7, count: 4096).write(to: recent)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-25 * 3600)], ofItemAtPath: abandoned.path)
        XCTAssertEqual(try run(["download", nginx.httpURL.appendingPathComponent("1k.bin").absoluteString, "-o", output.path]), 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: abandoned.path), "untouched for 25 hours: swept")
        XCTAssertTrue(FileManager.default.fileExists(atPath: recent.path), "recent: left alone")
    }

    /// The first progress line of a resumed run counts only this run's bytes:
    /// its rate can be no more than (total − offset) over the bar's 1 ms floor
    /// (it read "53.8 MiB 22279.6 MiB/s": the offset over a few milliseconds).
    func testTheFirstProgressLineAfterAResumeCountsOnlyThisRunsBytes() throws {
        let nginx = try SharedServers.nginx()
        let (output, resumeFile) = temporaryOutput()
        let url = "\(nginx.httpURL.absoluteString)/slow/4m.bin?rate=\(UUID().uuidString)"
        XCTAssertEqual(try run(["download", url, "-o", output.path],
                               interruptWhen: { Self.downloadFileBytes(of: $0.processIdentifier) >= 256 * 1024 }), 130)
        let resume = try XCTUnwrap(DownloadResumeData.decode(Data(contentsOf: resumeFile)), "resume data saved")
        let offsetMiB = Double(resume.bytesWritten) / 1_048_576
        XCTAssertGreaterThan(resume.bytesWritten, 0)

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
