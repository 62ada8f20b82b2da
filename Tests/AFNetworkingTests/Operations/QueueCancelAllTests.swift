import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `OperationQueue.cancelAllOperations()` on a queue holding operations that
/// only the queue references while an operation they depend on is running.
///
/// swift-corelibs-foundation records each dependent in its dependency as an
/// unretained pointer and never takes it out when the dependent is cancelled:
/// a cancelled dependent finishes at once, the queue lets it go, and when the
/// dependency finishes it reads the freed dependent (SIGSEGV). Each test here
/// crashed the test process before the library kept its dependents alive.
final class QueueCancelAllTests: OperationTestCase {
    /// A slow answer: the first operation is still running when the queue
    /// is cancelled, however late the test gets to cancel it (the answer
    /// comes after `seconds`; the tests that cancel never wait for it).
    private func routeSlow(_ seconds: TimeInterval = 60) {
        server.route("/slow") { _ in [.wait(seconds), .head(status: 200, headers: [("Content-Length", "1")]), .body(Data("s".utf8)), .end] }
    }

    /// The operation's completion work (here its failure block, after the
    /// cancel) takes a while, so it finishes well after its cancelled
    /// dependents: the order that crashed.
    private func finishSlowly(_ operation: HTTPRequestOperation) {
        operation.completionQueue = .global()
        operation.setCompletionBlockWithSuccess({ _, _ in Thread.sleep(forTimeInterval: 0.3) },
                                                failure: { _, _ in Thread.sleep(forTimeInterval: 0.3) })
    }

    /// Spins until `operation` executes (bounded).
    private func waitUntilExecuting(_ operation: Operation) {
        XCTAssertTrue(spin(until: { operation.isExecuting || operation.isFinished }, timeout: 10))
    }

    func testCancellingAQueueHoldingABatchNeitherCrashesNorLosesTheCompletion() {
        routeSlow()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let completed = Locked<[URLConnectionOperation]?>(nil)
        let first = Weak<Operation>()
        // Built in a closure so that only the queue holds the operations.
        do {
            let operations = (0..<5).map { _ in HTTPRequestOperation(request: request("/slow")) }
            operations.forEach(finishSlowly)
            let batch = URLConnectionOperation.batch(ofRequestOperations: operations, progressBlock: nil,
                                                     completionQueue: .global(), completionBlock: { completed.value = $0 })
            first.value = batch[0]
            queue.addOperations(batch, waitUntilFinished: false)
        }
        if let running = first.value { waitUntilExecuting(running) }
        queue.cancelAllOperations()
        XCTAssertTrue(spin(until: { completed.value != nil }, timeout: 15), "a cancelled batch still calls its completion block")
        let operations = completed.value ?? []
        XCTAssertEqual(operations.count, 5)
        XCTAssertTrue(operations.allSatisfy(\.isCancelled), "the completion says what was cancelled")
        XCTAssertTrue(operations.allSatisfy { ($0.error as NSError?)?.code == NSURLErrorCancelled })
        XCTAssertTrue(spin(until: { queue.operationCount == 0 }, timeout: 10))
    }

    func testCancellingAQueueHoldingAChainOfRequestOperations() {
        routeSlow()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        let head = HTTPRequestOperation(request: request("/slow"))
        finishSlowly(head)
        let dependents = (Weak<Operation>(), Weak<Operation>())
        do {
            let middle = HTTPRequestOperation(request: request("/slow"))
            let tail = HTTPRequestOperation(request: request("/slow"))
            middle.addDependency(head)
            tail.addDependency(middle)
            dependents.0.value = middle
            dependents.1.value = tail
            queue.addOperations([head, middle, tail], waitUntilFinished: false)
        }
        waitUntilExecuting(head)
        queue.cancelAllOperations()
        XCTAssertTrue(spin(until: { head.isFinished && queue.operationCount == 0 }, timeout: 15))
        // The dependents are let go once the operations they depended on have finished.
        XCTAssertTrue(spin(until: { dependents.0.value == nil && dependents.1.value == nil }, timeout: 10))
    }

    func testCancellingAQueueHoldingABlockOperationThatDependsOnARunningRequest() {
        routeSlow()
        let queue = OperationQueue()
        let login = HTTPRequestOperation(request: request("/slow"))
        finishSlowly(login)
        let ran = Locked(false)
        do {
            let afterLogin = BlockOperation { ran.value = true }
            afterLogin.addDependency(login)
            queue.addOperations([login, afterLogin], waitUntilFinished: false)
        }
        waitUntilExecuting(login)
        queue.cancelAllOperations()
        XCTAssertTrue(spin(until: { login.isFinished && queue.operationCount == 0 }, timeout: 15))
        XCTAssertFalse(ran.value, "a cancelled block operation does not run its block")
    }

    func testCancellingOneDependentOfARunningRequestThatNobodyElseHolds() {
        routeSlow(0.4)   // the request itself runs to its end
        let queue = OperationQueue()
        let first = HTTPRequestOperation(request: request("/slow"))
        let dependent = Weak<Operation>()
        do {
            let second = HTTPRequestOperation(request: request("/slow"))
            second.addDependency(first)
            dependent.value = second
            queue.addOperations([first, second], waitUntilFinished: false)
        }
        waitUntilExecuting(first)
        dependent.value?.cancel()
        XCTAssertTrue(spin(until: { first.isFinished && queue.operationCount == 0 }, timeout: 15))
        XCTAssertNil(first.error, "only the dependent was cancelled")
        XCTAssertTrue(spin(until: { dependent.value == nil }, timeout: 10))
    }

    func testCancellingAManagersQueueWhoseDependentCameFirst() {
        routeSlow()
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = .global()
        let login = Weak<Operation>()
        do {
            // Added in reverse: the queue cancels (and may free) the dependent
            // before it reaches the request it depends on.
            let afterLogin = BlockOperation {}
            let operation = manager.httpRequestOperation(with: request("/slow"), success: nil, failure: { _, _ in
                Thread.sleep(forTimeInterval: 0.3)
            })
            afterLogin.addDependency(operation)
            login.value = operation
            manager.operationQueue.addOperations([afterLogin, operation], waitUntilFinished: false)
        }
        if let running = login.value { waitUntilExecuting(running) }
        manager.operationQueue.cancelAllOperations()
        XCTAssertTrue(spin(until: { manager.operationQueue.operationCount == 0 && login.value == nil }, timeout: 15))
    }

    func testAwaitedBatchReturnsEveryOperationOnceTheyHaveFinished() async {
        server.respond("/b", body: Data("b".utf8))
        let operations = (0..<4).map { _ in HTTPRequestOperation(request: request("/b")) }
        let progress = Locked<[Int]>([])
        let finished = await URLConnectionOperation.batch(ofRequestOperations: operations, on: OperationQueue()) { done, _ in
            progress.append(done)
        }
        XCTAssertEqual(finished.count, 4)
        XCTAssertTrue(finished.allSatisfy { $0.isFinished && $0.error == nil })
        XCTAssertEqual(progress.value.sorted(), [1, 2, 3, 4])
    }

    func testCancellingTheTaskAwaitingABatchCancelsItAndStillReturns() async {
        routeSlow()
        let operations = (0..<3).map { _ in HTTPRequestOperation(request: request("/slow")) }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let waiting = Task { await URLConnectionOperation.batch(ofRequestOperations: operations, on: queue) }
        for _ in 0..<1000 where !operations[0].isExecuting { try? await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertTrue(operations[0].isExecuting)
        waiting.cancel()
        let finished = await waiting.value
        XCTAssertEqual(finished.count, 3)
        XCTAssertTrue(finished.allSatisfy { $0.isCancelled && ($0.error as NSError?)?.code == NSURLErrorCancelled })
    }
}

/// A weak reference a test can fill from inside a scope.
final class Weak<Value: AnyObject>: @unchecked Sendable {
    // @unchecked: set on the test's thread before the code under test runs, read after.
    weak var value: Value?
}
