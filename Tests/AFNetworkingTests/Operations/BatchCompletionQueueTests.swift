import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `batch(ofRequestOperations:progressBlock:completionQueue:completionBlock:)`:
/// the batch's completion runs on the queue given, with the main thread
/// blocked the whole time (so it cannot have gone through the main queue);
/// the awaited batch needs no main queue at all; and an operation that has
/// already finished counts at once.
final class BatchCompletionQueueTests: OperationTestCase {
    func testTheCompletionRunsOnTheGivenQueueWithoutTheMainQueue() throws {
        server.respond("/b", body: Data("x".utf8))
        let key = DispatchSpecificKey<String>()
        let callbacks = DispatchQueue(label: "batch.callbacks")
        callbacks.setSpecific(key: key, value: "callbacks")
        let operations = (0..<3).map { index -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: request("b?n=\(index)"))
            operation.responseSerializer = HTTPResponseSerializer()
            operation.completionQueue = callbacks
            return operation
        }
        let seen = Locked<(queue: String?, count: Int, progress: [Int])>((nil, 0, []))
        let finished = DispatchSemaphore(value: 0)
        let batch = URLConnectionOperation.batch(ofRequestOperations: operations, progressBlock: { done, _ in
            seen.withLock { $0.progress.append(done) }
        }, completionQueue: callbacks, completionBlock: { finishedOperations in
            seen.withLock { $0.queue = DispatchQueue.getSpecific(key: key); $0.count = finishedOperations.count }
            finished.signal()
        })
        let queue = OperationQueue()
        queue.addOperations(batch, waitUntilFinished: false)
        // The main thread waits here: a completion sent to the main queue would never run.
        XCTAssertEqual(finished.wait(timeout: .now() + 20), .success, "the completion did not run while the main queue was blocked")
        XCTAssertEqual(seen.value.queue, "callbacks")
        XCTAssertEqual(seen.value.count, 3)
        XCTAssertEqual(seen.value.progress.sorted(), [1, 2, 3])
    }

    func testAnEmptyBatchAndNilMeanTheirQueues() throws {
        let key = DispatchSpecificKey<String>()
        let callbacks = DispatchQueue(label: "batch.empty")
        callbacks.setSpecific(key: key, value: "empty")
        let finished = DispatchSemaphore(value: 0)
        let where_ = Locked<String?>(nil)
        let batch = URLConnectionOperation.batch(ofRequestOperations: [], progressBlock: nil, completionQueue: callbacks) { _ in
            where_.withLock { $0 = DispatchQueue.getSpecific(key: key) }
            finished.signal()
        }
        OperationQueue().addOperations(batch, waitUntilFinished: false)
        XCTAssertEqual(finished.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(where_.value, "empty")

        // nil is the main queue, as the 2.7 variant.
        let onMain = expectation(description: "main")
        let mainBatch = URLConnectionOperation.batch(ofRequestOperations: [], progressBlock: nil, completionQueue: nil) { _ in
            XCTAssertTrue(Thread.isMainThread)
            onMain.fulfill()
        }
        OperationQueue().addOperations(mainBatch, waitUntilFinished: false)
        wait(for: [onMain], timeout: 20)
    }

    /// An operation that had already finished counts at once: the completion
    /// block a batch used to install on it never ran, and the batch never
    /// completed. The other operation's own completion block still runs before
    /// its progress report.
    func testABatchWithAnOperationThatHasAlreadyFinishedCompletes() {
        server.respond("/done", body: Data("d".utf8))
        server.respond("/fresh", body: Data("f".utf8))
        let finished = HTTPRequestOperation(request: request("/done"))
        XCTAssertNil(run(finished).error)
        XCTAssertTrue(spin(until: { finished.isFinished }))
        let fresh = HTTPRequestOperation(request: request("/fresh"))
        let log = Locked<[String]>([])
        fresh.completionBlock = { log.append("own") }
        let completed = Locked<[URLConnectionOperation]?>(nil)
        let batch = URLConnectionOperation.batch(ofRequestOperations: [finished, fresh], progressBlock: { done, total in
            XCTAssertEqual(total, 2)
            log.append("progress \(done)")
        }, completionBlock: { completed.value = $0 })
        XCTAssertEqual(batch.count, 3)
        // A queue refuses an operation that has finished: the rest is enqueued.
        OperationQueue().addOperations(batch.filter { !$0.isFinished }, waitUntilFinished: false)
        XCTAssertTrue(spin(until: { completed.value != nil }, timeout: 15), "the batch never completed")
        XCTAssertEqual(log.value, ["progress 1", "own", "progress 2"])
        XCTAssertEqual(completed.value?.count, 2)
        XCTAssertTrue(fresh.isFinished)
        XCTAssertNil(fresh.error)
    }

    /// The awaited batch's bookkeeping never waits for the main queue: it
    /// returns while the main thread is blocked, although its operations have
    /// no completion queue (their reports went to the main queue, and it
    /// never returned).
    func testTheAwaitedBatchReturnsWhileTheMainThreadIsBlocked() {
        server.respond("/b", body: Data("x".utf8))
        let operations = (0..<3).map { _ in HTTPRequestOperation(request: request("/b")) }
        let progress = Locked<[Int]>([])
        let returned = Locked<[URLConnectionOperation]?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let finished = await URLConnectionOperation.batch(ofRequestOperations: operations, on: OperationQueue()) { count, _ in
                progress.append(count)
            }
            returned.value = finished
            done.signal()
        }
        // The main thread waits here: nothing sent to the main queue runs.
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "the awaited batch did not return while the main queue was blocked")
        XCTAssertEqual(returned.value?.count, 3)
        XCTAssertTrue(operations.allSatisfy { $0.isFinished && $0.error == nil })
        XCTAssertEqual(progress.value, [1, 2, 3], "one report at a time, in order")
    }
}
