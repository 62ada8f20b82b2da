@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Session downloads: a download resumed from resume data whose partial file
/// already holds the whole entity finishes (the server's `416 bytes */N`
/// equal to the offset means done), descriptors are held only while a
/// download writes, and a ranged request asks for the identity encoding.
final class SessionDownloadCompleteTests: SessionTransferTestCase {
    /// Serves `body` chunked (so the client cannot tell it is complete) and
    /// stalls; a ranged request gets `ranged(start)`.
    private func serve(_ path: String, body: Data, ranged: @escaping @Sendable (Int) -> [ScriptedServer.Step]) {
        server.route(path) { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                return ranged(start)
            }
            return [.head(status: 200, headers: [("ETag", "\"v1\""), ("Transfer-Encoding", "chunked")]), .body(body), .wait(20)]
        }
    }

    /// Downloads until `bytes` were written, then cancels by producing resume data.
    private func resumeData(_ manager: URLSessionManager, _ request: URLRequest, after bytes: Int64) -> Data? {
        let reached = expectation(description: "\(bytes) bytes")
        let once = Locked(false)
        let done = expectation(description: "cancelled")
        let task = manager.downloadTask(with: request, progress: { progress in
            if progress.completedUnitCount >= bytes, once.setOnce() { reached.fulfill() }
        }, destination: nil, completionHandler: { _, _, _ in done.fulfill() })
        task.resume()
        wait(for: [reached], timeout: 20)
        let data = Locked<Data?>(nil)
        let produced = expectation(description: "resume data")
        task.cancel(byProducingResumeData: { resumeData in
            data.value = resumeData
            produced.fulfill()
        })
        wait(for: [produced, done], timeout: 15)
        return data.value
    }

    func testAResumedDownloadWhosePartialFileIsCompleteFinishesOnA416() throws {
        let body = pattern(40_000, salt: 21)
        serve("/whole", body: body) { start in
            [.head(status: 416, headers: [("Content-Range", "bytes */\(start)"), ("Content-Type", "text/html"), ("Content-Length", "4")]),
             .body(Data("full".utf8)), .end]
        }
        let data = try XCTUnwrap(resumeData(makeManager(), request("/whole"), after: Int64(body.count)))
        let target = temporaryURL("whole")
        let (_, outcome) = runDownload(makeManager(), resumeData: data, destination: { _, _ in target })
        XCTAssertNil(outcome.error, "not -1011: the partial file holds the whole entity")
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 206, "a resumed download completes with a 206, whole here")
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Range"), "bytes 0-\(body.count - 1)/\(body.count)")
        XCTAssertEqual(outcome.fileURL, target)
        XCTAssertEqual(try Data(contentsOf: target), body, "the partial file was moved, not orphaned")
        let ranged = server.requests.filter { $0.headers.first(name: "range") != nil }
        XCTAssertEqual(ranged.count, 1)
        XCTAssertEqual(ranged.first?.headers.first(name: "accept-encoding"), "identity", "a range counts the entity's own bytes")
    }
}
