@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `URLConnectionOperation.progress` against the scripted server: the counts
/// of a download and of a parent with two operations, cancel, pause and
/// resume through the progress, and no `Progress` for an operation nobody
/// asks. swift-corelibs-foundation's `Progress` has no lock: the tests read
/// counts on the queue they change on.
final class OperationProgressTests: OperationTestCase {
    func testA1MiBDownloadEndsWithCompletedEqualToTotal() {
        let size = 1 << 20
        let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        server.route("/big") { _ in
            [.head(status: 200, headers: [("Content-Length", "\(size)")]),
             .body(body[..<(size / 2)]), .wait(1), .body(body[(size / 2)...]), .end]
        }
        let operation = HTTPRequestOperation(request: request("/big"))
        let progress = operation.progress
        XCTAssertTrue(counts(progress) == (0, -1), "nothing known before the start: \(counts(progress))")
        XCTAssertTrue(progress.isCancellable)
        XCTAssertTrue(progress.isPausable)
        let outcome = Locked(Outcome())
        record(operation, into: outcome)
        queue.addOperation(operation)
        // Halfway (the server waits a second): the bytes so far, the length announced.
        XCTAssertTrue(spin { counts(progress).completed >= Int64(size / 2) })
        if !operation.isFinished {
            XCTAssertEqual(counts(progress).total, Int64(size))
            XCTAssertLessThan(counts(progress).completed, Int64(size), "complete only once the operation finished")
        }
        XCTAssertTrue(spin { outcome.value.calls > 0 && operation.isFinished })
        XCTAssertNil(outcome.value.error)
        XCTAssertTrue(spin { counts(progress) == (Int64(size), Int64(size)) }, "\(counts(progress))")
        XCTAssertEqual(OperationProgress.queue.sync { progress.fractionCompleted }, 1)
    }

    func testAParentOfTwoOperationsReachesOne() {
        server.respond("/a", body: Data(repeating: 1, count: 300_000))
        // Chunked: the length is unknown until the end.
        server.route("/b") { _ in
            [.head(status: 200, headers: [("Transfer-Encoding", "chunked")]),
             .body(Data(repeating: 2, count: 100_000)), .wait(0.1), .body(Data(repeating: 3, count: 100_000)), .end]
        }
        let parent = Progress(totalUnitCount: 2)
        let (a, b) = (HTTPRequestOperation(request: request("/a")), HTTPRequestOperation(request: request("/b")))
        // Added before the operations start: nothing changes their counts yet.
        parent.addChild(a.progress, withPendingUnitCount: 1)
        parent.addChild(b.progress, withPendingUnitCount: 1)
        let outcome = Locked(Outcome())
        let done = expectation(description: "both finished")
        done.expectedFulfillmentCount = 2
        record(a, into: outcome) { done.fulfill() }
        record(b, into: outcome) { done.fulfill() }
        queue.addOperations([a, b], waitUntilFinished: false)
        wait(for: [done], timeout: 15)
        XCTAssertNil(outcome.value.error)
        XCTAssertTrue(spin { OperationProgress.queue.sync { parent.completedUnitCount } == 2 },
                      "\(OperationProgress.queue.sync { parent.fractionCompleted })")
        XCTAssertEqual(OperationProgress.queue.sync { parent.fractionCompleted }, 1, accuracy: 1e-12)
        XCTAssertTrue(counts(a.progress) == (300_000, 300_000))
        XCTAssertTrue(counts(b.progress) == (200_000, 200_000))
    }

    func testCancellingTheProgressCancelsARunningOperation() {
        server.route("/slow") { _ in
            [.head(status: 200, headers: [("Content-Length", "100000")]), .body(Data(repeating: 7, count: 10_000)), .wait(30), .end]
        }
        let operation = HTTPRequestOperation(request: request("/slow"))
        let progress = operation.progress
        let outcome = Locked(Outcome())
        record(operation, into: outcome)
        queue.addOperation(operation)
        XCTAssertTrue(spin { counts(progress).completed == 10_000 }, "\(counts(progress))")
        progress.cancel()
        XCTAssertTrue(spin { outcome.value.calls > 0 && operation.isFinished })
        XCTAssertTrue(operation.isCancelled)
        XCTAssertEqual(outcome.value.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertTrue(counts(progress) == (10_000, 100_000), "a cancelled operation keeps what it reached: \(counts(progress))")
    }

    func testCancellingTheOperationCancelsItsProgress() {
        server.route("/slow") { _ in
            [.head(status: 200, headers: [("Content-Length", "100000")]), .body(Data(repeating: 7, count: 10_000)), .wait(30), .end]
        }
        let operation = HTTPRequestOperation(request: request("/slow"))
        let progress = operation.progress
        queue.addOperation(operation)
        XCTAssertTrue(spin { counts(progress).completed == 10_000 })
        operation.cancel()
        XCTAssertTrue(spin { OperationProgress.queue.sync { progress.isCancelled } })
    }

    /// Pausing the progress pauses the operation (a ranged request continues
    /// it); resuming the progress resumes it, and the counts stay absolute.
    func testPausingAndResumingTheProgressPausesAndResumesTheOperation() {
        let body = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        server.route("/file") { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                return [.head(status: 206, headers: [("Content-Length", "\(body.count - start)"),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(body[start...]), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"e1\"")]),
                    .body(body[..<10_000]), .wait(30)]
        }
        let operation = HTTPRequestOperation(request: request("/file"))
        let progress = operation.progress
        let outcome = Locked(Outcome())
        record(operation, into: outcome)
        queue.addOperation(operation)
        XCTAssertTrue(spin { counts(progress).completed == 10_000 }, "\(counts(progress))")
        progress.pause()
        XCTAssertTrue(spin { operation.isPaused }, "the pausing handler paused the operation")
        XCTAssertEqual(outcome.value.calls, 0)
        progress.resume()
        XCTAssertTrue(spin { outcome.value.calls > 0 && operation.isFinished })
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(operation.responseData, body)
        XCTAssertEqual(server.requests.last?.headers.first(name: "range"), "bytes=10000-", "resumed, not started over")
        XCTAssertTrue(spin { counts(progress) == (40_000, 40_000) }, "\(counts(progress))")
    }

    /// No `Progress` is made for an operation whose `progress` nobody read,
    /// even one with a download progress block; read after it finished, it
    /// shows the final counts.
    func testAnOperationWhoseProgressIsNeverReadMakesNone() {
        server.respond("/small", body: Data(repeating: 5, count: 50_000))
        let operation = HTTPRequestOperation(request: request("/small"))
        let reports = Locked(0)
        operation.setDownloadProgressBlock { _, _, _ in reports.increment() }
        XCTAssertNil(run(operation).error)
        XCTAssertTrue(spin { reports.value > 0 })
        XCTAssertNil(operation.progressIfMade, "nobody asked: no Progress")
        let progress = operation.progress
        XCTAssertTrue(operation.progressIfMade === progress)
        XCTAssertTrue(spin { counts(progress) == (50_000, 50_000) }, "\(counts(progress))")
        XCTAssertTrue(operation.progress === progress, "made once")
    }

    /// Read while another progress is current, it does not become that one's child.
    func testTheProgressIsNotAChildOfTheCurrentProgress() {
        let operation = HTTPRequestOperation(request: request("/never"))
        let current = Progress(totalUnitCount: 1)
        current.becomeCurrent(withPendingUnitCount: 1)
        let progress = operation.progress
        current.resignCurrent()
        // No child attached: resigning counted the pending unit as done.
        XCTAssertEqual(current.completedUnitCount, 1)
        // With a parent already, corelibs would trap here.
        let parent = Progress(totalUnitCount: 1)
        parent.addChild(progress, withPendingUnitCount: 1)
        XCTAssertEqual(parent.fractionCompleted, 0)
    }

    // MARK: - Helpers

    /// Runs the operations (kept for the whole test).
    private let queue = OperationQueue()

    /// `progress`'s counts, read on the queue they change on.
    private func counts(_ progress: Progress) -> (completed: Int64, total: Int64) {
        OperationProgress.queue.sync { (progress.completedUnitCount, progress.totalUnitCount) }
    }
}
