@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Notifications, state, copying, archiving, pause/resume and memory.
final class LifecycleTests: OperationTestCase {
    func testStateMovesReadyExecutingFinished() {
        server.route("/s") { _ in [.wait(0.2), .head(status: 200, headers: [("Content-Length", "1")]), .body(Data("s".utf8)), .end] }
        let operation = HTTPRequestOperation(request: request("/s"))
        XCTAssertTrue(operation.isReady)
        XCTAssertFalse(operation.isExecuting)
        operation.start()
        XCTAssertTrue(operation.isExecuting)
        XCTAssertFalse(operation.isReady)
        operation.start()  // an invalid second start is ignored
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertFalse(operation.isExecuting)
    }

    func testStartAndFinishNotificationsArriveOnMainQueue() {
        server.respond("/n", body: Data("n".utf8))
        let operation = HTTPRequestOperation(request: request("/n"))
        let names = Locked<[Notification.Name]>([])
        let observers = [Notification.Name.AFNetworkingOperationDidStart, .AFNetworkingOperationDidFinish].map { name in
            NotificationCenter.default.addObserver(forName: name, object: operation, queue: nil) { note in
                XCTAssertTrue(Thread.isMainThread)
                names.append(note.name)
            }
        }
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        run(operation)
        XCTAssertTrue(spin { names.value.count == 2 })
        XCTAssertEqual(names.value, [.AFNetworkingOperationDidStart, .AFNetworkingOperationDidFinish])
    }

    /// A tool or server blocks its main thread: the finish notifications
    /// waiting for the main queue must not keep every finished request and
    /// its body alive (they did: 3,000 requests of up to 8 MiB peaked at 4.4 GiB).
    func testFinishedOperationsAreLetGoWhileTheMainQueueIsBlocked() {
        let body = Data(repeating: 7, count: 1 << 20)
        server.route("/mb") { _ in
            [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("Cache-Control", "no-store")]), .body(body), .end]
        }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        let callbacks = DispatchQueue(label: "test.callbacks")
        let group = DispatchGroup()
        let failures = Locked(0)
        final class Weak: @unchecked Sendable {
            // @unchecked: written before the operations start, read after they all ended.
            weak var operation: Operation?
        }
        let count = 80
        var references: [Weak] = []
        for _ in 0..<count {
            let operation = HTTPRequestOperation(request: request("/mb"))
            operation.completionQueue = callbacks
            group.enter()
            operation.setCompletionBlockWithSuccess({ _, _ in group.leave() }, failure: { _, _ in
                failures.withLock { $0 += 1 }
                group.leave()
            })
            let reference = Weak()
            reference.operation = operation
            references.append(reference)
            queue.addOperation(operation)
        }
        // The main thread blocks here, as a tool's does: nothing reaches the main queue.
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        queue.waitUntilAllOperationsAreFinished()
        XCTAssertEqual(failures.value, 0)
        let limit = MainQueueNotifier.costLimit
        XCTAssertLessThanOrEqual(MainQueueNotifier.shared.waiting.cost, 2 * limit + body.count)
        // What the notifications still hold is bounded by the cost limit; the rest is let go.
        let mostAlive = 2 * limit / body.count + 1
        let deadline = Date().addingTimeInterval(10)
        var alive = count
        for _ in 0..<1000 where Date() < deadline {
            alive = references.filter { $0.operation != nil }.count
            if alive <= mostAlive { break }
            usleep(10_000)
        }
        XCTAssertLessThanOrEqual(alive, mostAlive, "finished operations kept alive by notifications waiting for the main queue")
        XCTAssertLessThan(alive, count)
        // Serviced at last, the main queue gets what was kept, each finish after its start.
        XCTAssertTrue(spin { MainQueueNotifier.shared.waiting.count == 0 })
    }

    func testUserInfoAndSettingsAreKept() {
        let operation = URLConnectionOperation(request: request("/x"))
        operation.userInfo = ["key": "value"]
        XCTAssertEqual(operation.userInfo["key"] as? String, "value")
        XCTAssertTrue(operation.shouldUseCredentialStorage)
        XCTAssertNil(operation.completionQueue)
        XCTAssertNotNil(operation.outputStream, "a memory stream by default")
    }

    func testCopyIsFreshAndReadyWithSameSettings() {
        server.respond("/copy", body: Data("c".utf8))
        let original = HTTPRequestOperation(request: request("/copy"))
        let queue = DispatchQueue(label: "q")
        original.completionQueue = queue
        original.responseSerializer.acceptableStatusCodes = IndexSet(integer: 299)
        run(original)
        let copy = original.copy() as! HTTPRequestOperation
        XCTAssertFalse(copy === original)
        XCTAssertTrue(copy.isReady)
        XCTAssertNil(copy.response)
        XCTAssertEqual(copy.request.url, original.request.url)
        XCTAssertTrue(copy.completionQueue === queue)
        XCTAssertEqual(copy.responseSerializer.acceptableStatusCodes, IndexSet(integer: 299))
        XCTAssertFalse(copy.responseSerializer === original.responseSerializer)
    }

    func testSecureCodingRoundTripArchivesAsReady() throws {
        server.respond("/code", headers: [("Content-Type", "text/plain")], body: Data("archived".utf8))
        let operation = HTTPRequestOperation(request: request("/code"))
        run(operation)
        let archive = try NSKeyedArchiver.archivedData(withRootObject: operation, requiringSecureCoding: true)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPRequestOperation.self, from: archive))
        XCTAssertEqual(restored.request.url, operation.request.url)
        XCTAssertEqual(restored.responseData, Data("archived".utf8))
        XCTAssertEqual(restored.response?.statusCode, 200)

        let pending = HTTPRequestOperation(request: request("/code"))
        let pendingArchive = try NSKeyedArchiver.archivedData(withRootObject: pending, requiringSecureCoding: true)
        let revived = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPRequestOperation.self, from: pendingArchive))
        XCTAssertTrue(revived.isReady)
        XCTAssertNil(run(revived).error)
    }

    func testPauseAndResumeContinuesWithRange() throws {
        let body = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0) })
        let paused = Locked(false), pauseCalled = Locked(false)
        server.route("/big") { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                let rest = body[start...]
                return [.head(status: 206, headers: [("Content-Length", "\(rest.count)"),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(Data(rest)), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"v1\"")]),
                    // The rest only once the client paused: it pauses at 10,000 however late it gets there.
                    .body(body[0..<10_000]), .waitUntil({ pauseCalled.value }, timeout: 30), .body(body[10_000...]), .end]
        }
        let operation = HTTPRequestOperation(request: request("/big"))
        operation.setDownloadProgressBlock { [weak operation] _, total, _ in
            if total >= 10_000 && paused.setOnce() {
                operation?.pause()
                pauseCalled.value = true
            }
        }
        let finished = Locked(false)
        operation.setCompletionBlockWithSuccess({ _, _ in finished.value = true }, failure: { _, _ in finished.value = true })
        operation.start()
        XCTAssertTrue(spin { operation.isPaused })
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "Range"), "bytes=10000-")
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        operation.resume()
        XCTAssertTrue(spin { finished.value && operation.isFinished })
        XCTAssertNil(operation.error)
        XCTAssertEqual(operation.responseData, body)
    }

    /// The output is chosen when the operation starts: a stream read (2.x
    /// code often reads `outputStream`) and a redundant `resume()` or
    /// `start()` after that do not move the body out of memory.
    func testAStreamThatAppearsAfterTheStartIsNotWrittenTo() {
        let released = Locked(false)
        let body = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 7) })
        server.route("/held-body") { _ in
            [.head(status: 200, headers: [("Content-Length", "\(body.count)")]), .body(body.prefix(5_000)),
             .waitUntil({ released.value }, timeout: 30), .body(body.dropFirst(5_000)), .end]
        }
        let operation = HTTPRequestOperation(request: request("/held-body"))
        let finished = Locked(false)
        operation.setCompletionBlockWithSuccess({ _, _ in finished.value = true }, failure: { _, _ in finished.value = true })
        operation.start()
        XCTAssertTrue(spin { operation.isExecuting })
        _ = operation.outputStream
        operation.resume()
        operation.start()
        released.value = true
        XCTAssertTrue(spin { finished.value && operation.isFinished })
        XCTAssertNil(operation.error)
        XCTAssertEqual(operation.responseData, body)
    }

    func testCancelWhilePausedFinishes() {
        server.route("/p") { _ in [.head(status: 200, headers: [("Content-Length", "10")]), .body(Data("12345".utf8)), .wait(30)] }
        let operation = HTTPRequestOperation(request: request("/p"))
        let failures = Locked(0)
        operation.setCompletionBlockWithSuccess(nil, failure: { _, _ in failures.increment() })
        operation.start()
        operation.pause()
        XCTAssertTrue(operation.isPaused)
        operation.cancel()
        XCTAssertTrue(spin { operation.isFinished && failures.value == 1 })
        XCTAssertEqual((operation.error as NSError?)?.code, NSURLErrorCancelled)
    }

    func testOperationsAreReleasedAfterFinishing() {
        server.respond("/weak", body: Data("w".utf8))
        weak var weakOperation: HTTPRequestOperation?
        do {
            let operation = HTTPRequestOperation(request: request("/weak"))
            operation.setCompletionBlockWithSuccess({ op, _ in _ = op.responseData }, failure: nil)
            operation.completionBlock = { _ = operation.isFinished }  // a cycle 2.7 also breaks
            weakOperation = operation
            run(operation)
            XCTAssertTrue(spin { operation.isFinished })
        }
        XCTAssertTrue(spin { weakOperation == nil }, "the finished operation was not deallocated")
    }

    func testAnOperationLetGoWhileWaitingToRetryStillFinishesAndIsThenFreed() {
        // Between attempts no transfer holds the operation: the driver does
        // until the request is over, as NSURLConnection held its delegate.
        let attempts = Locked(0)
        server.route("/flaky") { _ in
            attempts.value += 1
            return attempts.value == 1
                ? [.head(status: 503, headers: [("Content-Length", "0")]), .end]
                : [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
        }
        let finished = Locked<Data?>(nil)
        weak var weakOperation: HTTPRequestOperation?
        do {
            let operation = HTTPRequestOperation(request: request("/flaky"))
            var policy = RetryPolicy()
            policy.baseDelay = 0.3
            policy.jitter = 0
            operation.retryPolicy = policy
            operation.completionQueue = DispatchQueue(label: "afn.test.letgo")
            operation.setCompletionBlockWithSuccess({ op, _ in finished.value = op.responseData }, failure: { _, _ in finished.value = Data() })
            weakOperation = operation
            operation.start()
            XCTAssertTrue(spin { attempts.value >= 1 })
        }
        // Freed while waiting, it would never send the second attempt.
        XCTAssertTrue(spin { finished.value != nil }, "an operation in flight is not freed when its owner lets it go")
        XCTAssertEqual(finished.value, Data("ok".utf8), "the second attempt's body")
        XCTAssertEqual(attempts.value, 2)
        XCTAssertTrue(spin { weakOperation == nil }, "freed once it is over")
    }

    func testOperationsNeverStartedAreFreedWhenLetGo() {
        weak var plain: HTTPRequestOperation?
        weak var paused: HTTPRequestOperation?
        weak var cancelled: HTTPRequestOperation?
        do {
            let first = HTTPRequestOperation(request: request("/never"))
            let second = HTTPRequestOperation(request: request("/never"))
            second.pause()
            XCTAssertTrue(second.isPaused)
            let third = HTTPRequestOperation(request: request("/never"))
            third.cancel()
            (plain, paused, cancelled) = (first, second, third)
        }
        XCTAssertTrue(spin { plain == nil && paused == nil && cancelled == nil }, "nothing holds an operation that never ran")
        XCTAssertEqual(server.requests.count, 0)
    }

    func testAnOperationPausedBeforeItsQueueStartedItWritesToItsStreamWhenResumed() throws {
        server.respond("/s", body: Data("streamed".utf8))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("afn-paused-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let operation = HTTPRequestOperation(request: request("/s"))
        operation.outputStream = OutputStream(toFileAtPath: path, append: false)
        operation.pause()
        let finished = Locked(false)
        operation.setCompletionBlockWithSuccess({ _, _ in finished.value = true }, failure: { _, _ in finished.value = true })
        let queue = OperationQueue()
        queue.addOperation(operation)
        // The queue has looked at the operation (it asks isReady when it takes one in; a paused
        // operation is not ready), and the operation waits.
        XCTAssertTrue(spin { operation.readinessAsked.load(ordering: .relaxed) }, "the queue took the operation in")
        XCTAssertTrue(operation.isPaused, "held by its queue while paused: it waits")
        XCTAssertTrue(server.requests.isEmpty, "a paused operation sends nothing")
        operation.resume()
        XCTAssertTrue(spin { finished.value && operation.isFinished })
        XCTAssertNil(operation.error)
        XCTAssertNil(operation.responseData, "the body went to the file stream")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data("streamed".utf8))
    }
}
