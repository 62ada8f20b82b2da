import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Foundation's OperationQueue on Linux honours the operations' KVO announcements.
final class QueueBehaviourTests: OperationTestCase {
    /// Records the order of events from any thread.
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var items: [String] = []
        func add(_ item: String) { lock.lock(); items.append(item); lock.unlock() }
        var all: [String] { lock.lock(); defer { lock.unlock() }; return items }
    }

    func testMaxConcurrentOperationCountIsRespected() {
        // Requests the server has received and not yet ended: never more than
        // the operations executing at once. A request leaves the count just
        // before its end goes out, so before the client can finish that
        // operation and the queue start another. The first answer is held
        // until a second request has arrived (at most 10 s), so both slots are
        // seen in use together however slow the machine, not only when the
        // second request comes within a short answer's delay.
        let load = Locked((inFlight: 0, peak: 0))
        let arrivals = Locked(0)
        server.route("/slow") { _ in
            load.withLock { $0.inFlight += 1; $0.peak = max($0.peak, $0.inFlight) }
            let hold: [ScriptedServer.Step] = arrivals.increment() == 1 ? [.waitUntil({ load.value.peak >= 2 }, timeout: 10)] : []
            return hold + [.wait(0.1), .head(status: 200, headers: [("Content-Length", "1")]), .body(Data("x".utf8)),
                           .perform({ load.withLock { $0.inFlight -= 1 } }), .end]
        }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 2
        let operations = (0..<8).map { _ in HTTPRequestOperation(request: request("/slow")) }
        queue.addOperations(operations, waitUntilFinished: false)
        XCTAssertTrue(spin(until: { operations.allSatisfy(\.isFinished) }, timeout: 30))
        XCTAssertTrue(operations.allSatisfy { $0.error == nil }, "\(operations.compactMap(\.error))")
        XCTAssertEqual(load.value.peak, 2)
    }

    func testDiamondDAGOfTwentyFinishesInTopologicalOrder() {
        server.route("/n") { _ in [.wait(0.01), .head(status: 200, headers: [("Content-Length", "1")]), .body(Data("n".utf8)), .end] }
        let log = Log()
        // Layers 1-6-6-6-1: each node depends on every node of the layer above.
        let layers = [1, 6, 6, 6, 1]
        var built: [[HTTPRequestOperation]] = []
        for (depth, width) in layers.enumerated() {
            let layer = (0..<width).map { index -> HTTPRequestOperation in
                let operation = HTTPRequestOperation(request: request("/n"))
                operation.completionQueue = DispatchQueue.global()
                operation.setCompletionBlockWithSuccess({ _, _ in log.add("\(depth).\(index)") }, failure: { _, _ in log.add("failed") })
                built.last?.forEach { operation.addDependency($0) }
                return operation
            }
            built.append(layer)
        }
        let all = built.flatMap { $0 }
        XCTAssertEqual(all.count, 20)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4
        queue.addOperations(all.reversed(), waitUntilFinished: false)
        XCTAssertTrue(spin(until: { all.allSatisfy(\.isFinished) }, timeout: 30))
        let order = log.all
        XCTAssertEqual(order.count, 20)
        let depths = order.compactMap { Int($0.split(separator: ".")[0]) }
        XCTAssertEqual(depths, depths.sorted(), "every node completes after all of its dependencies: \(order)")
    }

    func testDependentStartsOnlyAfterSuccessBlockReturned() {
        server.respond("/first", body: Data("1".utf8))
        let log = Log()
        let first = HTTPRequestOperation(request: request("/first"))
        first.completionQueue = DispatchQueue.global()
        first.setCompletionBlockWithSuccess({ _, _ in
            Thread.sleep(forTimeInterval: 0.2)
            log.add("first-success-returned")
        }, failure: nil)
        let second = BlockOperation { log.add("second-started") }
        second.addDependency(first)
        let queue = OperationQueue()
        queue.addOperations([first, second], waitUntilFinished: false)
        XCTAssertTrue(spin(until: { second.isFinished }, timeout: 10))
        XCTAssertEqual(log.all, ["first-success-returned", "second-started"])
    }

    func testWaitUntilFinishedOnMainThreadReturnsWithMainQueueCompletion() {
        server.respond("/w", body: Data("w".utf8))
        let operation = HTTPRequestOperation(request: request("/w"))
        let successRan = Locked(false)
        operation.setCompletionBlockWithSuccess({ _, _ in successRan.value = true }, failure: nil)  // main queue
        XCTAssertTrue(Thread.isMainThread)
        operation.start()
        operation.waitUntilFinished()
        XCTAssertTrue(operation.isFinished)
        XCTAssertTrue(successRan.value)
    }

    func testAddOperationsWaitUntilFinishedFromBackgroundThread() {
        server.respond("/bg", body: Data("bg".utf8))
        let operations = (0..<3).map { _ in HTTPRequestOperation(request: request("/bg")) }
        operations.forEach { $0.completionQueue = DispatchQueue.global() }
        let done = expectation(description: "waited")
        DispatchQueue.global().async {
            OperationQueue().addOperations(operations, waitUntilFinished: true)
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertTrue(operations.allSatisfy { $0.isFinished && $0.responseString == "bg" })
    }

    func testQueuePriorityOrdersWaitingOperations() {
        server.respond("/p", body: Data("p".utf8))
        let log = Log()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.isSuspended = true
        let priorities: [Operation.QueuePriority] = [.veryLow, .normal, .veryHigh, .low, .high]
        for priority in priorities {
            let operation = HTTPRequestOperation(request: request("/p"))
            operation.queuePriority = priority
            operation.completionQueue = DispatchQueue.global()
            operation.setCompletionBlockWithSuccess({ _, _ in log.add("\(priority.rawValue)") }, failure: nil)
            queue.addOperation(operation)
        }
        queue.isSuspended = false
        XCTAssertTrue(spin(until: { log.all.count == 5 }, timeout: 10))
        XCTAssertEqual(log.all, ["8", "4", "0", "-4", "-8"])
    }

    /// An operation paused while its queue still holds it waiting is no
    /// longer ready, and the queue is told (2.7 announced isReady with
    /// isPaused): the queue passes over it instead of starting it, where it
    /// held the only executing slot until resumed, and starts it once it is
    /// resumed.
    func testAQueuedOperationPausedBeforeItStartedLeavesTheSlotToTheNext() {
        let released = Locked(false)
        server.route("/a") { _ in
            [.waitUntil({ released.value }, timeout: 10), .head(status: 200, headers: [("Content-Length", "1")]), .body(Data("a".utf8)), .end]
        }
        server.respond("/b", body: Data("b".utf8))
        server.respond("/c", body: Data("c".utf8))
        let log = Log()
        let operations = ["a", "b", "c"].map { name -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: request("/\(name)"))
            operation.completionQueue = DispatchQueue.global()
            operation.setCompletionBlockWithSuccess({ _, _ in log.add(name) }, failure: { _, _ in log.add("\(name) failed") })
            return operation
        }
        let (a, b, c) = (operations[0], operations[1], operations[2])
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.addOperations(operations, waitUntilFinished: false)
        XCTAssertTrue(spin(until: { a.isExecuting }), "A holds the only slot, its answer held back")
        b.pause()
        XCTAssertTrue(b.isPaused)
        released.value = true
        XCTAssertTrue(spin(until: { c.isFinished }, timeout: 15), "C did not run: the paused B held the slot")
        XCTAssertTrue(a.isFinished)
        XCTAssertTrue(b.isPaused)
        XCTAssertFalse(b.isExecuting)
        XCTAssertFalse(b.isFinished)
        XCTAssertFalse(server.requests.contains { $0.uri == "/b" }, "a paused operation sends nothing")
        XCTAssertEqual(log.all, ["a", "c"])
        b.resume()
        XCTAssertTrue(spin(until: { b.isFinished }, timeout: 15), "resumed, B runs")
        XCTAssertNil(b.error)
        XCTAssertEqual(log.all, ["a", "c", "b"])
        XCTAssertTrue(spin(until: { queue.operationCount == 0 }))
    }

    func testCompletionBlockRunsOnceOnCompletionQueueAfterSuccess() {
        server.respond("/c", body: Data("c".utf8))
        let log = Log()
        let queue = DispatchQueue(label: "custom")
        let key = DispatchSpecificKey<String>()
        queue.setSpecific(key: key, value: "custom")
        let operation = HTTPRequestOperation(request: request("/c"))
        operation.completionQueue = queue
        operation.setCompletionBlockWithSuccess({ _, _ in log.add("success:\(DispatchQueue.getSpecific(key: key) ?? "?")") }, failure: nil)
        operation.completionBlock = { log.add("completion:\(DispatchQueue.getSpecific(key: key) ?? "?")") }
        OperationQueue().addOperation(operation)
        XCTAssertTrue(spin(until: { log.all.count == 2 }, timeout: 10))
        XCTAssertEqual(log.all, ["success:custom", "completion:custom"])
    }

    func testCompletionGroupCoversSuccessBlock() {
        server.respond("/g", body: Data("g".utf8))
        let group = DispatchGroup()
        let log = Log()
        let operation = HTTPRequestOperation(request: request("/g"))
        operation.completionGroup = group
        operation.completionQueue = DispatchQueue.global()
        operation.setCompletionBlockWithSuccess({ _, _ in Thread.sleep(forTimeInterval: 0.1); log.add("success") }, failure: nil)
        OperationQueue().addOperation(operation)
        XCTAssertTrue(spin(until: { operation.isFinished }, timeout: 10))
        XCTAssertEqual(group.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(log.all, ["success"])
    }

    func testBatchReportsProgressThenCompletesAfterEveryOperation() {
        server.respond("/b", body: Data("b".utf8))
        let log = Log()
        let operations = (0..<5).map { index -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: request("/b"))
            operation.setCompletionBlockWithSuccess({ _, _ in log.add("op\(index)") }, failure: nil)
            return operation
        }
        let progress = Locked<[Int]>([])
        let completed = Locked<[URLConnectionOperation]?>(nil)
        let batch = URLConnectionOperation.batch(ofRequestOperations: operations, progressBlock: { finished, total in
            XCTAssertEqual(total, 5)
            progress.append(finished)
        }, completionBlock: { completed.value = $0 })
        XCTAssertEqual(batch.count, 6)
        XCTAssertEqual(batch.last?.dependencies.count, 5)
        OperationQueue().addOperations(batch, waitUntilFinished: false)
        XCTAssertTrue(spin(until: { completed.value != nil }, timeout: 15))
        XCTAssertEqual(progress.value, [1, 2, 3, 4, 5])
        XCTAssertEqual(log.all.count, 5, "every success block ran before the batch completion")
        XCTAssertEqual(completed.value?.count, 5)
    }

    func testEmptyBatchCompletes() {
        let completed = Locked<[URLConnectionOperation]?>(nil)
        let batch = URLConnectionOperation.batch(ofRequestOperations: [], progressBlock: nil, completionBlock: { completed.value = $0 })
        OperationQueue().addOperations(batch, waitUntilFinished: false)
        XCTAssertTrue(spin(until: { completed.value != nil }))
        XCTAssertEqual(completed.value?.count, 0)
    }
}
