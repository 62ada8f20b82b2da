import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// AFNetworking 3.2.1's AFURLSessionManagerTests that observed a task's
/// `NSProgress` with KVO (testDataTaskDownloadProgressCanBeKVOd,
/// testUploadProgressCanBeKVOd). swift-corelibs-foundation has no KVO
/// (Migration.md, "What Linux lacks (session layer)"): the object the manager
/// hands out before the task runs, with no progress block given, is read
/// instead — sampled on `operationQueue`, where its counts change, and after
/// the task has completed. 3.x's remote image and httpbin are played by the
/// scripted server.
final class URLSessionManagerPort32Tests: SessionTasksTestCase {

    /// The download progress object moves through a value between 0 and 1
    /// (KVO's "old != 0") and ends at exactly 1.0.
    func testDataTaskDownloadProgressCanBeKVOd() throws {
        let body = Data((0..<(512 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
        let firstPart = 128 << 10
        let samples = Locked<[Double]>([])
        // The rest of the body goes out only once the first part was sampled.
        // The block reads the object before its own bytes are counted, so the
        // first sample may be 0; the next call (the rest, withheld until then)
        // sees the first part counted and not the rest: part-way through.
        server.route("/big-image") { _ in
            [.head(status: 200, headers: [("Content-Type", "image/jpeg"), ("Content-Length", "\(body.count)")]),
             .body(body.prefix(firstPart)), .waitUntil({ !samples.value.isEmpty }, timeout: 60),
             .body(body.dropFirst(firstPart)), .end]
        }
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.setDataTaskDidReceiveDataBlock { [weak manager] _, dataTask, _ in
            if let progress = manager?.downloadProgress(for: dataTask) { samples.append(progress.fractionCompleted) }
        }
        var bigImage = request("/big-image", timeout: 60)
        bigImage.cachePolicy = .reloadIgnoringLocalCacheData
        let probe = makeProbe()
        let task = manager.dataTask(with: bigImage, uploadProgress: nil, downloadProgress: nil, completionHandler: probe.data)
        let progress = try XCTUnwrap(manager.downloadProgress(for: task), "a data task has a download progress before it runs")
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.object as? Data)?.count, body.count)
        drain(manager.operationQueue)
        XCTAssertEqual(progress.fractionCompleted, 1.0)
        XCTAssertEqual(progress.completedUnitCount, Int64(body.count))
        XCTAssertTrue(samples.value.contains { $0 > 0 && $0 < 1 }, "seen part-way: \(samples.value)")
    }

    /// The upload progress object of an upload task made without a progress block reaches 1.0.
    func testUploadProgressCanBeKVOd() throws {
        var payload = "AFNetworking"
        while payload.utf8.count < 20000 { payload += "AFNetworking" }
        let body = Data(payload.utf8)
        let received = Locked<Int>(-1)
        server.route("/post") { request in
            received.value = request.body.count
            return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]), .body(Data("{}".utf8)), .end]
        }
        var post = request("/post", method: "POST", timeout: 60)
        post.cachePolicy = .reloadIgnoringLocalCacheData
        let manager = makeManager()
        let probe = makeProbe()
        let task = manager.uploadTask(with: post, from: body, progress: nil, completionHandler: probe.data)
        let progress = try XCTUnwrap(manager.uploadProgress(for: task), "an upload task has an upload progress before it runs")
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(received.value, body.count)
        drain(manager.operationQueue)
        XCTAssertEqual(progress.fractionCompleted, 1.0)
        XCTAssertEqual(progress.completedUnitCount, Int64(body.count))
    }
}
