import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// AFNetworking 2.7's AFHTTPRequestOperationTests that the rest of the suite
/// has no equivalent for, against the public API only. As in 2.7, operations
/// are started with `start()` (no queue). httpbin's `/status`, `/redirect` and
/// `/get` come from the local httpbin; its `/delay/<n>` is played by the
/// scripted server, so that a cancelled or paused request leaves no httpbin
/// worker asleep for the tests after it.
final class HTTPRequestOperationPort27Tests: OperationTestCase {

    // MARK: Fixtures

    private func httpbinRequest(_ path: String) throws -> URLRequest {
        URLRequest(url: try SharedServers.httpbin().baseURL.appendingPathComponent(path))
    }

    /// httpbin's `/delay/<n>`, held by an event instead of a clock: the JSON
    /// body goes only once `released` is set (never, for a test that cancels;
    /// tearDown's shutdown ends the wait), so a pause or cancel always lands
    /// before the answer, however slow the machine.
    private func heldRequest(_ released: Locked<Bool>) -> URLRequest {
        let body = Data("{\"delay\":1}".utf8)
        server.route("/delay/1") { _ in
            [.waitUntil({ released.value }, timeout: 60),
             .head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
             .body(body), .end]
        }
        return request("/delay/1")
    }

    /// Starts `operation` itself and waits (bounded) for its success or failure block.
    private func startAndWait(_ operation: HTTPRequestOperation, timeout: TimeInterval = 15) -> Outcome {
        let outcome = Locked(Outcome())
        let done = expectation(description: "success or failure")
        record(operation, into: outcome) { done.fulfill() }
        operation.start()
        wait(for: [done], timeout: timeout)
        return outcome.value
    }

    /// Sets only a failure block (2.7 passes nil for success), runs `action`
    /// (which starts or cancels `operation`), and returns what the failure
    /// block got once it has run (bounded wait).
    private func failureBlockError(_ operation: HTTPRequestOperation, timeout: TimeInterval = 15,
                                   after action: () -> Void) -> NSError? {
        let received = Locked<NSError?>(nil)
        let failed = expectation(description: "failure")
        operation.setCompletionBlockWithSuccess(nil, failure: { _, error in
            received.value = error as NSError
            failed.fulfill()
        })
        action()
        wait(for: [failed], timeout: timeout)
        return received.value
    }

    // MARK: Pause and resume

    func testPauseResumeStallsNetworkThread() {
        let released = Locked(false)
        let request = heldRequest(released)
        let operation = HTTPRequestOperation(request: request)
        let outcome = Locked(Outcome())
        let done = expectation(description: "first operation")
        record(operation, into: outcome) { done.fulfill() }

        operation.start()
        operation.pause()
        XCTAssertTrue(spin { operation.isPaused }, "paused right after it started")

        operation.resume()
        XCTAssertTrue(spin { operation.isExecuting })
        released.value = true
        wait(for: [done], timeout: 15)
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertNil(outcome.value.error)
        XCTAssertNotNil(outcome.value.object)

        // The network thread still serves the requests that come after.
        let second = startAndWait(HTTPRequestOperation(request: request))
        XCTAssertNil(second.error)
        XCTAssertNotNil(second.object)
    }

    func testThatOperationCanBePaused() {
        let operation = HTTPRequestOperation(request: heldRequest(Locked(false)))
        operation.start()
        XCTAssertTrue(spin { operation.isExecuting })

        operation.pause()
        XCTAssertTrue(spin { operation.isPaused })
        operation.cancel()
        // Migration.md: cancelling a paused operation finishes it (2.7 left it paused).
        XCTAssertTrue(spin { operation.isFinished })
    }

    func testThatPausedOperationCanBeResumed() {
        let operation = HTTPRequestOperation(request: heldRequest(Locked(false)))
        operation.start()
        XCTAssertTrue(spin { operation.isExecuting })

        operation.pause()
        XCTAssertTrue(spin { operation.isPaused })

        operation.resume()
        XCTAssertTrue(spin { operation.isExecuting })

        operation.cancel()
        XCTAssertTrue(spin { operation.isFinished })
    }

    func testThatPausedOperationCanBeCompleted() {
        let released = Locked(false)
        let operation = HTTPRequestOperation(request: heldRequest(released))
        let outcome = Locked(Outcome())
        let done = expectation(description: "completion")
        record(operation, into: outcome) { done.fulfill() }

        operation.start()
        XCTAssertTrue(spin { operation.isExecuting })

        operation.pause()
        XCTAssertTrue(spin { operation.isPaused })

        operation.resume()
        XCTAssertTrue(spin { operation.isExecuting })
        released.value = true
        wait(for: [done], timeout: 15)
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertNil(outcome.value.error)
        XCTAssertNotNil(outcome.value.object)
        XCTAssertEqual(outcome.value.calls, 1)
    }

    // MARK: Status codes

    func testThatOperationInvokesSuccessCompletionBlockOn204() throws {
        let operation = HTTPRequestOperation(request: try httpbinRequest("status/204"))
        let outcome = startAndWait(operation)
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.object as? Data, Data(), "an HTTPResponseSerializer hands an empty body over as empty data")
    }

    func testThatOperationInvokesFailureCompletionBlockWithErrorOnFailure() throws {
        let operation = HTTPRequestOperation(request: try httpbinRequest("status/404"))
        let error = failureBlockError(operation) { operation.start() }
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertNotNil(error)
        XCTAssertEqual(operation.response?.statusCode, 404)
    }

    // MARK: Cancellation

    func testThatCancellationOfRequestOperationSetsError() {
        let operation = HTTPRequestOperation(request: heldRequest(Locked(false)))
        operation.start()
        XCTAssertTrue(spin { operation.isExecuting })

        operation.cancel()
        XCTAssertTrue(spin { operation.error != nil })
        XCTAssertEqual((operation.error as NSError?)?.code, NSURLErrorCancelled)
        XCTAssertTrue(spin { operation.isFinished })
    }

    func testThatCancellationOfRequestOperationInvokesFailureCompletionBlock() {
        let operation = HTTPRequestOperation(request: heldRequest(Locked(false)))
        let error = failureBlockError(operation) {
            operation.start()
            XCTAssertTrue(spin { operation.isExecuting })
            operation.cancel()
        }
        XCTAssertNotNil(operation.error)
        XCTAssertEqual(error?.code, NSURLErrorCancelled)
        XCTAssertTrue(spin { operation.isFinished })
    }

    func testThatCancellationOfRequestBeforeStartingRequestSetsError() {
        let operation = HTTPRequestOperation(request: heldRequest(Locked(false)))
        let error = failureBlockError(operation) {
            operation.cancel()
            operation.start()
        }
        XCTAssertTrue(spin { operation.isCancelled && operation.isFinished })
        XCTAssertFalse(operation.isExecuting)
        XCTAssertNotNil(operation.error)
        XCTAssertEqual(error?.code, NSURLErrorCancelled)
        XCTAssertTrue(server.requests.isEmpty, "a request cancelled before its start sends nothing")
    }

    func testThatCancellationOfRequestBeforeStartingRequestSetsErrorInvokesFailureCompletionBlock() {
        let operation = HTTPRequestOperation(request: heldRequest(Locked(false)))
        let error = failureBlockError(operation) {
            operation.cancel()
            operation.start()
        }
        XCTAssertNotNil(operation.error)
        XCTAssertEqual(error?.code, NSURLErrorCancelled)
        XCTAssertTrue(spin { operation.isFinished })
    }

    // MARK: Redirects

    func testThatRedirectBlockIsCalledMultipleTimesWhenMultiple302sAreEncountered() throws {
        let operation = HTTPRequestOperation(request: try httpbinRequest("redirect/5"))
        let redirects = Locked(0)
        operation.setRedirectResponseBlock { _, request, redirectResponse in
            if redirectResponse != nil { redirects.increment() }
            return request
        }
        let outcome = startAndWait(operation)
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertNil(outcome.error)
        XCTAssertEqual(redirects.value, 5)
    }

    // MARK: Batches

    func testThatCompletionBlockForBatchRequestsIsFiredAfterAllOperationCompletionBlocks() throws {
        let firstSucceeded = Locked(false), secondSucceeded = Locked(false)
        let firstError = Locked<NSError?>(nil), secondError = Locked<NSError?>(nil)

        let first = HTTPRequestOperation(request: try httpbinRequest("get"))
        first.setCompletionBlockWithSuccess({ _, _ in firstSucceeded.value = true },
                                            failure: { _, error in firstError.value = error as NSError })
        first.responseSerializer = HTTPResponseSerializer()

        // Released at once: a delay only made it the slower of the two.
        let second = HTTPRequestOperation(request: heldRequest(Locked(true)))
        second.setCompletionBlockWithSuccess({ _, _ in secondSucceeded.value = true },
                                             failure: { _, error in secondError.value = error as NSError })
        second.responseSerializer = HTTPResponseSerializer()

        let firedAfterTheOthers = Locked(false)
        let completed = expectation(description: "batch completion")
        let batch = URLConnectionOperation.batch(ofRequestOperations: [first, second], progressBlock: nil, completionBlock: { _ in
            firedAfterTheOthers.value = firstSucceeded.value && secondSucceeded.value
            completed.fulfill()
        })
        let queue = OperationQueue()
        queue.addOperations(batch, waitUntilFinished: false)
        wait(for: [completed], timeout: 15)

        XCTAssertNil(firstError.value)
        XCTAssertNil(secondError.value)
        XCTAssertTrue(firedAfterTheOthers.value)
    }

    // MARK: Output stream

    func testThatOperationInvokesFailureCompletionBlockWithErrorOnWritingStreamFailure() throws {
        let streamError = NSError(domain: NSStreamSocketSSLErrorDomain, code: 0)
        let operation = HTTPRequestOperation(request: try httpbinRequest("get"))
        operation.outputStream = BrokenOutputStream(error: streamError)
        let error = failureBlockError(operation) { operation.start() }
        XCTAssertTrue(spin { operation.isFinished })
        XCTAssertEqual(error?.domain, streamError.domain, "\(String(describing: error))")
        XCTAssertEqual(error?.code, streamError.code, "\(String(describing: error))")
    }
}

/// An output stream that has no space and reports `error`: every write fails.
private final class BrokenOutputStream: OutputStream {
    private let error: NSError
    private let status = Locked(Stream.Status.notOpen)

    init(error: NSError) {
        self.error = error
        super.init(toMemory: ())
    }

    required init(toMemory: ()) {
        error = NSError(domain: NSStreamSocketSSLErrorDomain, code: 0)
        super.init(toMemory: ())
    }

    override func open() { status.value = .open }
    override func close() { status.value = .closed }
    override var streamStatus: Stream.Status { status.value }
    override var hasSpaceAvailable: Bool { false }
    override var streamError: Error? { error }
    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }
    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int { -1 }
}
