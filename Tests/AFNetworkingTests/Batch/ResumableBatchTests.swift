@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `ResumableBatch` against the scripted server (what was asked, in which
/// order) and nginx (ETags and ranges): dependencies, skips, the manifest,
/// refusals that touch nothing, and files that are not the batch's.
final class ResumableBatchTests: OperationTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-batch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let directory = self.directory!
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
    }

    private var output: URL { directory.appendingPathComponent("out") }
    private var manifest: URL { directory.appendingPathComponent("batch.manifest") }

    private func body(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) })
    }

    /// Serves `body` at `path` with an ETag (so a partial file can be continued).
    private func serve(_ path: String, _ body: Data) {
        server.respond(path, headers: [("ETag", "\"\(path)\""), ("Content-Type", "application/octet-stream")], body: body)
    }

    private func paths(_ path: String) -> Int { server.requests.filter { $0.uri.hasPrefix(path) }.count }

    /// Runs the batch to its end (bounded).
    private func finish(_ batch: ResumableBatch, timeout: TimeInterval = 30,
                        file: StaticString = #filePath, line: UInt = #line) throws -> ResumableBatchReport {
        let result = Locked<Result<ResumableBatchReport, ResumableBatchError>?>(nil)
        let done = expectation(description: "batch")
        batch.start(queue: .global()) { result.value = $0; done.fulfill() }
        wait(for: [done], timeout: timeout)
        return try XCTUnwrap(result.value, "the batch did not end", file: file, line: line).get()
    }

    private func outcome(_ report: ResumableBatchReport, _ id: String) -> String {
        switch report[id]?.outcome {
        case .done?: return "done"
        case .alreadyDone?: return "alreadyDone"
        case .failed(let error)?: return "failed: \(error)"
        case .cancelled?: return "cancelled"
        case .skipped(let because)?: return "skipped(\(because))"
        case nil: return "missing"
        }
    }

    /// Every file under `root` with its bytes: what "nothing touched" compares.
    private func snapshot(_ root: URL) -> [String: Data] {
        var files: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return files }
        while let relative = walker.nextObject() as? String {
            let path = root.appendingPathComponent(relative).path
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            files[relative] = isDirectory.boolValue ? Data("<dir>".utf8) : (FileManager.default.contents(atPath: path) ?? Data())
        }
        return files
    }

    // MARK: - Dependencies

    /// b comes after a: its request reaches the server only once a's
    /// response has been written to the end (noted by the server itself).
    func testADependentStartsOnlyAfterItsDependencyFinished() throws {
        let aEnded = Locked(false)
        let bSawAEnded = Locked<Bool?>(nil)
        let half = body(2048, seed: 1)
        server.route("/a") { _ in
            [.head(status: 200, headers: [("Content-Length", "4096")]), .body(half), .wait(0.2), .body(half), .end,
             // Runs once the end has been written: before the client can have seen it.
             .waitUntil({ aEnded.value = true; return true }, timeout: 0)]
        }
        server.route("/b") { _ in
            bSawAEnded.value = aEnded.value
            return [.head(status: 200, headers: [("Content-Length", "1")]), .body(Data("b".utf8)), .end]
        }
        let batch = try ResumableBatch(entries: [
            ResumableBatchEntry(id: "b", url: url("/b"), dependencies: ["a"]),     // listed first on purpose
            ResumableBatchEntry(id: "a", url: url("/a")),
        ])
        let report = try finish(batch)
        XCTAssertEqual(bSawAEnded.value, true, "b was sent before a had finished")
        XCTAssertEqual(report.results.map(\.entry.id), ["b", "a"], "the report keeps the given order")
        XCTAssertTrue(report.allSucceeded)
        XCTAssertEqual(report["a"]?.body, half + half, "without an output directory the body is kept")
    }

    func testAFailedDependencySkipsItsDependentsAndSendsNothingForThem() throws {
        server.respond("/fail", status: 500, body: Data("boom".utf8))
        serve("/dep", Data("d".utf8))
        serve("/depdep", Data("dd".utf8))
        serve("/ok", Data("ok".utf8))
        let batch = try ResumableBatch(entries: [
            ResumableBatchEntry(id: "depdep", url: url("/depdep"), dependencies: ["dep"]),
            ResumableBatchEntry(id: "fail", url: url("/fail")),
            ResumableBatchEntry(id: "dep", url: url("/dep"), dependencies: ["fail", "ok"]),
            ResumableBatchEntry(id: "ok", url: url("/ok")),
        ], outputDirectory: output, manifest: manifest)
        let report = try finish(batch)
        XCTAssertTrue(outcome(report, "fail").hasPrefix("failed"), outcome(report, "fail"))
        XCTAssertEqual(report["fail"]?.statusCode, 500)
        XCTAssertEqual(outcome(report, "dep"), "skipped(fail)")
        XCTAssertEqual(outcome(report, "depdep"), "skipped(dep)")
        XCTAssertEqual(outcome(report, "ok"), "done")
        XCTAssertEqual(paths("/dep"), 0, "a skipped entry sends nothing")
        XCTAssertEqual(paths("/fail"), 1)
        // The error page is not kept as a partial file, and the manifest forgets it.
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: output.path)), ["ok"])
        let recorded = try XCTUnwrap(try ResumableBatchManifest.load(from: manifest.path))
        XCTAssertEqual(recorded.entries, ["ok": .init(state: .done, file: "ok", partial: nil)])
    }

    func testCancelledBeforeItStartsNothingIsSent() throws {
        serve("/c/a.bin", Data("a".utf8))
        serve("/c/b.bin", Data("b".utf8))
        let batch = try ResumableBatch(entries: [ResumableBatchEntry(id: "a", url: url("/c/a.bin")),
                                                 ResumableBatchEntry(id: "b", url: url("/c/b.bin"), dependencies: ["a"])])
        batch.cancel()
        let report = try finish(batch)
        XCTAssertEqual(outcome(report, "a"), "cancelled")
        // The graph settles a before b within one cancel: b may read as skipped because of a.
        XCTAssertTrue(["cancelled", "skipped(a)"].contains(outcome(report, "b")), outcome(report, "b"))
        XCTAssertEqual(server.requests.count, 0)
    }

    // MARK: - The manifest

    /// A second batch with the same list, directory and manifest sends
    /// nothing for what is done, and the files are as served.
    func testDoneEntriesAreNotSentAgain() throws {
        let one = body(100_000, seed: 3), two = body(5000, seed: 4)
        serve("/files/one.bin", one)
        serve("/files/two.bin", two)
        let entries = [
            ResumableBatchEntry(id: "one", url: url("/files/one.bin"), outputPath: "nested/dir/one.bin"),
            ResumableBatchEntry(id: "two", url: url("/files/two.bin"), dependencies: ["one"]),
        ]
        let first = try finish(try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest))
        XCTAssertTrue(first.allSucceeded)
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("nested/dir/one.bin")), one)
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("two.bin")), two)
        XCTAssertEqual(server.requests.count, 2)

        let second = try finish(try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest))
        XCTAssertEqual(outcome(second, "one"), "alreadyDone")
        XCTAssertEqual(outcome(second, "two"), "alreadyDone")
        XCTAssertEqual(server.requests.count, 2, "nothing sent again")
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("two.bin")), two)
    }

    /// A batch cancelled mid-body leaves its partial file (recorded in the
    /// manifest); the next batch continues it with a Range request and the
    /// file is byte-identical to nginx's.
    func testACancelledBatchContinuesItsPartialFileWithRange() throws {
        let nginx = try SharedServers.nginx()
        let source = nginx.directory.appendingPathComponent("www/4m.bin")
        let marker = UUID().uuidString
        let entries = [
            ResumableBatchEntry(id: "small", url: URL(string: "\(nginx.httpURL.absoluteString)/1k.bin?batch=\(marker)")!),
            ResumableBatchEntry(id: "big", url: URL(string: "\(nginx.httpURL.absoluteString)/4m.bin?batch=\(marker)")!,
                                dependencies: ["small"]),
        ]
        let first = try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest)
        first.maximumDownloadBytesPerSecond = 256 * 1024
        let result = Locked<ResumableBatchReport?>(nil)
        let done = expectation(description: "first")
        first.start(queue: .global()) { result.value = try? $0.get(); done.fulfill() }
        let partial = output.appendingPathComponent("4m.bin.partial").path
        let deadline = Date().addingTimeInterval(30)
        while (ResumableBatchPaths.fileSize(partial) ?? 0) < 64 * 1024, Date() < deadline { usleep(20_000) }
        first.cancel()
        wait(for: [done], timeout: 30)
        let cancelled = try XCTUnwrap(result.value)
        XCTAssertEqual(outcome(cancelled, "small"), "done")
        XCTAssertEqual(outcome(cancelled, "big"), "cancelled")
        let kept = try XCTUnwrap(ResumableBatchPaths.fileSize(partial))
        XCTAssertGreaterThanOrEqual(kept, 64 * 1024)
        XCTAssertLessThan(kept, 4 * 1024 * 1024, "the cap kept it from finishing")
        let recorded = try XCTUnwrap(try ResumableBatchManifest.load(from: manifest.path))
        XCTAssertEqual(recorded.entries["big"], .init(state: .started, file: "4m.bin", partial: "4m.bin.partial"))

        let second = try finish(try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest))
        XCTAssertEqual(outcome(second, "small"), "alreadyDone")
        XCTAssertEqual(outcome(second, "big"), "done")
        XCTAssertEqual(second["big"]?.resumedFrom, kept)
        XCTAssertEqual(second["big"]?.statusCode, 206)
        XCTAssertEqual(try Data(contentsOf: output.appendingPathComponent("4m.bin")), try Data(contentsOf: source))
        XCTAssertFalse(ResumableBatchPaths.exists(partial) || ResumableBatchPaths.exists(partial + ".json"))
        XCTAssertTrue(nginx.logShows("\"GET /4m.bin?batch=\(marker) HTTP/1.1\" 206"))
        XCTAssertEqual(nginx.accessLog.components(separatedBy: "GET /1k.bin?batch=\(marker) ").count - 1, 1, "small was sent once")
    }

    /// A corrupt manifest, one for another list, one for another directory:
    /// refused by init, nothing sent, nothing on disk changed.
    func testForeignOrCorruptManifestsAreRefusedAndNothingIsTouched() throws {
        serve("/f/a.bin", body(3000, seed: 5))
        serve("/f/b.bin", body(3000, seed: 6))
        let entries = [ResumableBatchEntry(id: "a", url: url("/f/a.bin")),
                       ResumableBatchEntry(id: "b", url: url("/f/b.bin"), dependencies: ["a"])]
        _ = try finish(try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest, listContent: Data("list".utf8)))
        let sent = server.requests.count
        let before = snapshot(directory)

        func refused(_ make: () throws -> ResumableBatch, _ check: (ResumableBatchError) -> Bool, line: UInt = #line) {
            do {
                _ = try make()
                XCTFail("accepted", line: line)
            } catch let error as ResumableBatchError {
                XCTAssertTrue(check(error), "\(error)", line: line)
                XCTAssertTrue(error.refusesBatch, line: line)
            } catch {
                XCTFail("\(error)", line: line)
            }
            XCTAssertEqual(snapshot(directory), before, "something was touched", line: line)
            XCTAssertEqual(server.requests.count, sent, line: line)
        }
        refused({ try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest, listContent: Data("list2".utf8)) }) {
            $0 == .foreignManifest(path: ResumableBatchPaths.canonical(self.manifest.path))
        }
        let elsewhere = directory.appendingPathComponent("elsewhere")
        refused({ try ResumableBatch(entries: entries, outputDirectory: elsewhere, manifest: manifest, listContent: Data("list".utf8)) }) {
            if case .manifestForAnotherDirectory = $0 { return true }
            return false
        }
        refused({ try ResumableBatch(entries: entries, manifest: manifest, listContent: Data("list".utf8)) }) {
            if case .manifestForAnotherDirectory(_, _, nil) = $0 { return true }
            return false
        }
        // Truncated mid-write (what an in-place writer leaves after a crash), then garbage.
        let good = try Data(contentsOf: manifest)
        for damaged in [good.prefix(good.count / 2), Data("{\"format\": 1}".utf8), Data([0xFF, 0x00])] {
            try damaged.write(to: manifest)
            let damagedBefore = snapshot(directory)
            do {
                _ = try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest, listContent: Data("list".utf8))
                XCTFail("accepted a damaged manifest")
            } catch ResumableBatchError.corruptManifest {
            } catch {
                XCTFail("\(error)")
            }
            XCTAssertEqual(snapshot(directory), damagedBefore)
        }
        XCTAssertEqual(server.requests.count, sent)
    }

    /// Each write replaces the manifest whole: while a batch runs, a reader
    /// never finds a manifest it cannot decode, and no temporary file stays;
    /// a write that cannot finish leaves the old manifest as it was.
    func testTheManifestIsReplacedAtomically() throws {
        for index in 0..<24 { serve("/m/\(index).bin", body(2000 + index, seed: UInt8(index))) }
        let entries = (0..<24).map { ResumableBatchEntry(id: "e\($0)", url: url("/m/\($0).bin"), dependencies: $0 > 0 ? ["e\($0 - 1)"] : []) }
        let batch = try ResumableBatch(entries: entries, outputDirectory: output, manifest: manifest)
        let stop = Locked(false)
        let reads = Locked((good: 0, bad: 0))
        let reader = Thread { [manifest = manifest.path] in
            // Bounded: stops when the batch has ended, or after 30 s.
            let deadline = Date().addingTimeInterval(30)
            while !stop.value, Date() < deadline {
                guard let data = FileManager.default.contents(atPath: manifest) else { continue }
                let decoded = try? JSONDecoder().decode(ResumableBatchManifest.self, from: data)
                reads.withLock { decoded == nil ? ($0.bad += 1) : ($0.good += 1) }
            }
        }
        reader.start()
        let report = try finish(batch)
        stop.value = true
        XCTAssertTrue(report.allSucceeded, report.results.map { outcome(report, $0.entry.id) }.joined(separator: "\n"))
        XCTAssertEqual(reads.value.bad, 0, "a reader saw a half-written manifest")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }
        XCTAssertEqual(leftovers, [], "no temporary file stays behind")
        XCTAssertEqual(try XCTUnwrap(try ResumableBatchManifest.load(from: manifest.path)).entries.count, 24)

        // A rename that fails (the target is a directory) leaves no temporary file and nothing changed.
        let blocked = directory.appendingPathComponent("blocked")
        try FileManager.default.createDirectory(at: blocked.appendingPathComponent("inside"), withIntermediateDirectories: true)
        XCTAssertThrowsError(try ResumableBatchManifest(listSHA256: "x", outputDirectory: nil).write(to: blocked.path))
        XCTAssertTrue(ResumableBatchPaths.exists(blocked.appendingPathComponent("inside").path))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.contains(".tmp-") }, [])
    }

    // MARK: - Files that are not the batch's

    func testAFileTheBatchDidNotMakeIsNeverWrittenOver() throws {
        serve("/x/mine.bin", Data("theirs".utf8))
        serve("/x/after.bin", Data("after".utf8))
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let mine = output.appendingPathComponent("mine.bin")
        try Data("mine".utf8).write(to: mine)
        let report = try finish(try ResumableBatch(entries: [
            ResumableBatchEntry(id: "mine", url: url("/x/mine.bin")),
            ResumableBatchEntry(id: "after", url: url("/x/after.bin"), dependencies: ["mine"]),
        ], outputDirectory: output, manifest: manifest))
        guard case .failed(let error)? = report["mine"]?.outcome else { return XCTFail(outcome(report, "mine")) }
        XCTAssertEqual(error as? ResumableBatchError, .outputExists(id: "mine", path: output.path + "/mine.bin"))
        XCTAssertEqual(outcome(report, "after"), "skipped(mine)")
        XCTAssertEqual(try Data(contentsOf: mine), Data("mine".utf8))
        XCTAssertEqual(server.requests.count, 0)
        XCTAssertFalse(ResumableBatchPaths.exists(mine.path + ".partial"))
    }

    func testAPartialFileWithoutItsSidecarIsNotEmptied() throws {
        serve("/x/p.bin", Data("served".utf8))
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        let partial = output.appendingPathComponent("p.bin.partial")
        try Data("someone's".utf8).write(to: partial)
        let report = try finish(try ResumableBatch(entries: [ResumableBatchEntry(id: "p", url: url("/x/p.bin"))], outputDirectory: output))
        guard case .failed(let error)? = report["p"]?.outcome else { return XCTFail(outcome(report, "p")) }
        XCTAssertEqual(error as? ResumableBatchError, .foreignPartialFile(id: "p", path: partial.path))
        XCTAssertEqual(try Data(contentsOf: partial), Data("someone's".utf8))
        XCTAssertEqual(server.requests.count, 0)
    }

    /// A symbolic link planted in the output directory does not lead a body outside it.
    func testASymbolicLinkOnTheWayFailsTheEntry() throws {
        serve("/x/f.bin", Data("body".utf8))
        let outside = directory.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: output.appendingPathComponent("link"), withDestinationURL: outside)
        let report = try finish(try ResumableBatch(entries: [ResumableBatchEntry(id: "f", url: url("/x/f.bin"), outputPath: "link/f.bin")],
                                                   outputDirectory: output))
        guard case .failed(let error)? = report["f"]?.outcome, case .unsafeOutputPath? = error as? ResumableBatchError else {
            return XCTFail(outcome(report, "f"))
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside.path), [])
        XCTAssertEqual(server.requests.count, 0)
    }

    func testANonHTTPURLFailsItsEntryOnly() throws {
        serve("/x/ok.bin", Data("ok".utf8))
        let report = try finish(try ResumableBatch(entries: [
            ResumableBatchEntry(id: "file", url: URL(fileURLWithPath: "/etc/hostname")),
            ResumableBatchEntry(id: "ok", url: url("/x/ok.bin")),
        ], outputDirectory: output))
        guard case .failed(let error)? = report["file"]?.outcome else { return XCTFail(outcome(report, "file")) }
        XCTAssertEqual(error as? ResumableBatchError, .unsupportedURL(id: "file"))
        XCTAssertEqual(outcome(report, "ok"), "done")
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: output.path)), ["ok.bin"])
    }
}
