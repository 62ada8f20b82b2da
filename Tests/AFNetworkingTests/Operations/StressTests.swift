import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Many operations, a third cancelled from other threads while they run.
final class StressTests: OperationTestCase {
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [ObjectIdentifier: Int] = [:]
        private var completionCounts: [ObjectIdentifier: Int] = [:]
        func outcome(_ operation: AnyObject) { lock.lock(); counts[ObjectIdentifier(operation), default: 0] += 1; lock.unlock() }
        func completion(_ operation: ObjectIdentifier) { lock.lock(); completionCounts[operation, default: 0] += 1; lock.unlock() }
        var snapshot: ([Int], [Int]) { lock.lock(); defer { lock.unlock() }; return (Array(counts.values), Array(completionCounts.values)) }
    }

    func testTwoThousandOperationsWithRandomCancellation() {
        let total = Int(ProcessInfo.processInfo.environment["AFN_STRESS_COUNT"] ?? "") ?? 2000
        server.route("/s") { _ in
            [.wait(Double.random(in: 0...0.005)), .head(status: 200, headers: [("Content-Length", "4")]), .body(Data("body".utf8)), .end]
        }
        let tally = Tally()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 16
        let operations = (0..<total).map { _ -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: request("/s"))
            operation.completionQueue = DispatchQueue.global()
            operation.setCompletionBlockWithSuccess({ op, _ in tally.outcome(op) }, failure: { op, _ in tally.outcome(op) })
            let identity = ObjectIdentifier(operation)  // not the operation itself: no retain cycle
            operation.completionBlock = { tally.completion(identity) }
            return operation
        }
        queue.addOperations(operations, waitUntilFinished: false)
        let victims = operations.shuffled().prefix(total / 3)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for (index, operation) in victims.enumerated() where index % 4 == worker {
                if index % 7 == 0 { usleep(UInt32.random(in: 0...200)) }
                operation.cancel()
            }
        }
        let deadline = Date().addingTimeInterval(120)
        var allDone = false
        while !allDone && Date() < deadline {
            let (outcomes, completions) = tally.snapshot
            allDone = outcomes.count == total && completions.count == total
            if !allDone { _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.05)) }
        }
        let (outcomes, completions) = tally.snapshot
        XCTAssertEqual(outcomes.count, total, "every operation reported an outcome")
        XCTAssertTrue(outcomes.allSatisfy { $0 == 1 }, "no operation reported twice")
        XCTAssertEqual(completions.count, total)
        XCTAssertTrue(completions.allSatisfy { $0 == 1 })
        XCTAssertTrue(operations.allSatisfy(\.isFinished))
        let cancelled = operations.filter { ($0.error as NSError?)?.code == NSURLErrorCancelled }
        XCTAssertTrue(cancelled.allSatisfy(\.isCancelled))
    }
}
