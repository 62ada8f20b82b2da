@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A download holds a file descriptor only while it writes: opened at the
/// body's first byte, closed at the end (200 unstarted or finished downloads
/// hold none), and the destination of a restart-proof download is locked
/// while it is written, so a second writer gets a clear error.
final class DownloadFileDescriptorTests: SessionTransferTestCase {
    private func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    private func destination(_ name: String) -> URL {
        let url = temporaryURL(name)
        addTeardownBlock {
            for suffix in [".partial", ".partial.json"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        return url
    }

    func testUnstartedAndFinishedResumableDownloadsHoldNoDescriptor() throws {
        server.respond("/file", headers: [("ETag", "\"f\"")], body: pattern(2_000, salt: 2))
        let before = openDescriptors()
        var operations: [HTTPRequestOperation] = []
        for index in 0..<200 {
            operations.append(try HTTPRequestOperation(request: request("/file"), resumingDownloadTo: destination("fd-\(index)")))
        }
        XCTAssertLessThan(openDescriptors() - before, 10, "200 unstarted downloads")
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 8
        let finished = Locked(0)
        for operation in operations {
            operation.completionQueue = DispatchQueue(label: "fd")
            operation.setCompletionBlockWithSuccess({ _, _ in finished.increment() }, failure: { _, _ in finished.increment() })
        }
        queue.addOperations(operations, waitUntilFinished: false)
        XCTAssertTrue(spin(until: { finished.value == 200 }, timeout: 60))
        XCTAssertTrue(operations.allSatisfy { $0.error == nil })
        // curl keeps a few connections alive; one descriptor per download would be +200.
        XCTAssertLessThan(openDescriptors() - before, 50, "200 finished downloads, still referenced")
        withExtendedLifetime(operations) {}
    }

    func testFinishedSessionDownloadTasksHoldNoDescriptor() throws {
        server.respond("/file", body: pattern(2_000, salt: 3))
        let manager = makeManager()
        manager.completionQueue = DispatchQueue(label: "fd")
        let before = openDescriptors()
        let finished = Locked(0)
        var tasks: [URLSessionDownloadTask] = []
        for index in 0..<200 {
            let target = temporaryURL("session-fd-\(index)")
            let task = manager.downloadTask(with: request("/file"), progress: nil, destination: { _, _ in target },
                                            completionHandler: { _, _, _ in finished.increment() })
            tasks.append(task)
        }
        XCTAssertLessThan(openDescriptors() - before, 10, "200 unstarted download tasks")
        tasks.forEach { $0.resume() }
        XCTAssertTrue(spin(until: { finished.value == 200 }, timeout: 60))
        XCTAssertLessThan(openDescriptors() - before, 50, "200 finished download tasks, still referenced")
        withExtendedLifetime(tasks) {}
    }

    func testASecondWriterOfTheSameDestinationGetsAClearError() throws {
        let body = pattern(100_000, salt: 4)
        server.route("/slow") { _ in
            [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("ETag", "\"s\"")]), .body(body[0..<10_000]), .wait(20)]
        }
        let target = destination("locked")
        let first = try HTTPRequestOperation(request: request("/slow"), resumingDownloadTo: target)
        let started = Locked(false)
        first.setDownloadProgressBlock { _, _, _ in started.value = true }
        first.completionQueue = DispatchQueue(label: "lock")
        first.start()
        XCTAssertTrue(spin(until: { started.value }))
        XCTAssertThrowsError(try HTTPRequestOperation(request: request("/slow"), resumingDownloadTo: target)) { error in
            let error = error as NSError
            XCTAssertEqual(error.domain, NSURLErrorDomain)
            XCTAssertEqual(error.code, NSURLErrorCannotOpenFile)
            XCTAssertTrue(error.localizedDescription.contains("Another download is writing"), error.localizedDescription)
        }
        first.cancel()
        XCTAssertTrue(spin(until: { first.isFinished }))
        // Once the first has stopped, the destination is free again.
        XCTAssertNoThrow(try HTTPRequestOperation(request: request("/slow"), resumingDownloadTo: target))
    }
}
