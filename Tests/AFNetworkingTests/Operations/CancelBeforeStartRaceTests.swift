@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A cancel before start never ends in success: `Operation.cancel()` sets
/// `isCancelled` and lets the queue start the operation (on another thread)
/// before this package's `cancel()` reaches the state machine; the start must
/// finish it cancelled by itself, with nothing sent.
final class CancelBeforeStartRaceTests: OperationTestCase {
    /// Holds the cancelling thread inside Foundation's `cancel()` — after
    /// `isCancelled` is set, before the machine hears of it — while the queue
    /// starts the operation and it finishes: the window a descheduled
    /// cancelling thread leaves open, held open deterministically.
    private final class StalledCancelOperation: HTTPRequestOperation, @unchecked Sendable {
        // @unchecked: the only added state is in `Locked` boxes.
        let hold = Locked<OperationQueue?>(nil)
        let finished = DispatchSemaphore(value: 0)
        let heldUntilFinished = Locked<Bool?>(nil)
        let canceller = Locked<pthread_t?>(nil)

        override var isReady: Bool {
            let ready = super.isReady
            // Foundation's cancel() reads isReady on the cancelling thread
            // right after setting isCancelled.
            if isCancelled, let canceller = canceller.value, pthread_equal(canceller, pthread_self()) != 0,
               let queue = hold.withLock({ queue in defer { queue = nil }; return queue }) {
                // Each addition makes the queue schedule again: the first one
                // re-reads readiness, the next one starts the cancelled
                // operation on one of the queue's threads.
                queue.addOperation(BlockOperation {})
                queue.addOperation(BlockOperation {})
                heldUntilFinished.value = finished.wait(timeout: .now() + 10) == .success
            }
            return ready
        }
    }

    func testACancelledOperationThatTheQueueStartsBeforeTheMachineHearsOfTheCancelSendsNothing() {
        server.respond("/race", body: Data("should never be fetched".utf8))
        let successes = Locked(0)
        let failures = Locked<[Int]>([])
        for round in 0..<20 {
            let operation = StalledCancelOperation(request: request("/race?\(round)"))
            operation.completionQueue = DispatchQueue(label: "race-completion")
            let done = expectation(description: "completion \(round)")
            operation.setCompletionBlockWithSuccess({ [finished = operation.finished] _, _ in
                successes.increment()
                finished.signal()
                done.fulfill()
            }, failure: { [finished = operation.finished] _, error in
                failures.append((error as NSError).code)
                finished.signal()
                done.fulfill()
            })
            let blocker = BlockOperation {}
            operation.addDependency(blocker)
            let queue = OperationQueue()
            queue.addOperation(operation)
            operation.hold.value = queue

            Thread {
                operation.canceller.value = pthread_self()
                operation.cancel()
            }.start()
            wait(for: [done], timeout: 15)
            // The cancelling thread goes on once the completion block ran.
            XCTAssertTrue(spin(until: { operation.isFinished && operation.heldUntilFinished.value != nil }), "round \(round)")
            XCTAssertEqual(operation.heldUntilFinished.value, true, "round \(round): the window was held open until the end")
            XCTAssertTrue(operation.isCancelled)
            blocker.start()
        }
        XCTAssertEqual(successes.value, 0, "no success block for a cancelled operation")
        XCTAssertEqual(failures.value, Array(repeating: NSURLErrorCancelled, count: 20))
        XCTAssertEqual(server.requests.count, 0, "nothing reached the server")
    }
}
