@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// `try await downloader.image(for:)`: the same downloads, and Swift task
/// cancellation as a receipt cancel.
final class ImageDownloaderAsyncTests: ImageDownloaderTestCase {
    /// Polls (bounded) until `condition` holds.
    private func eventually(_ condition: () -> Bool, timeout: TimeInterval = 15) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() && Date() < deadline { try? await Task.sleep(nanoseconds: 5_000_000) }
        return condition()
    }

    func testAwaitsTheImageThenTheCachedOne() async throws {
        let request = request(try servePNG(12, 34))
        let image = try await downloader.image(for: request)
        XCTAssertEqual(image.pixelHeight, 34)
        let cached = try await downloader.image(for: request)
        XCTAssertEqual(cached, image)
        XCTAssertEqual(settledLogLines(tag(of: request)).count, 1)
    }

    func testThrowsWhatTheFailureBlockWouldGet() async throws {
        do {
            _ = try await downloader.image(for: request("missing-\(UUID().uuidString).png"))
            XCTFail("a 404 is no image")
        } catch {
            XCTAssertEqual((error as NSError).code, NSURLErrorBadServerResponse)
        }
    }

    func testCancellingOneAwaitingTaskLeavesTheOtherItsImage() async throws {
        let request = request("slow/" + (try serve(ImageSamples.png(9, 9) + Data(count: 512 << 10))))
        let downloader = self.downloader!
        let kept = Task { try await downloader.image(for: request) }
        let cancelled = Task { try await downloader.image(for: request) }
        let joined = await eventually { callerCount(downloader, request) == 2 }
        XCTAssertTrue(joined)
        cancelled.cancel()
        do {
            _ = try await cancelled.value
            XCTFail("cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        let image = try await kept.value
        XCTAssertEqual(image.pixelWidth, 9)
        XCTAssertEqual(settledLogLines(tag(of: request)).count, 1)
    }

    func testCancellingTheLastAwaitingTaskCancelsTheRequest() async throws {
        let request = request("slow/" + (try serveLargePNG()))
        let downloader = self.downloader!
        let waiting = Task { try await downloader.image(for: request) }
        let joined = await eventually { callerCount(downloader, request) == 1 }
        XCTAssertTrue(joined)
        let task = try XCTUnwrap(downloader.state.withLock { $0.book.downloads[request.url!.absoluteString]?.task })
        waiting.cancel()
        do {
            _ = try await waiting.value
            XCTFail("cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        let ended = await eventually { task.state == .completed }
        XCTAssertTrue(ended)
        XCTAssertEqual((task.error as NSError?)?.code, NSURLErrorCancelled)
    }

    func testAnAlreadyCancelledTaskSendsNothing() async throws {
        let request = request(try servePNG())
        let downloader = self.downloader!
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await downloader.image(for: request)
        }
        do {
            _ = try await task.value
            XCTFail("cancelled")
        } catch {
            XCTAssertTrue(error is CancellationError, "\(error)")
        }
        XCTAssertEqual(callerCount(downloader, request), 0)
        // A later request is logged; the cancelled one never was.
        let sentinel = self.request(try servePNG())
        _ = try await downloader.image(for: sentinel)
        XCTAssertTrue(nginx.logShows(tag(of: sentinel)))
        XCTAssertTrue(settledLogLines(tag(of: request)).isEmpty)
    }
}
