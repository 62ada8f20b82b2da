import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// pause(), resume() and cancel() from several threads at random moments.
final class PauseStressTests: OperationTestCase {
    final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [ObjectIdentifier: Int] = [:]
        func record(_ operation: AnyObject) { lock.lock(); calls[ObjectIdentifier(operation), default: 0] += 1; lock.unlock() }
        var counts: [Int] { lock.lock(); defer { lock.unlock() }; return Array(calls.values) }
    }

    func testRandomPauseResumeCancelFromManyThreads() {
        let total = 200
        let body = Data((0..<64_000).map { UInt8(truncatingIfNeeded: $0) })
        server.route("/p") { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()), start < body.count {
                return [.head(status: 206, headers: [("Content-Length", "\(body.count - start)"),
                                                     ("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)")]),
                        .body(body[start...]), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)")]),
                    .body(body[0..<32_000]), .wait(Double.random(in: 0...0.02)), .body(body[32_000...]), .end]
        }
        let outcomes = Outcomes()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 16
        let operations = (0..<total).map { _ -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: request("/p"))
            operation.completionQueue = DispatchQueue.global()
            operation.setCompletionBlockWithSuccess({ op, _ in outcomes.record(op) }, failure: { op, _ in outcomes.record(op) })
            return operation
        }
        queue.addOperations(operations, waitUntilFinished: false)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for (index, operation) in operations.enumerated() where index % 4 == worker {
                usleep(UInt32.random(in: 0...300))
                switch Int.random(in: 0..<4) {
                case 0: operation.pause(); usleep(UInt32.random(in: 0...500)); operation.resume()
                case 1: operation.cancel()
                case 2: operation.pause(); operation.cancel()
                default: break
                }
            }
        }
        // Every plan ends in resume() or cancel() (or leaves the operation alone), so nothing is
        // resumed again here: an operation still paused or unfinished is a lost resume.
        XCTAssertTrue(spin(until: { operations.allSatisfy(\.isFinished) }, timeout: 60), "every operation finished")
        XCTAssertEqual(operations.filter(\.isPaused).count, 0, "no operation left paused (a lost resume)")
        XCTAssertTrue(spin(until: { outcomes.counts.count == total }, timeout: 10))
        XCTAssertTrue(outcomes.counts.allSatisfy { $0 == 1 }, "each reported exactly once")
        for operation in operations {
            if let error = operation.error as NSError? {
                XCTAssertEqual(error.code, NSURLErrorCancelled, "only cancellation may fail an operation here")
                XCTAssertTrue(operation.isCancelled)
            } else {
                // A cancel that came after the transfer ended leaves the success.
                XCTAssertEqual(operation.responseData, body, "a paused and resumed body is whole")
            }
        }
    }

    /// The same storm while operations wait for a redirect decision or for a
    /// challenge answer given late, from another queue.
    func testRandomPauseResumeCancelDuringRedirectsAndChallenges() {
        let total = 150
        let body = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        server.route("/r") { _ in [.head(status: 302, headers: [("Location", "/a"), ("Content-Length", "0")]), .end] }
        server.route("/a") { request in
            guard request.headers.first(name: "authorization") != nil else {
                return [.head(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"storm\""), ("Content-Length", "0")]), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)")]), .body(body), .end]
        }
        let outcomes = Outcomes()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 16
        let answers = DispatchQueue(label: "answers", attributes: .concurrent)
        let operations = (0..<total).map { _ -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: request("/r"))
            operation.completionQueue = DispatchQueue.global()
            operation.setRedirectResponseBlock { _, next, _ in
                usleep(UInt32.random(in: 0...1_000))
                return next
            }
            operation.setWillSendRequestForAuthenticationChallengeBlock { operation, challenge in
                answers.asyncAfter(deadline: .now() + .microseconds(Int.random(in: 0...2_000))) {
                    operation.use(URLCredential(user: "u", password: "p", persistence: .none), for: challenge)
                }
            }
            operation.setCompletionBlockWithSuccess({ op, _ in outcomes.record(op) }, failure: { op, _ in outcomes.record(op) })
            return operation
        }
        queue.addOperations(operations, waitUntilFinished: false)
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for (index, operation) in operations.enumerated() where index % 4 == worker {
                usleep(UInt32.random(in: 0...2_000))
                switch Int.random(in: 0..<4) {
                case 0: operation.pause(); usleep(UInt32.random(in: 0...500)); operation.resume()
                case 1: operation.cancel()
                case 2: operation.pause(); operation.cancel()
                default: break
                }
            }
        }
        // No rescue: every plan ends in resume() or cancel(), so one still paused is a lost resume.
        XCTAssertTrue(spin(until: { operations.allSatisfy(\.isFinished) }, timeout: 60),
                      "every operation finished (none stuck at a decision)")
        XCTAssertEqual(operations.filter(\.isPaused).count, 0, "no operation left paused (a lost resume)")
        XCTAssertTrue(spin(until: { outcomes.counts.count == total }, timeout: 10))
        XCTAssertTrue(outcomes.counts.allSatisfy { $0 == 1 }, "each reported exactly once")
        for operation in operations {
            if let error = operation.error as NSError? {
                XCTAssertEqual(error.code, NSURLErrorCancelled, "only cancellation may fail an operation here: \(error)")
            } else {
                XCTAssertEqual(operation.response?.statusCode, 200)
                XCTAssertEqual(operation.responseData, body)
            }
        }
    }
}
