import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `batch(ofRequestOperations:progressBlock:completionQueue:completionBlock:)`:
/// the batch's completion runs on the queue given, with the main thread
/// blocked the whole time (so it cannot have gone through the main queue).
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
}
