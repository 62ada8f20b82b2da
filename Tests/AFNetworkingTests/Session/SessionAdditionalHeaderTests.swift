@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A session configuration's `httpAdditionalHeaders` field that cannot be
/// sent (a CR, LF or NUL in its value, a name that is not a token) fails each
/// task that would carry it with `NSURLErrorBadURL` when resumed, before
/// anything is sent. It was added with `URLRequest.setValue`, which corelibs
/// makes drop such a value without a word: the request went out without it.
final class SessionAdditionalHeaderTests: SessionTransferTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.respond("/h", body: Data("h".utf8))
    }

    private func session(adding headers: [AnyHashable: Any]) -> URLSessionManager {
        let configuration = URLSessionConfiguration.default
        configuration.httpAdditionalHeaders = headers
        let manager = makeManager(configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return manager
    }

    /// `NSURLErrorBadURL` naming the configuration and `field`, never quoting `secret`.
    private func assertRefused(_ error: NSError?, field: String, secret: String = "s3cr3t", _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(error?.domain, NSURLErrorDomain, what, file: file, line: line)
        XCTAssertEqual(error?.code, NSURLErrorBadURL, what, file: file, line: line)
        let message = error?.localizedDescription ?? ""
        XCTAssertTrue(message.contains("httpAdditionalHeaders field \"\(field)\""), "\(what): \(message)", file: file, line: line)
        XCTAssertFalse(message.contains(secret), "\(what): the value is not quoted", file: file, line: line)
    }

    func testADataTaskFailsAndNothingReachesTheServer() {
        let manager = session(adding: ["X-Bad": "a\r\nb", "X-Good": "yes"])
        let (task, outcome) = runData(manager, request("/h"))
        assertRefused(outcome.error, field: "X-Bad", "data task")
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(task.state, .completed)
        XCTAssertEqual(task.error.map { $0 as NSError }?.code, NSURLErrorBadURL)
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }

    func testEveryValueWithACROrLFOrNULAndEveryKindOfTaskFails() {
        for value in ["s3cr3t\r\nX-Evil: 1", "s3cr3t\n", "s3cr3t\r", "s3cr3t\u{0}"] {
            let manager = session(adding: ["Authorization": value])
            assertRefused(runData(manager, request("/h")).1.error, field: "Authorization", value.debugDescription + " data")
            let download = runDownload(manager, request("/h"), destination: nil).1
            assertRefused(download.error, field: "Authorization", value.debugDescription + " download")

            let outcome = Locked(TaskOutcome())
            let done = expectation(description: "upload completion")
            let upload = manager.uploadTask(with: request("/h", method: "POST"), from: Data("body".utf8), progress: nil,
                                            completionHandler: recorder(outcome, done))
            assertRefused(finish(upload, outcome, done, timeout: 30).error, field: "Authorization", value.debugDescription + " upload")
        }
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }

    func testANameThatIsNotATokenFails() {
        let manager = session(adding: ["X Bad": "v"])
        assertRefused(runData(manager, request("/h")).1.error, field: "X Bad", "name with a space")
        XCTAssertEqual(server.connectionCount, 0, "nothing was sent")
    }

    /// A field the request sets itself is not added, so it is not checked;
    /// the configuration's other fields are sent as before.
    func testAFieldTheRequestSetsItselfIsSent() throws {
        let manager = session(adding: ["X-Bad": "a\r\nb", "X-Good": "yes"])
        var request = request("/h")
        request.setValue("mine", forHTTPHeaderField: "X-Bad")
        let (_, outcome) = runData(manager, request)
        XCTAssertNil(outcome.error)
        let seen = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(seen.headers.first(name: "x-bad"), "mine")
        XCTAssertEqual(seen.headers.first(name: "x-good"), "yes")
    }
}
