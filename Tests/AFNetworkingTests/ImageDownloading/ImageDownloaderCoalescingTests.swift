import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// One request per URL however many callers; receipts; the bounded queue.
/// Requests are counted in nginx's access log by each URL's unique tag (the
/// fifty callers' by the scripted server that holds their answer).
final class ImageDownloaderCoalescingTests: ImageDownloaderTestCase {
    /// The body bytes nginx logged for the one request carrying `tag`
    /// (combined format: `"GET …" status bytes`).
    private func loggedBytes(_ tag: String) -> Int? {
        guard let line = logLines(tag).first, let close = line.range(of: "\" ") else { return nil }
        let fields = line[close.upperBound...].split(separator: " ")
        return fields.count > 1 ? Int(fields[1]) : nil
    }

    func testFiftyConcurrentCallersMakeOneRequest() throws {
        // No image cache: every caller after the first must join the download
        // in flight, not find the image afterwards. The scripted server holds
        // the answer until all fifty calls have returned (at most 30 s), so
        // the download is in flight while the callers arrive however slow the
        // machine; it counts the requests that reached it.
        downloader.imageCache = nil
        let server = try ScriptedServer()
        addTeardownBlock { server.shutdown() }
        let everyCallReturned = Locked(false)
        let png = ImageSamples.png(80, 60)
        server.route("/held.png") { _ in
            [.waitUntil({ everyCallReturned.value }, timeout: 30),
             .head(status: 200, headers: [("Content-Type", "image/png"), ("Content-Length", "\(png.count)")]), .body(png), .end]
        }
        let request = URLRequest(url: server.baseURL.appendingPathComponent("held.png"), cachePolicy: .useProtocolCachePolicy,
                                 timeoutInterval: 60)
        let downloader = self.downloader!
        let done = (0..<50).map { expectation(description: "caller \($0)") }
        let answers = (0..<50).map { _ in Locked(Answer()) }
        let receipts = Locked<[ImageDownloadReceipt?]>(Array(repeating: nil, count: 50))
        DispatchQueue.concurrentPerform(iterations: 50) { index in
            let answer = answers[index], expectation = done[index]
            let receipt = downloader.downloadImage(for: request, success: { _, response, image in
                answer.withLock { $0.image = image; $0.response = response; $0.calls += 1 }
                expectation.fulfill()
            }, failure: { _, _, error in
                answer.withLock { $0.error = error as NSError; $0.calls += 1 }
                expectation.fulfill()
            })
            receipts.withLock { $0[index] = receipt }
        }
        everyCallReturned.value = true
        wait(for: done, timeout: 30)
        let tasks = receipts.value.compactMap { $0?.task }
        XCTAssertEqual(tasks.count, 50)
        XCTAssertTrue(tasks.allSatisfy { $0 === tasks[0] }, "every receipt names the one task")
        XCTAssertEqual(Set(receipts.value.compactMap { $0?.receiptID }).count, 50)
        XCTAssertTrue(answers.allSatisfy { $0.value.calls == 1 && $0.value.image?.pixelWidth == 80 })
        let response = answers[0].value.response
        XCTAssertTrue(answers.allSatisfy { $0.value.response === response })
        // Every request the downloader made was answered before its callers' blocks ran.
        XCTAssertEqual(server.requests.count, 1, "exactly one request reached the server")
    }

    func testCancellingOneReceiptLeavesTheOthersTheirImages() throws {
        let request = request("slow/" + (try serve(ImageSamples.png(8, 8) + Data(count: 256 << 10))))
        let done = (0..<5).map { expectation(description: "caller \($0)") }
        let started = done.map { download(request, done: $0) }
        downloader.cancelTask(for: try XCTUnwrap(started[2].0))
        wait(for: done, timeout: 30)
        for (index, (_, answer)) in started.enumerated() {
            XCTAssertEqual(answer.value.calls, 1)
            if index == 2 {
                XCTAssertEqual(answer.value.error?.code, NSURLErrorCancelled)
                XCTAssertNil(answer.value.image)
            } else {
                XCTAssertEqual(answer.value.image?.pixelWidth, 8, "caller \(index)")
                XCTAssertNil(answer.value.error)
            }
        }
        XCTAssertEqual(settledLogLines(tag(of: request)).count, 1)
    }

    func testCancellingEveryReceiptCancelsTheRunningRequest() throws {
        let file = ImageSamples.png(64, 64) + Data(count: 2 << 20)
        let request = request("slow/" + (try serve(file)))
        let done = (0..<3).map { expectation(description: "caller \($0)") }
        let started = done.map { download(request, done: $0) }
        let task = try XCTUnwrap(started[0].0?.task)
        XCTAssertTrue(spin { task.countOfBytesReceived > 0 }, "the body is arriving")
        XCTAssertEqual(task.state, .running)
        for (receipt, _) in started { downloader.cancelTask(for: try XCTUnwrap(receipt)) }
        wait(for: done, timeout: 10)
        XCTAssertTrue(started.allSatisfy { $0.1.value.error?.code == NSURLErrorCancelled && $0.1.value.calls == 1 })
        XCTAssertTrue(spin { task.state == .completed }, "the task itself was cancelled")
        XCTAssertEqual((task.error as NSError?)?.code, NSURLErrorCancelled)
        XCTAssertTrue(nginx.logShows(tag(of: request), timeout: 10))
        let sent = try XCTUnwrap(loggedBytes(tag(of: request)))
        XCTAssertLessThan(sent, file.count, "nginx saw the connection go before the body was sent")

        // Forgotten: the next caller for the URL starts a new download.
        let again = expectation(description: "again")
        let (receipt, _) = download(request, done: again)
        XCTAssertFalse(receipt?.task === task)
        downloader.cancelTask(for: try XCTUnwrap(receipt))
        wait(for: [again], timeout: 10)
    }

    func testCancellingEveryReceiptCancelsAQueuedRequest() throws {
        let downloader = singleSlotDownloader(.fifo)
        defer { downloader.sessionManager.invalidateSessionCancelingTasks(true) }
        let blocker = request("slow/" + (try serveLargePNG()))
        let (blockerReceipt, _) = download(blocker, with: downloader)
        let queued = request(try servePNG())
        let done = (0..<2).map { expectation(description: "queued caller \($0)") }
        let receipts = done.map { download(queued, with: downloader, done: $0) }
        let task = try XCTUnwrap(receipts[0].0?.task)
        XCTAssertEqual(task.state, .suspended, "waiting for the one slot")
        for (receipt, _) in receipts { downloader.cancelTask(for: try XCTUnwrap(receipt)) }
        wait(for: done, timeout: 10)
        XCTAssertTrue(receipts.allSatisfy { $0.1.value.error?.code == NSURLErrorCancelled })
        XCTAssertTrue(spin { task.state == .completed }, "the queued task was cancelled")

        // Free the slot; a later download runs, and the cancelled one never did.
        downloader.cancelTask(for: try XCTUnwrap(blockerReceipt))
        let later = expectation(description: "later")
        let sentinel = request(try servePNG())
        let (_, answer) = download(sentinel, with: downloader, done: later)
        wait(for: [later], timeout: 20)
        XCTAssertNotNil(answer.value.image)
        XCTAssertTrue(nginx.logShows(tag(of: sentinel)))
        XCTAssertTrue(settledLogLines(tag(of: queued)).isEmpty, "the cancelled queued request was never sent")
    }

    func testACancelledOrAnsweredReceiptCancelsNothingMore() throws {
        let request = request(try serveSlowPNG())
        let first = expectation(description: "cancelled")
        let second = expectation(description: "success")
        let (receipt, one) = download(request, done: first)
        let (otherReceipt, two) = download(request, done: second)
        downloader.cancelTask(for: try XCTUnwrap(receipt))
        downloader.cancelTask(for: try XCTUnwrap(receipt))
        wait(for: [first, second], timeout: 20)
        downloader.cancelTask(for: try XCTUnwrap(otherReceipt))
        XCTAssertFalse(spin(until: { one.value.calls > 1 || two.value.calls > 1 }, timeout: 0.5))
        XCTAssertEqual(one.value.calls, 1)
        XCTAssertEqual(two.value.calls, 1)
        XCTAssertNotNil(two.value.image)
    }

    /// Three downloads queued behind a slow one start in `order` once it goes.
    private func startOrder(_ order: ImageDownloadPrioritization) throws -> [Int] {
        let downloader = singleSlotDownloader(order)
        defer { downloader.sessionManager.invalidateSessionCancelingTasks(true) }
        let (blockerReceipt, _) = download(request("slow/" + (try serveLargePNG())), with: downloader)
        let requests = try (0..<3).map { _ in request(try servePNG()) }
        let done = requests.map { expectation(description: "\($0.url!)") }
        let receipts = zip(requests, done).map { download($0, with: downloader, done: $1).0 }
        XCTAssertTrue(receipts.allSatisfy { $0?.task.state == .suspended })
        downloader.cancelTask(for: try XCTUnwrap(blockerReceipt))
        wait(for: done, timeout: 30)
        _ = settledLogLines("")
        let log = nginx.accessLog
        let positions = requests.map { log.range(of: tag(of: $0))?.lowerBound }
        let found = positions.compactMap { $0 }
        XCTAssertEqual(found.count, 3)
        return found.sorted().map { position in positions.firstIndex(of: position)! }
    }

    func testQueuedDownloadsStartFirstInFirstOut() throws {
        XCTAssertEqual(try startOrder(.fifo), [0, 1, 2])
    }

    func testQueuedDownloadsStartLastInFirstOut() throws {
        XCTAssertEqual(try startOrder(.lifo), [2, 1, 0])
    }

    func testAnUndecodableBodyFails() throws {
        let done = expectation(description: "failure")
        let (_, answer) = download(request(try serve(Data("not an image at all".utf8))), done: done)
        wait(for: [done], timeout: 20)
        XCTAssertEqual(answer.value.error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(answer.value.error?.code, NSURLErrorCannotDecodeContentData)
        XCTAssertEqual(answer.value.response?.statusCode, 200)
        XCTAssertNil(downloader.imageCache?.image(for: request("x"), withAdditionalIdentifier: nil))
    }
}
