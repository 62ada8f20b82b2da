@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Download tasks of `URLSessionManager`: the temporary file and its move,
/// the finish-block precedence, move failures (2.7 reported success with a
/// path where no file was: issues 2604, 3617, 3775, 3799), resume data
/// (Range/If-Range, 206/200 answers, damaged data) and suspension, against
/// nginx (SHA-256 of its 4m.bin) and scripted servers.
final class SessionDownloadTests: SessionTransferTestCase {
    private let fourMiB: Int64 = 4 * 1024 * 1024

    private func nginx() throws -> NginxFixture { try SharedServers.nginx() }

    private func source(_ nginx: NginxFixture, _ name: String = "4m.bin") -> URL {
        nginx.directory.appendingPathComponent("www/\(name)")
    }

    /// An nginx URL with a query that makes its access-log line unique.
    private func tagged(_ nginx: NginxFixture, _ path: String, _ tag: String) -> URL {
        URL(string: "\(nginx.httpURL.absoluteString)/\(path)?\(tag)")!
    }

    // MARK: Temporary file and destination

    func testDownloadGoesThroughATemporaryFileAndIsMovedByteExact() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let target = temporaryURL("download")
        struct Seen { var temporary: URL?; var existed = false; var size: Int64?; var status: Int?; var calls = 0 }
        let seen = Locked(Seen())
        let (task, outcome) = runDownload(manager, URLRequest(url: nginx.httpURL.appendingPathComponent("4m.bin")), destination: { temporary, response in
            let existed = FileManager.default.fileExists(atPath: temporary.path)
            let size = SessionTransferTestCase.fileSize(temporary)
            seen.withLock {
                $0.temporary = temporary
                $0.existed = existed
                $0.size = size
                $0.status = (response as? HTTPURLResponse)?.statusCode
                $0.calls += 1
            }
            return target
        })
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertNil(outcome.error)
        XCTAssertTrue(outcome.onMainThread, "completion handlers run on the main queue by default")
        XCTAssertEqual(outcome.fileURL?.standardizedFileURL, target.standardizedFileURL)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(sha256(target), sha256(source(nginx)), "the moved file is nginx's 4m.bin, byte for byte")
        XCTAssertEqual(task.state, .completed)

        let observed = seen.value
        XCTAssertEqual(observed.calls, 1, "the destination block is asked once")
        let temporary = try XCTUnwrap(observed.temporary)
        XCTAssertTrue(isInTemporaryDirectory(temporary), "\(temporary.path) is not in NSTemporaryDirectory()")
        XCTAssertTrue(observed.existed, "the body is complete in the temporary file when the destination is asked")
        XCTAssertEqual(observed.size, fourMiB)
        XCTAssertEqual(observed.status, 200)
        XCTAssertNotEqual(temporary.standardizedFileURL, target.standardizedFileURL)
        XCTAssertFalse(FileManager.default.fileExists(atPath: temporary.path), "the file was moved, not copied")
    }

    func testSuccessfulMovePostsTheSuccessNotificationWithTheTask() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let target = temporaryURL("moved")
        struct Posted { var objects: [ObjectIdentifier] = []; var fromOperationQueue: [Bool] = [] }
        let posted = Locked(Posted())
        let failures = Locked(0)
        let observers = [
            NotificationCenter.default.addObserver(forName: .AFURLSessionDownloadTaskDidMoveFileSuccessfully, object: nil, queue: nil) { note in
                guard let object = note.object as AnyObject? else { return }
                let onQueue = OperationQueue.current === manager.operationQueue
                posted.withLock { $0.objects.append(ObjectIdentifier(object)); $0.fromOperationQueue.append(onQueue) }
            },
            NotificationCenter.default.addObserver(forName: .AFURLSessionDownloadTaskDidFailToMoveFile, object: nil, queue: nil) { _ in
                failures.increment()
            },
        ]
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let (task, outcome) = runDownload(manager, URLRequest(url: nginx.httpURL.appendingPathComponent("1k.bin")),
                                          destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(try? Data(contentsOf: target), try? Data(contentsOf: source(nginx, "1k.bin")))
        let identity = ObjectIdentifier(task)
        XCTAssertTrue(eventually { posted.value.objects.contains(identity) }, "AFURLSessionDownloadTaskDidMoveFileSuccessfully names the task")
        let mine = posted.value
        XCTAssertEqual(mine.objects.filter { $0 == identity }.count, 1)
        XCTAssertEqual(zip(mine.objects, mine.fromOperationQueue).filter { $0.0 == identity }.map(\.1), [true],
                       "posted from operationQueue")
        XCTAssertEqual(failures.value, 0)
    }

    func testManagerFinishBlockWinsOverTheTaskDestination() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let managerTarget = temporaryURL("manager-target")
        let taskTarget = temporaryURL("task-target")
        let managerCalls = Locked(0)
        manager.setDownloadTaskDidFinishDownloadingBlock { _, _, _ in
            managerCalls.increment()
            return managerTarget
        }
        let destinationCalls = Locked(0)
        let (_, outcome) = runDownload(manager, URLRequest(url: nginx.httpURL.appendingPathComponent("1k.bin")), destination: { _, _ in
            destinationCalls.increment()
            return taskTarget
        })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(managerCalls.value, 1)
        XCTAssertEqual(destinationCalls.value, 0, "the task's destination is not asked when the manager block returned a URL")
        XCTAssertEqual(outcome.fileURL?.standardizedFileURL, managerTarget.standardizedFileURL)
        XCTAssertEqual(try? Data(contentsOf: managerTarget), try? Data(contentsOf: source(nginx, "1k.bin")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: taskTarget.path))
    }

    func testTaskDestinationIsAskedWhenTheManagerBlockReturnsNil() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let taskTarget = temporaryURL("task-target")
        let locations = Locked<[URL]>([])
        manager.setDownloadTaskDidFinishDownloadingBlock { _, _, location in
            locations.append(location)
            return nil
        }
        let (_, outcome) = runDownload(manager, URLRequest(url: nginx.httpURL.appendingPathComponent("1k.bin")), destination: { location, _ in
            locations.append(location)
            return taskTarget
        })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(locations.value.count, 2, "manager block first, then the task's destination")
        XCTAssertEqual(Set(locations.value.map(\.standardizedFileURL)).count, 1, "both see the same temporary file")
        XCTAssertEqual(outcome.fileURL?.standardizedFileURL, taskTarget.standardizedFileURL)
        XCTAssertEqual(try? Data(contentsOf: taskTarget), try? Data(contentsOf: source(nginx, "1k.bin")))
    }

    func testExistingDestinationFailsWithFileManagersErrorAndTheFailureNotification() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let target = temporaryURL("occupied")
        try Data("already here".utf8).write(to: target)

        // What FileManager itself reports for such a move, for comparison.
        let probeSource = temporaryURL("probe-source")
        let probeTarget = temporaryURL("probe-target")
        try Data("a".utf8).write(to: probeSource)
        try Data("b".utf8).write(to: probeTarget)
        var probeError: NSError?
        do { try FileManager.default.moveItem(at: probeSource, to: probeTarget) } catch { probeError = error as NSError }
        let expected = try XCTUnwrap(probeError, "FileManager refuses to move onto an existing file")
        XCTAssertEqual(expected.domain, NSCocoaErrorDomain)

        struct Posted { var object: ObjectIdentifier?; var keys: Set<String> = []; var calls = 0 }
        let failure = Locked(Posted())
        let successes = Locked(0)
        let observers = [
            NotificationCenter.default.addObserver(forName: .AFURLSessionDownloadTaskDidFailToMoveFile, object: nil, queue: nil) { note in
                let object = (note.object as AnyObject?).map { ObjectIdentifier($0) }
                let keys = Set((note.userInfo ?? [:]).keys.map { "\($0)" })
                failure.withLock { $0.object = object; $0.keys = keys; $0.calls += 1 }
            },
            NotificationCenter.default.addObserver(forName: .AFURLSessionDownloadTaskDidMoveFileSuccessfully, object: nil, queue: nil) { _ in
                successes.increment()
            },
        ]
        defer { observers.forEach(NotificationCenter.default.removeObserver) }

        let (task, outcome) = runDownload(manager, URLRequest(url: nginx.httpURL.appendingPathComponent("1k.bin")),
                                          destination: { _, _ in target })
        XCTAssertEqual(outcome.calls, 1)
        let error = try XCTUnwrap(outcome.error, "a failed move is the completion handler's error (2.7 reported success)")
        XCTAssertEqual(error.domain, NSCocoaErrorDomain)
        XCTAssertEqual(error.code, expected.code, "FileManager's own code")
        XCTAssertNil(outcome.fileURL, "no path where no file was moved")
        XCTAssertEqual(try? Data(contentsOf: target), Data("already here".utf8), "the existing file is untouched")

        XCTAssertTrue(eventually { failure.value.calls > 0 }, "AFURLSessionDownloadTaskDidFailToMoveFile is posted")
        let posted = failure.value
        XCTAssertEqual(posted.calls, 1)
        XCTAssertEqual(posted.object, ObjectIdentifier(task), "the notification's object is the task")
        XCTAssertEqual(posted.keys, Set(error.userInfo.keys.map { "\($0)" }), "userInfo is the move error's userInfo")
        XCTAssertEqual(successes.value, 0)
    }

    func testWithoutDestinationTheTemporaryFileIsGoneBeforeTheHandler() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let location = Locked<URL?>(nil)
        manager.setDownloadTaskDidFinishDownloadingBlock { _, _, temporary in
            location.value = temporary
            return nil
        }
        let existedInHandler = Locked<Bool?>(nil)
        let (_, outcome) = runDownload(manager, URLRequest(url: nginx.httpURL.appendingPathComponent("1k.bin")), destination: nil,
                                       inspect: {
                                           existedInHandler.value = location.value.map { FileManager.default.fileExists(atPath: $0.path) }
                                       })
        XCTAssertNil(outcome.error)
        XCTAssertNil(outcome.fileURL, "2.7 passed the serializer's output here; no destination means no path")
        XCTAssertNotNil(location.value, "the finish block saw the temporary file")
        XCTAssertEqual(existedInHandler.value, false, "the temporary file is deleted before the completion handler runs")
    }

    func testA404DownloadIsMovedAndReportsTheStatusCodeError() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let target = temporaryURL("not-found")
        let url = nginx.httpURL.appendingPathComponent("missing-\(UUID().uuidString).bin")
        let (_, outcome) = runDownload(manager, URLRequest(url: url), destination: { _, _ in target })
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 404)
        let error = try XCTUnwrap(outcome.error, "the response serializer checks the status code of a download")
        XCTAssertEqual(error.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(error.localizedDescription, "Request failed: not found (404)")
        XCTAssertEqual(outcome.fileURL?.standardizedFileURL, target.standardizedFileURL, "the file is still moved and its path passed")
        let body = try Data(contentsOf: target)
        XCTAssertFalse(body.isEmpty, "nginx's error page was downloaded")
        XCTAssertNotNil(body.range(of: Data("404".utf8)))
    }

    func testWriteDataBlockAndProgressReachTheWholeFile() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let target = temporaryURL("progress")
        struct Write { var bytes: Int64; var total: Int64; var expected: Int64; var onQueue: Bool }
        let writes = Locked<[Write]>([])
        manager.setDownloadTaskDidWriteDataBlock { _, _, bytes, total, expected in
            let onQueue = OperationQueue.current === manager.operationQueue
            writes.append(Write(bytes: bytes, total: total, expected: expected, onQueue: onQueue))
        }
        let fractions = Locked<[Double]>([])
        let (_, outcome) = runDownload(manager, URLRequest(url: nginx.httpURL.appendingPathComponent("4m.bin")),
                                       progress: { fractions.append($0.fractionCompleted) }, destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(sha256(target), sha256(source(nginx)))
        let seen = writes.value
        XCTAssertFalse(seen.isEmpty)
        XCTAssertEqual(seen.map(\.bytes).reduce(0, +), fourMiB, "the chunks add up to the file")
        XCTAssertEqual(seen.last?.total, fourMiB)
        XCTAssertTrue(seen.allSatisfy { $0.expected == fourMiB }, "expected is nginx's Content-Length")
        XCTAssertTrue(seen.allSatisfy { $0.bytes > 0 })
        XCTAssertTrue(seen.allSatisfy(\.onQueue), "delegate blocks run on operationQueue")
        var previous: Int64 = 0
        for write in seen {
            XCTAssertEqual(write.total - previous, write.bytes, "total grows by the bytes of each call")
            previous = write.total
        }
        XCTAssertEqual(fractions.value.last, 1.0)
        XCTAssertEqual(fractions.value.filter { $0 >= 1.0 }.count, 1, "one final 1.0")
    }

    // MARK: Resume data

    /// Its partial file holds decoded bytes while a Range would count gzip's:
    /// resuming failed with -1016. No resume data is handed out for it.
    func testAContentCodedDownloadHandsOutNoResumeData() throws {
        let plain = pattern(600_000)
        let coded = try GzipCommand.compress(plain, level: 1)
        let split = coded.count / 2
        server.route("/coded.bin") { _ in
            [.head(status: 200, headers: [("ETag", "\"c1\""), ("Content-Encoding", "gzip"), ("Content-Length", "\(coded.count)")]),
             .body(coded.prefix(split)), .wait(30), .body(coded.dropFirst(split)), .end]
        }
        let manager = makeManager()
        let (_, interrupted) = interrupt(manager, request("/coded.bin"), after: 1)
        XCTAssertEqual(interrupted.producedCalls, 1)
        XCTAssertNil(interrupted.resumeData, "a content-coded body cannot be continued with Range")
        XCTAssertEqual(interrupted.error?.code, NSURLErrorCancelled)
    }

    private struct Interrupted {
        var resumeData: Data?
        var producedCalls = 0
        var error: NSError?
        var completions = 0
        /// Bytes written when the task ended (its download progress).
        var written: Int64 = 0
    }

    /// Starts downloading `request` on `manager` and, once at least `bytes`
    /// were written, cancels it by producing resume data; waits (bounded) for
    /// the resume-data handler and the completion handler.
    private func interrupt(_ manager: URLSessionManager, _ request: URLRequest, after bytes: Int64,
                           timeout: TimeInterval = 20) -> (URLSessionDownloadTask, Interrupted) {
        let state = Locked(Interrupted())
        let reached = expectation(description: "\(bytes) bytes written")
        let once = Locked(false)
        let done = expectation(description: "cancelled download completes")
        let task = manager.downloadTask(with: request, progress: { progress in
            state.withLock { $0.written = progress.completedUnitCount }
            if progress.completedUnitCount >= bytes, once.setOnce() { reached.fulfill() }
        }, destination: nil, completionHandler: { _, _, error in
            state.withLock { $0.error = error.map { $0 as NSError }; $0.completions += 1 }
            done.fulfill()
        })
        task.resume()
        wait(for: [reached], timeout: timeout)
        let produced = expectation(description: "resume data handler")
        task.cancel(byProducingResumeData: { data in
            state.withLock { $0.resumeData = data; $0.producedCalls += 1 }
            produced.fulfill()
        })
        wait(for: [produced, done], timeout: 15)
        return (task, state.value)
    }

    private enum RangeAnswer { case continueAtOffset, ignoreRange, wrongOffset }

    /// Serves `body` at `path` with `validators`: a first request gets the first
    /// `split` bytes at once and then stalls (or, with `dropMidBody`, has its
    /// connection closed); a request with `Range: bytes=N-` is answered as
    /// `answer` says.
    private func serveResumable(_ path: String, body: Data, validators: [(String, String)] = [("ETag", "\"v1\"")],
                                split: Int, answer: RangeAnswer = .continueAtOffset, dropMidBody: Bool = false) {
        server.route(path) { request in
            if let range = request.headers.first(name: "range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
               let start = Int(range.dropFirst(6).dropLast()), start > 0, start < body.count {
                switch answer {
                case .continueAtOffset:
                    return [.head(status: 206, headers: validators + [("Content-Length", "\(body.count - start)"),
                                                                      ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                            .body(body.subdata(in: start..<body.count)), .end]
                case .wrongOffset:
                    let wrong = start / 2
                    return [.head(status: 206, headers: validators + [("Content-Length", "\(body.count - wrong)"),
                                                                      ("Content-Range", "bytes \(wrong)-\(body.count - 1)/\(body.count)")]),
                            .body(body.subdata(in: wrong..<body.count)), .end]
                case .ignoreRange:
                    return [.head(status: 200, headers: validators + [("Content-Length", "\(body.count)")]), .body(body), .end]
                }
            }
            let head = ScriptedServer.Step.head(status: 200, headers: validators + [("Content-Length", "\(body.count)")])
            let first = ScriptedServer.Step.body(body.subdata(in: 0..<split))
            if dropMidBody { return [head, first, .close] }
            return [head, first, .wait(10), .body(body.subdata(in: split..<body.count)), .end]
        }
    }

    private func requests(to path: String) -> [ScriptedServer.Request] {
        server.requests.filter { $0.uri.hasPrefix(path) }
    }

    func testCancelByProducingResumeDataMidDownloadGivesTheDataAlsoInTheError() throws {
        let nginx = try nginx()
        let started = Date()
        let manager = makeManager()
        let url = tagged(nginx, "slow/4m.bin", "cancel=\(UUID().uuidString)")
        let (task, interrupted) = interrupt(manager, URLRequest(url: url), after: 128 * 1024)
        let fullSource = try Data(contentsOf: source(nginx))
        defer { removePartialFiles(startingWith: fullSource.prefix(Int(interrupted.written)), modifiedSince: started) }
        XCTAssertEqual(interrupted.producedCalls, 1)
        let data = try XCTUnwrap(interrupted.resumeData, "a GET with an ETag and bytes written produces resume data")
        XCTAssertFalse(data.isEmpty)
        XCTAssertGreaterThan(interrupted.written, 0)
        XCTAssertLessThan(interrupted.written, fourMiB, "cancelled mid-body")
        XCTAssertEqual(interrupted.completions, 1)
        XCTAssertEqual(interrupted.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(interrupted.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(interrupted.error?.userInfo[URLSessionDownloadTaskResumeData] as? Data, data,
                       "the cancellation error carries the same resume data")
        XCTAssertEqual(task.state, .completed)
    }

    func testResumeDataFinishesOnANewManagerWithA206ByteExact() throws {
        let nginx = try nginx()
        let tag = "resume=\(UUID().uuidString)"
        let url = tagged(nginx, "slow/4m.bin", tag)
        let (_, interrupted) = interrupt(makeManager(), URLRequest(url: url), after: 256 * 1024)
        let resumeData = try XCTUnwrap(interrupted.resumeData)
        let offset = interrupted.written
        XCTAssertGreaterThan(offset, 0)

        let manager = makeManager()
        struct Resumed { var offset: Int64; var expected: Int64 }
        let resumed = Locked<[Resumed]>([])
        manager.setDownloadTaskDidResumeBlock { _, _, offset, expected in resumed.append(Resumed(offset: offset, expected: expected)) }
        struct Write { var bytes: Int64; var total: Int64; var expected: Int64 }
        let writes = Locked<[Write]>([])
        manager.setDownloadTaskDidWriteDataBlock { _, _, bytes, total, expected in
            writes.append(Write(bytes: bytes, total: total, expected: expected))
        }
        struct Step { var completed: Int64; var total: Int64; var fraction: Double }
        let steps = Locked<[Step]>([])
        let target = temporaryURL("resumed")
        let (task, outcome) = runDownload(manager, resumeData: resumeData, timeout: 45, progress: { progress in
            steps.append(Step(completed: progress.completedUnitCount, total: progress.totalUnitCount, fraction: progress.fractionCompleted))
        }, destination: { _, _ in target })
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.fileURL?.standardizedFileURL, target.standardizedFileURL)
        XCTAssertEqual(sha256(target), sha256(source(nginx)), "the resumed file is byte-identical to the source")
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 206)
        XCTAssertEqual(task.originalRequest?.url, url, "the resumed task asks for the same URL")
        XCTAssertTrue(nginx.logShows("\"GET /slow/4m.bin?\(tag) HTTP/1.1\" 206"), "a Range request answered 206 reached nginx")

        XCTAssertEqual(resumed.value.count, 1, "the download-resume block is called once")
        XCTAssertEqual(resumed.value.first?.offset, offset, "at the offset the first task had written")
        XCTAssertEqual(resumed.value.first?.expected, fourMiB, "with the expected total")

        let progress = steps.value
        XCTAssertEqual(progress.first?.completed, offset, "progress starts at the offset")
        XCTAssertTrue(progress.allSatisfy { $0.completed >= offset }, "progress never goes back below the offset")
        XCTAssertEqual(progress.last?.completed, fourMiB)
        XCTAssertEqual(progress.last?.fraction, 1.0)

        let written = writes.value
        XCTAssertFalse(written.isEmpty)
        if let first = written.first { XCTAssertEqual(first.total - first.bytes, offset, "write totals include the offset") }
        XCTAssertEqual(written.last?.total, fourMiB)
        XCTAssertEqual(written.map(\.bytes).reduce(0, +), fourMiB - offset)
        XCTAssertTrue(written.allSatisfy { $0.expected == fourMiB })
    }

    func testResumedRequestSendsRangeAndIfRangeWithTheETag() throws {
        let body = pattern(300_000, salt: 1)
        serveResumable("/etag", body: body, validators: [("ETag", "\"v1\"")], split: 100_000)
        let (_, interrupted) = interrupt(makeManager(), request("/etag"), after: 50_000)
        let resumeData = try XCTUnwrap(interrupted.resumeData)
        let target = temporaryURL("etag")
        let (_, outcome) = runDownload(makeManager(), resumeData: resumeData, destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(try? Data(contentsOf: target), body)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 206)
        let seen = requests(to: "/etag")
        XCTAssertEqual(seen.count, 2)
        guard seen.count == 2 else { return }
        XCTAssertNil(seen[0].headers.first(name: "range"))
        XCTAssertEqual(seen[1].method, "GET")
        XCTAssertEqual(seen[1].headers.first(name: "range"), "bytes=\(interrupted.written)-")
        XCTAssertEqual(seen[1].headers.first(name: "if-range"), "\"v1\"")
    }

    func testLastModifiedAloneIsAValidatorForIfRange() throws {
        let stamp = "Wed, 21 Oct 2015 07:28:00 GMT"
        let body = pattern(200_000, salt: 2)
        serveResumable("/dated", body: body, validators: [("Last-Modified", stamp)], split: 80_000)
        let (_, interrupted) = interrupt(makeManager(), request("/dated"), after: 40_000)
        let resumeData = try XCTUnwrap(interrupted.resumeData, "Last-Modified is a validator too")
        let target = temporaryURL("dated")
        let (_, outcome) = runDownload(makeManager(), resumeData: resumeData, destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(try? Data(contentsOf: target), body)
        XCTAssertEqual(requests(to: "/dated").last?.headers.first(name: "if-range"), stamp)
        XCTAssertEqual(requests(to: "/dated").last?.headers.first(name: "range"), "bytes=\(interrupted.written)-")
    }

    func testNoValidatorMeansNoResumeData() throws {
        let started = Date()
        let body = pattern(200_000, salt: 3)
        serveResumable("/plain", body: body, validators: [], split: 80_000)
        let (_, interrupted) = interrupt(makeManager(), request("/plain"), after: 40_000)
        defer { removePartialFiles(startingWith: body.prefix(Int(interrupted.written)), modifiedSince: started) }
        XCTAssertEqual(interrupted.producedCalls, 1, "the handler is called, with nil")
        XCTAssertNil(interrupted.resumeData, "without ETag or Last-Modified a resumed body could not be trusted")
        XCTAssertEqual(interrupted.error?.code, NSURLErrorCancelled)
        XCTAssertNil(interrupted.error?.userInfo[URLSessionDownloadTaskResumeData])
    }

    func testNoBodyByteMeansNoResumeData() throws {
        let manager = makeManager()
        // Never resumed.
        let idle = manager.downloadTask(with: request("/never"), progress: nil, destination: nil, completionHandler: nil)
        let idleProduced = expectation(description: "resume data handler of a task never resumed")
        let idleData = Locked<Data?>(Data("sentinel".utf8))
        idle.cancel(byProducingResumeData: { data in
            idleData.value = data
            idleProduced.fulfill()
        })
        wait(for: [idleProduced], timeout: 10)
        XCTAssertNil(idleData.value)

        // Response head received, no body byte yet.
        server.route("/head-only") { _ in
            [.head(status: 200, headers: [("ETag", "\"h\""), ("Content-Length", "1000")]), .wait(10), .body(Data(count: 1000)), .end]
        }
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "completion")
        let task = manager.downloadTask(with: request("/head-only"), progress: nil, destination: nil,
                                        completionHandler: downloadRecorder(outcome, done))
        task.resume()
        XCTAssertTrue(eventually { task.response != nil }, "the response head arrives")
        let produced = expectation(description: "resume data handler")
        let data = Locked<Data?>(Data("sentinel".utf8))
        task.cancel(byProducingResumeData: { resumeData in
            data.value = resumeData
            produced.fulfill()
        })
        wait(for: [produced, done], timeout: 10)
        XCTAssertNil(data.value, "nothing was written, so there is nothing to resume")
        XCTAssertEqual(outcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertNil(outcome.value.error?.userInfo[URLSessionDownloadTaskResumeData])
    }

    func testANonGETDownloadGivesNoResumeData() throws {
        let started = Date()
        let body = pattern(200_000, salt: 4)
        serveResumable("/posted", body: body, split: 80_000)
        var post = request("/posted", method: "POST")
        post.httpBody = Data("payload".utf8)
        let (_, interrupted) = interrupt(makeManager(), post, after: 40_000)
        defer { removePartialFiles(startingWith: body.prefix(Int(interrupted.written)), modifiedSince: started) }
        XCTAssertEqual(interrupted.producedCalls, 1)
        XCTAssertNil(interrupted.resumeData, "only a GET can be resumed with a Range request")
    }

    func testGarbageResumeDataFailsWithCannotDecodeRawDataAndSendsNothing() throws {
        let manager = makeManager()
        let (task, outcome) = runDownload(manager, resumeData: Data("junk".utf8), destination: { _, _ in
            XCTFail("no destination for a task that never downloaded")
            return URL(fileURLWithPath: "/nonexistent")
        })
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotDecodeRawData)
        XCTAssertNil(outcome.fileURL)
        XCTAssertEqual(task.state, .completed)
        XCTAssertTrue(server.requests.isEmpty)
        XCTAssertEqual(server.connectionCount, 0)
    }

    func testTruncatedResumeDataFailsWithCannotDecodeRawDataAndSendsNothing() throws {
        let started = Date()
        let body = pattern(200_000, salt: 5)
        serveResumable("/truncated", body: body, split: 80_000)
        let (_, interrupted) = interrupt(makeManager(), request("/truncated"), after: 40_000)
        defer { removePartialFiles(startingWith: body.prefix(Int(interrupted.written)), modifiedSince: started) }
        let resumeData = try XCTUnwrap(interrupted.resumeData)
        XCTAssertGreaterThan(resumeData.count, 1)
        XCTAssertEqual(requests(to: "/truncated").count, 1)
        let truncated = Data(resumeData.prefix(resumeData.count / 2))
        let (_, outcome) = runDownload(makeManager(), resumeData: truncated, destination: nil)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotDecodeRawData)
        XCTAssertEqual(requests(to: "/truncated").count, 1, "no request is sent for damaged resume data")
    }

    func testResumeDataWhosePartialFileIsGoneFailsAndSendsNothing() throws {
        let started = Date()
        let body = pattern(200_000, salt: 6)
        serveResumable("/vanished", body: body, split: 80_000)
        let (_, interrupted) = interrupt(makeManager(), request("/vanished"), after: 40_000)
        let resumeData = try XCTUnwrap(interrupted.resumeData)
        let partials = temporaryFiles(startingWith: body.prefix(Int(interrupted.written)), modifiedSince: started)
        XCTAssertFalse(partials.isEmpty, "the partial file is kept in NSTemporaryDirectory()")
        for partial in partials { try FileManager.default.removeItem(at: partial) }
        let (_, outcome) = runDownload(makeManager(), resumeData: resumeData, destination: nil)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotDecodeRawData)
        XCTAssertEqual(requests(to: "/vanished").count, 1, "no request is sent without the partial file")
    }

    func testA200ToTheResumedRequestRestartsFromByteZero() throws {
        let body = pattern(300_000, salt: 7)
        serveResumable("/restart", body: body, split: 100_000, answer: .ignoreRange)
        let (_, interrupted) = interrupt(makeManager(), request("/restart"), after: 50_000)
        let resumeData = try XCTUnwrap(interrupted.resumeData)
        let target = temporaryURL("restart")
        let (_, outcome) = runDownload(makeManager(), resumeData: resumeData, destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(try? Data(contentsOf: target), body, "the whole body, not the partial file plus the whole body")
        XCTAssertNotNil(requests(to: "/restart").last?.headers.first(name: "range"), "the resumed task asked for a range")
    }

    func testA206AtTheWrongOffsetFailsWithBadServerResponse() throws {
        let started = Date()
        let body = pattern(300_000, salt: 8)
        serveResumable("/misplaced", body: body, split: 100_000, answer: .wrongOffset)
        let (_, interrupted) = interrupt(makeManager(), request("/misplaced"), after: 50_000)
        defer { removePartialFiles(startingWith: body.prefix(Int(interrupted.written)), modifiedSince: started) }
        let resumeData = try XCTUnwrap(interrupted.resumeData)
        let destinationCalls = Locked(0)
        let target = temporaryURL("misplaced")
        let (_, outcome) = runDownload(makeManager(), resumeData: resumeData, destination: { _, _ in
            destinationCalls.increment()
            return target
        })
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertNil(outcome.fileURL)
        XCTAssertEqual(destinationCalls.value, 0, "a corrupt file is never handed out")
        XCTAssertFalse(FileManager.default.fileExists(atPath: target.path))
    }

    /// A resume the server answers with an error status (a 503 while it is
    /// busy) leaves the partial file for the resume data that the error
    /// carries: a later resume finishes the file.
    func testAResumeAnsweredWithAnErrorStatusHandsBackResumeDataThatStillFinishesTheFile() throws {
        let body = pattern(300_000, salt: 12)
        let busy = Locked(false)
        server.route("/busy-resume") { request in
            if busy.value { return [.head(status: 503, headers: [("Content-Length", "4")]), .body(Data("busy".utf8)), .end] }
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                return [.head(status: 206, headers: [("ETag", "\"b1\""), ("Content-Length", "\(body.count - start)"),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(body.subdata(in: start..<body.count)), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"b1\""), ("Content-Length", "\(body.count)")]),
                    .body(body.subdata(in: 0..<120_000)), .close]
        }
        let manager = makeManager()
        let (_, failed) = runDownload(manager, request("/busy-resume"), destination: { _, _ in URL(fileURLWithPath: "/nonexistent") })
        let first = try XCTUnwrap(failed.error?.userInfo[URLSessionDownloadTaskResumeData] as? Data)

        busy.value = true
        let (_, refused) = runDownload(manager, resumeData: first, destination: { _, _ in
            XCTFail("an error answer is never moved to the destination")
            return URL(fileURLWithPath: "/nonexistent")
        })
        let error = try XCTUnwrap(refused.error, "a resume answered 503 fails")
        let again = try XCTUnwrap(error.userInfo[URLSessionDownloadTaskResumeData] as? Data, "and its error carries resume data")

        busy.value = false
        let target = temporaryURL("busy-resume")
        let (_, outcome) = runDownload(manager, resumeData: again, destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(try? Data(contentsOf: target), body, "the partial file was kept for that data")
        XCTAssertEqual(requests(to: "/busy-resume").last?.headers.first(name: "range"), "bytes=120000-")
    }

    /// A cancel that races a resumed task's first hop never leaves the
    /// caller's resume data useless: either the cancel hands back new data,
    /// or the partial file is back where the old data names it. After twenty
    /// such races the download still finishes byte for byte.
    func testACancelRacingAResumedTaskKeepsTheResumeDataGood() throws {
        let body = pattern(300_000, salt: 14)
        serveResumable("/raced", body: body, split: 120_000, dropMidBody: true)
        let manager = makeManager()
        let (_, failed) = runDownload(manager, request("/raced"), destination: { _, _ in URL(fileURLWithPath: "/nonexistent") })
        var resumeData = try XCTUnwrap(failed.error?.userInfo[URLSessionDownloadTaskResumeData] as? Data)
        for round in 0..<20 {
            let task = manager.downloadTask(withResumeData: resumeData, progress: nil, destination: nil, completionHandler: nil)
            task.resume()
            let handed = expectation(description: "resume data \(round)")
            let produced = Locked<Data?>(nil)
            task.cancel(byProducingResumeData: { data in
                produced.value = data
                handed.fulfill()
            })
            wait(for: [handed], timeout: 10)
            let decoded = try XCTUnwrap(DownloadResumeData.decode(resumeData))
            if let fresh = produced.value {
                resumeData = fresh
            } else {
                XCTAssertTrue(FileManager.default.fileExists(atPath: decoded.partialFilePath), "round \(round): the old data still names a file")
            }
        }
        let target = temporaryURL("raced")
        let (_, outcome) = runDownload(manager, resumeData: resumeData, destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(try? Data(contentsOf: target), body)
    }

    /// A download of the caller's own range holds that part from its start:
    /// resume data (which resumes from the file's length) would splice it wrongly.
    func testADownloadOfTheCallersOwnRangeGivesNoResumeData() throws {
        let body = pattern(300_000, salt: 13)
        server.route("/own-range") { _ in
            [.head(status: 206, headers: [("ETag", "\"r1\""), ("Content-Length", "\(body.count - 100)"),
                                         ("Content-Range", "bytes 100-\(body.count - 1)/\(body.count)")]),
             .body(body.subdata(in: 100..<50_000)), .close]
        }
        var ranged = request("/own-range")
        ranged.setValue("bytes=100-", forHTTPHeaderField: "Range")
        let (_, failed) = runDownload(makeManager(), ranged, destination: { _, _ in URL(fileURLWithPath: "/nonexistent") })
        let error = try XCTUnwrap(failed.error)
        XCTAssertNil(error.userInfo[URLSessionDownloadTaskResumeData], "no resume data for a part the caller asked for")
    }

    func testATransportErrorMidBodyCarriesResumeDataThatFinishesTheFile() throws {
        let body = pattern(300_000, salt: 9)
        serveResumable("/dropped", body: body, split: 120_000, dropMidBody: true)
        let manager = makeManager()
        let (_, failed) = runDownload(manager, request("/dropped"), destination: { _, _ in
            XCTFail("an incomplete body is never moved to the destination")
            return URL(fileURLWithPath: "/nonexistent")
        })
        let error = try XCTUnwrap(failed.error)
        XCTAssertEqual(error.domain, NSURLErrorDomain)
        XCTAssertNotEqual(error.code, NSURLErrorCancelled)
        let resumeData = try XCTUnwrap(error.userInfo[URLSessionDownloadTaskResumeData] as? Data,
                                       "a download that fails mid-body carries resume data")
        let target = temporaryURL("dropped")
        let (_, outcome) = runDownload(manager, resumeData: resumeData, destination: { _, _ in target })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(try? Data(contentsOf: target), body)
        XCTAssertEqual(requests(to: "/dropped").last?.headers.first(name: "range"), "bytes=120000-")
    }

    // MARK: Suspension

    func testSuspendedDownloadReceivesNothingAndContinuesOnTheSameConnection() throws {
        let nginx = try nginx()
        let manager = makeManager()
        let tag = "suspend=\(UUID().uuidString)"
        let target = temporaryURL("suspended")
        let reached = expectation(description: "256 KiB written")
        let once = Locked(false)
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "completion")
        let task = manager.downloadTask(with: URLRequest(url: tagged(nginx, "slow/4m.bin", tag)), progress: { progress in
            if progress.completedUnitCount >= 256 * 1024, once.setOnce() { reached.fulfill() }
        }, destination: { _, _ in target }, completionHandler: downloadRecorder(outcome, done))
        task.resume()
        wait(for: [reached], timeout: 20)

        task.suspend()
        XCTAssertEqual(task.state, .suspended)
        // Bytes handed over before the suspension reached the network thread
        // may still be counted: wait (bounded) until the count stands still.
        var before = task.countOfBytesReceived
        for _ in 0..<50 {
            usleep(150_000)
            let now = task.countOfBytesReceived
            if now == before { break }
            before = now
        }
        usleep(300_000)  // the window: nothing may arrive while suspended
        let after = task.countOfBytesReceived
        XCTAssertEqual(before, after, "nothing is read while suspended")
        XCTAssertEqual(task.state, .suspended)
        XCTAssertLessThan(after, fourMiB)

        task.resume()
        XCTAssertEqual(task.state, .running)
        wait(for: [done], timeout: 40)
        XCTAssertEqual(outcome.value.calls, 1)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(sha256(target), sha256(source(nginx)), "suspend and resume lose and duplicate nothing")
        XCTAssertEqual(task.countOfBytesReceived, fourMiB)
        XCTAssertTrue(nginx.logShows("/slow/4m.bin?\(tag) "))
        XCTAssertEqual(lines(of: nginx.accessLog, containing: "/slow/4m.bin?\(tag) ").count, 1,
                       "one request: the transfer continued on the same connection")
    }
}
