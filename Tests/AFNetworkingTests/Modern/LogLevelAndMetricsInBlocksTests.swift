import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import XCTest

/// What the Observing and Servers articles promise: a 5xx answer is logged at
/// `error` (other statuses at `info`), and an operation's `metrics` is already
/// set inside its success and failure blocks.
final class LogLevelAndMetricsInBlocksTests: OperationTestCase {
    private func finished(_ path: String, logger: Logger) -> (HTTPRequestOperation, Outcome) {
        let operation = HTTPRequestOperation(request: request(path))
        operation.logger = logger
        let outcome = run(operation)
        XCTAssertTrue(spin(until: { operation.isFinished }, timeout: 5), "the operation never finished")
        return (operation, outcome)
    }

    func testA5xxAnswerIsLoggedAtErrorAndA4xxAtInfo() {
        server.route("/boom") { _ in [.head(status: 500, headers: [("Content-Length", "4")]), .body(Data("boom".utf8)), .end] }
        server.route("/gone") { _ in [.head(status: 404, headers: [("Content-Length", "4")]), .body(Data("gone".utf8)), .end] }
        let recorder = ModernLogRecorder()
        XCTAssertEqual(finished("/boom", logger: recorder.logger(level: .info)).1.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(finished("/gone", logger: recorder.logger(level: .info)).1.error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(spin(until: { recorder.records.count >= 2 }, timeout: 5), "\(recorder.records)")
        let boom = recorder.records.filter { $0.message.contains("/boom 500 ") }
        XCTAssertEqual(boom.map(\.level), [.error], "\(recorder.records)")
        let gone = recorder.records.filter { $0.message.contains("/gone 404 ") }
        XCTAssertEqual(gone.map(\.level), [.info], "\(recorder.records)")
    }

    func testMetricsAreSetInsideTheSuccessAndFailureBlocks() {
        server.route("/ok") { _ in [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end] }
        server.route("/boom") { _ in [.head(status: 500, headers: [("Content-Length", "4")]), .body(Data("boom".utf8)), .end] }
        for path in ["/ok", "/boom"] {
            let operation = HTTPRequestOperation(request: request(path))
            let seen = Locked<(called: Bool, bytes: Int64?)>((false, nil))
            let done = expectation(description: path)
            operation.setCompletionBlockWithSuccess({ operation, _ in
                seen.value = (true, operation.metrics?.bytesReceived)
                done.fulfill()
            }, failure: { operation, _ in
                seen.value = (true, (operation as URLConnectionOperation).metrics?.bytesReceived)
                done.fulfill()
            })
            OperationQueue().addOperation(operation)
            wait(for: [done], timeout: 10)
            XCTAssertTrue(seen.value.called, path)
            XCTAssertEqual(seen.value.bytes, path == "/ok" ? 2 : 4, "\(path): metrics inside the block")
        }
    }
}
