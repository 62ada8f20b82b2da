@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// An upload task's file is measured as reading it finds it (stat(2), links
/// followed): a symbolic link sends its whole target with the target's length,
/// and what is not a regular file fails with NSURLErrorFileDoesNotExist before
/// anything is sent. Measured with lstat(2), a link was announced and sent as
/// the link's own length, and a FIFO as an empty body, without an error.
final class SessionUploadLinkedFileTests: SessionTransferTestCase {
    private func serveCounting(_ path: String) {
        server.route(path) { request in
            let json = Data("{\"received\":\(request.body.count)}".utf8)
            return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "\(json.count)")]),
                    .body(json), .end]
        }
    }

    private func post(_ path: String) -> URLRequest {
        var request = self.request(path, method: "POST", timeout: 20)
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        return request
    }

    private func upload(_ file: URL, to path: String) -> (URLSessionUploadTask, TaskOutcome) {
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = makeManager().uploadTask(with: post(path), fromFile: file, progress: nil, completionHandler: recorder(outcome, done))
        return (task, finish(task, outcome, done, timeout: 30))
    }

    func testALinkToAFileUploadsTheWholeFile() throws {
        serveCounting("/upload")
        let body = pattern(1000, salt: 23)
        let target = temporaryURL("linked-upload-target")
        try body.write(to: target)
        let link = temporaryURL("linked-upload-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)

        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "upload")
        let task = makeManager().uploadTask(with: post("/upload"), fromFile: link, progress: nil, completionHandler: recorder(outcome, done))
        XCTAssertEqual(task.countOfBytesExpectedToSend, 1000, "the target's length, not the link's")
        let result = finish(task, outcome, done, timeout: 30)
        XCTAssertNil(result.error)
        let request = try XCTUnwrap(server.requests.first { $0.uri == "/upload" })
        XCTAssertEqual(request.headers.first(name: "content-length"), "1000")
        XCTAssertEqual(request.body, body, "the whole target arrives")
        XCTAssertEqual(task.countOfBytesSent, 1000)
    }

    func testALinkToADirectoryFailsWithFileDoesNotExist() throws {
        serveCounting("/upload")
        let folder = temporaryURL("linked-upload-folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let link = temporaryURL("linked-upload-folder-link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)

        let (task, result) = upload(link, to: "/upload")
        XCTAssertEqual(result.calls, 1)
        XCTAssertEqual(result.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(result.error?.code, NSURLErrorFileDoesNotExist)
        XCTAssertEqual(task.state, .completed)
        XCTAssertTrue(server.requests.isEmpty, "nothing was sent")
    }

    /// A FIFO has no length (stat(2) gives 0): with no Content-Length of the
    /// caller's it is refused, not sent as an empty body.
    func testAFIFOWithoutAContentLengthFailsWithFileDoesNotExist() throws {
        serveCounting("/upload")
        let fifo = temporaryURL("upload-fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0, "mkfifo: errno \(errno)")
        // Held open for reading and writing, so that no open(2) of it can block
        // should the library ever open it (it must not).
        let held = open(fifo.path, O_RDWR | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(held, 0)
        defer { if held >= 0 { _ = close(held) } }

        let (task, result) = upload(fifo, to: "/upload")
        XCTAssertEqual(result.calls, 1)
        XCTAssertEqual(result.error?.code, NSURLErrorFileDoesNotExist)
        XCTAssertEqual(task.countOfBytesExpectedToSend, -1, "unknown, not the 0 lstat(2) gave")
        XCTAssertTrue(server.requests.isEmpty, "nothing was sent")
    }
}
