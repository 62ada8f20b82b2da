@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Downloads that survive the process, against nginx (Range, If-Range, ETag),
/// checked by SHA-256.
final class ResumableDownloadTests: OperationTestCase {
    private func fixture() throws -> NginxFixture { try SharedServers.nginx() }

    private var source: URL { ((try? fixture())?.directory ?? URL(fileURLWithPath: "/nonexistent")).appendingPathComponent("www/4m.bin") }
    private func sha256(_ url: URL) -> Data? { (try? Data(contentsOf: url)).flatMap(PublicKeyPins.sha256) }

    private func destination() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("afn-resume-\(UUID().uuidString).bin")
        addTeardownBlock {
            for suffix in ["", ".partial", ".partial.json"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        return url
    }

    private func etag(of url: URL) throws -> String {
        let head = HTTPRequestOperation(request: URLRequest(url: url))
        XCTAssertNil(run(head).error)
        return try XCTUnwrap(head.response?.value(forHTTPHeaderField: "ETag"))
    }

    /// Leaves what an interrupted process would: the first `bytes` and a sidecar.
    private func leavePartial(for url: URL, at destination: URL, bytes: Int, etag: String, expectedLength: Int64) throws {
        let data = try Data(contentsOf: source)
        try data.prefix(bytes).write(to: URL(fileURLWithPath: destination.path + ".partial"))
        let sidecar = ResumableFile.Sidecar(url: url.absoluteString, etag: etag, lastModified: nil, expectedLength: expectedLength)
        try JSONEncoder().encode(sidecar).write(to: URL(fileURLWithPath: destination.path + ".partial.json"))
    }

    func testAFreshDownloadLandsAtTheDestination() throws {
        let nginx = try fixture()
        let target = destination()
        let operation = try HTTPRequestOperation(request: URLRequest(url: nginx.httpURL.appendingPathComponent("4m.bin")), resumingDownloadTo: target)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(sha256(target), sha256(source))
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path + ".partial"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path + ".partial.json"))
    }

    func testContinuesFromWhatAnEarlierProcessLeft() throws {
        let nginx = try fixture()
        let url = nginx.httpURL.appendingPathComponent("4m.bin")
        let target = destination()
        try leavePartial(for: url, at: target, bytes: 1_000_000, etag: try etag(of: url), expectedLength: 4 * 1024 * 1024)
        let operation = try HTTPRequestOperation(request: URLRequest(url: url), resumingDownloadTo: target)
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "Range"), "bytes=1000000-")
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 206)
        XCTAssertEqual(sha256(target), sha256(source))
    }

    func testAChangedEntityStartsOverFromZero() throws {
        let nginx = try fixture()
        let url = nginx.httpURL.appendingPathComponent("4m.bin")
        let target = destination()
        // The validator no longer matches: nginx answers If-Range with a full 200.
        try leavePartial(for: url, at: target, bytes: 1_000_000, etag: "\"an-older-version\"", expectedLength: 4 * 1024 * 1024)
        var garbage = try Data(contentsOf: URL(fileURLWithPath: target.path + ".partial"))
        garbage.replaceSubrange(0..<100, with: Data(repeating: 0xEE, count: 100))
        try garbage.write(to: URL(fileURLWithPath: target.path + ".partial"))
        let operation = try HTTPRequestOperation(request: URLRequest(url: url), resumingDownloadTo: target)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.statusCode, 200)
        XCTAssertEqual(sha256(target), sha256(source))
    }

    func testAPartialFileLongerThanTheEntityStartsOver() throws {
        let nginx = try fixture()
        let url = nginx.httpURL.appendingPathComponent("1k.bin")
        let target = destination()
        try Data(repeating: 7, count: 5000).write(to: URL(fileURLWithPath: target.path + ".partial"))
        let sidecar = ResumableFile.Sidecar(url: url.absoluteString, etag: try etag(of: url), lastModified: nil, expectedLength: 1024)
        try JSONEncoder().encode(sidecar).write(to: URL(fileURLWithPath: target.path + ".partial.json"))
        let operation = try HTTPRequestOperation(request: URLRequest(url: url), resumingDownloadTo: target)
        XCTAssertNil(operation.request.value(forHTTPHeaderField: "Range"))
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(try Data(contentsOf: target), try Data(contentsOf: nginx.directory.appendingPathComponent("www/1k.bin")))
    }

    func testASecondProcessFinishesWhatAKilledOneStarted() throws {
        let nginx = try fixture()
        let afn = try AFNTool.executable()
        // A query of its own, so the log lines checked below are this test's.
        let tag = UUID().uuidString
        let url = try XCTUnwrap(URL(string: nginx.httpURL.absoluteString + "/slow/4m.bin?run=\(tag)"))
        let target = destination()
        func launch() throws -> Process {
            let process = Process()
            process.executableURL = afn
            process.arguments = ["get", "--resume", "--output", target.path, url.absoluteString]
            process.standardError = FileHandle.nullDevice
            try Fixtures.launch(process)
            return process
        }
        // First process: killed (SIGKILL, no chance to clean up) mid-body.
        let first = try launch()
        let partial = target.path + ".partial"
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let size = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
            if size > 600_000 { break }
            usleep(20_000)
        }
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        let left = (try? FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int) ?? 0
        XCTAssertGreaterThan(left, 0)
        XCTAssertLessThan(left, 4 * 1024 * 1024, "the first process must not have finished")
        XCTAssertTrue(FileManager.default.fileExists(atPath: target.path + ".partial.json"))
        // Second process: continues and completes.
        let second = try launch()
        let finishBy = Date().addingTimeInterval(60)
        while second.isRunning && Date() < finishBy { usleep(50_000) }
        if second.isRunning { second.terminate() }
        second.waitUntilExit()
        XCTAssertEqual(second.terminationStatus, 0)
        XCTAssertEqual(sha256(target), sha256(source))
        let request = "\"GET /slow/4m.bin?run=\(tag) HTTP/1.1\""
        XCTAssertTrue(nginx.logShows(request + " 206"), "the second process asked for the rest only")
        // Only the rest was sent: a full restart would show a second 200 and 4 MiB.
        let mine = nginx.accessLog.components(separatedBy: "\n").filter { $0.contains(request) }
        let ranged = mine.filter { $0.contains(request + " 206 ") }
        XCTAssertEqual(ranged.count, 1, mine.joined(separator: "\n"))
        XCTAssertEqual(mine.filter { $0.contains(request + " 200 ") }.count, 1, "only the killed first process got a 200")
        let sent = ranged.first.flatMap { line in
            line.components(separatedBy: request + " 206 ").last?.split(separator: " ").first.flatMap { Int($0) }
        }
        XCTAssertLessThan(sent ?? Int.max, 4 * 1024 * 1024, "the second process did not fetch the whole file")
        XCTAssertGreaterThanOrEqual((sent ?? 0) + left, 4 * 1024 * 1024, "the rest covers what the first left out")
    }
}
