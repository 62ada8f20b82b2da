@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The partial files of session downloads (`AFNetworking-Download-*.tmp` in
/// the temporary directory): kept only when resume data that names them
/// reached the caller, swept at start-up once abandoned; an async download
/// never leaves an error page at its destination; finished files get the
/// mode a new file gets (0666 less the umask), partial files 0600.
final class PartialDownloadFileTests: SessionTransferTestCase {
    /// A body that begins with a fresh UUID, so its partial file is found
    /// among any others in the temporary directory.
    private func uniqueBody(_ count: Int) -> Data {
        var body = Data(UUID().uuidString.utf8)
        body.append(pattern(count - body.count, salt: 5))
        return body
    }

    /// Serves `body` at `path`: the head and the first `split` bytes at once,
    /// then a stall (the connection stays open) before the rest.
    private func serveStalling(_ path: String, body: Data, split: Int, validators: [(String, String)] = [("ETag", "\"v1\"")]) {
        server.route(path) { _ in
            [.head(status: 200, headers: validators + [("Content-Length", "\(body.count)")]),
             .body(body.subdata(in: 0..<split)), .wait(10), .body(body.subdata(in: split..<body.count)), .end]
        }
    }

    /// This package's download files in the temporary directory that begin with `prefix`.
    private func partialFiles(beginningWith prefix: Data) -> [URL] {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix("AFNetworking-Download-") && $0.hasSuffix(".tmp") }.compactMap { name in
            let url = directory.appendingPathComponent(name)
            guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
            defer { try? handle.close() }
            return handle.readData(ofLength: prefix.count) == prefix ? url : nil
        }
    }

    /// The partial file of a running download of `body`, once its first bytes are on disk.
    private func runningPartialFile(of body: Data, file: StaticString = #filePath, line: UInt = #line) throws -> URL {
        var found: URL?
        _ = eventually(timeout: 10) {
            found = partialFiles(beginningWith: body.prefix(36)).first
            return found != nil
        }
        return try XCTUnwrap(found, "the download's partial file appeared in the temporary directory", file: file, line: line)
    }

    private func mode(_ url: URL) -> mode_t? {
        var info = stat()
        return stat(url.path, &info) == 0 ? info.st_mode & 0o777 : nil
    }

    // MARK: Cancel and failure

    func testPlainCancelRemovesThePartialFileAndHandsOutNoResumeData() throws {
        let body = uniqueBody(300_000)
        serveStalling("/stall", body: body, split: 100_000)
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "cancelled download completes")
        let task = manager.downloadTask(with: request("/stall"), progress: nil, destination: { _, _ in
            XCTFail("a cancelled download is never moved")
            return URL(fileURLWithPath: "/nonexistent")
        }, completionHandler: downloadRecorder(outcome, done))
        task.resume()
        let partial = try runningPartialFile(of: body)
        XCTAssertEqual(mode(partial), 0o600, "a partial file in the shared temporary directory is private")
        task.cancel()
        wait(for: [done], timeout: 15)
        XCTAssertEqual(outcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertNil(outcome.value.error?.userInfo[URLSessionDownloadTaskResumeData], "cancel() asks for no resume data")
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path), "nothing names the partial file any more: it is gone")
    }

    func testCancelByProducingResumeDataKeepsThePartialFileItNames() throws {
        let body = uniqueBody(300_000)
        serveStalling("/stall-resume", body: body, split: 100_000)
        let manager = makeManager()
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "cancelled download completes")
        let task = manager.downloadTask(with: request("/stall-resume"), progress: nil, destination: nil,
                                        completionHandler: downloadRecorder(outcome, done))
        task.resume()
        let partial = try runningPartialFile(of: body)
        addTeardownBlock { try? FileManager.default.removeItem(at: partial) }
        let produced = expectation(description: "resume data")
        let resumeData = Locked<Data?>(nil)
        task.cancel(byProducingResumeData: { data in
            resumeData.withLock { $0 = data }
            produced.fulfill()
        })
        wait(for: [produced, done], timeout: 15)
        XCTAssertNotNil(resumeData.value)
        XCTAssertTrue(FileManager.default.fileExists(atPath: partial.path), "the resume data names the file: it stays")
    }

    func testACancelledAsyncDownloadThatCannotResumeRemovesThePartialFile() async throws {
        let body = uniqueBody(300_000)
        // No validator: a later request could not be checked to continue the same file, so there is no resume data.
        serveStalling("/stall-async", body: body, split: 100_000, validators: [])
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = DispatchQueue(label: "partial-async")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("afn-async-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let request = self.request("/stall-async")
        let waiter = Task { () -> Error? in
            do {
                _ = try await manager.download(for: request, to: destination)
                return nil
            } catch {
                return error
            }
        }
        var partial: URL?
        let deadline = Date().addingTimeInterval(10)
        while partial == nil, Date() < deadline {
            partial = partialFiles(beginningWith: body.prefix(36)).first
            if partial == nil { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        let file = try XCTUnwrap(partial, "the download's partial file appeared")
        waiter.cancel()
        let error = await waiter.value
        XCTAssertTrue(error is CancellationError, "\(String(describing: error))")
        // The await ends at the cancel; the task ends (and cleans up) on its delegate queue right after.
        var gone = false
        let cleanupDeadline = Date().addingTimeInterval(10)
        while !gone, Date() < cleanupDeadline {
            gone = !FileManager.default.fileExists(atPath: file.path)
            if !gone { try await Task.sleep(nanoseconds: 20_000_000) }
        }
        XCTAssertTrue(gone, "no resume data names the file: it is removed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path))
    }

    // MARK: Error pages

    func testAsyncDownloadOfA404LeavesNoErrorPageAtTheDestination() async throws {
        server.respond("/missing", status: 404, headers: [("Content-Type", "text/html")], body: Data("<h1>Not Found</h1>".utf8))
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = DispatchQueue(label: "partial-404")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("afn-404-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        do {
            _ = try await manager.download(for: request("/missing"), to: destination)
            XCTFail("a 404 throws")
        } catch {
            let error = error as NSError
            XCTAssertEqual(error.domain, AFURLResponseSerializationErrorDomain, "\(error)")
            XCTAssertEqual(error.code, NSURLErrorBadServerResponse)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "the error page is not the download")
    }

    func testAsyncDownloadOfA404LeavesAnExistingFileAsItWas() async throws {
        server.respond("/missing", status: 404, headers: [("Content-Type", "text/html")], body: Data("<h1>Not Found</h1>".utf8))
        let manager = URLSessionManager(sessionConfiguration: nil)
        manager.completionQueue = DispatchQueue(label: "partial-404-existing")
        defer { manager.invalidateSessionCancelingTasks(true) }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("afn-404-existing-\(UUID().uuidString)")
        let original = Data("the user's file".utf8)
        try original.write(to: destination)
        defer { try? FileManager.default.removeItem(at: destination) }
        do {
            _ = try await manager.download(for: request("/missing"), to: destination)
            XCTFail("a 404 throws")
        } catch {
            XCTAssertEqual((error as NSError).code, NSURLErrorBadServerResponse, "the status error, not a file error: \(error)")
        }
        XCTAssertEqual(try? Data(contentsOf: destination), original)
    }

    // MARK: Modes

    func testAFinishedSessionDownloadGetsTheModeANewFileGets() throws {
        let body = uniqueBody(50_000)
        server.respond("/file", headers: [("Content-Type", "application/octet-stream")], body: body)
        let target = temporaryURL("mode")
        let (_, outcome) = runDownload(makeManager(), request("/file"), destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(try? Data(contentsOf: target), body)
        XCTAssertEqual(mode(target), 0o666 & ~FileModes.currentUmask, "as open(2) with 0666 makes a new file (curl -o)")
    }

    func testARestartProofDownloadIsPrivateWhilePartialAndThenGetsTheModeANewFileGets() throws {
        let body = uniqueBody(300_000)
        let requests = Locked(0)
        // The first request stalls after 100,000 bytes; the one after the pause gets the whole body.
        server.route("/restart-proof") { _ in
            let head = ScriptedServer.Step.head(status: 200, headers: [("ETag", "\"r1\""), ("Content-Length", "\(body.count)")])
            if requests.increment() > 1 { return [head, .body(body), .end] }
            return [head, .body(body.subdata(in: 0..<100_000)), .wait(10), .body(body.subdata(in: 100_000..<body.count)), .end]
        }
        let target = temporaryURL("restart-proof")
        addTeardownBlock { try? FileManager.default.removeItem(atPath: target.path + ".partial.json") }
        // umask 002 (a shared-group setup): a new file is 0664, which 0644 or 0600 would not be.
        let previous = umask(0o002)
        defer { umask(previous) }
        let operation = try HTTPRequestOperation(request: request("/restart-proof"), resumingDownloadTo: target)
        let outcome = Locked(Outcome())
        let done = expectation(description: "restart-proof download")
        record(operation, into: outcome) { done.fulfill() }
        operation.start()
        let partial = URL(fileURLWithPath: target.path + ".partial")
        XCTAssertTrue(eventually(timeout: 10) { (self.fileSize(partial) ?? 0) >= 100_000 }, "the partial file filled")
        operation.pause()
        XCTAssertEqual(mode(partial), 0o600, "private while partial")
        operation.resume()
        wait(for: [done], timeout: 30)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(try? Data(contentsOf: target), body)
        XCTAssertEqual(mode(target), 0o664, "0666 less the umask, as curl -o makes it")
    }

    // MARK: Sweep

    func testTheSweepRemovesOnlyAbandonedFilesOfThisPackage() throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let old = directory.appendingPathComponent("AFNetworking-Download-\(UUID().uuidString).tmp")
        let fresh = directory.appendingPathComponent("AFNetworking-Download-\(UUID().uuidString).tmp")
        let foreign = directory.appendingPathComponent("someone-else-\(UUID().uuidString).tmp")
        for url in [old, fresh, foreign] {
            try Data("x".utf8).write(to: url)
            addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        }
        let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
        for url in [old, foreign] {
            try FileManager.default.setAttributes([.modificationDate: twoDaysAgo], ofItemAtPath: url.path)
        }
        let removed = DownloadFile.sweepAbandoned(olderThan: DownloadFile.abandonedAge)
        XCTAssertTrue(removed.contains(old))
        XCTAssertFalse(FileManager.default.fileExists(atPath: old.path), "older than a day: abandoned")
        XCTAssertTrue(FileManager.default.fileExists(atPath: fresh.path), "recent: may belong to a running download or fresh resume data")
        XCTAssertTrue(FileManager.default.fileExists(atPath: foreign.path), "not this package's name")
    }
}
