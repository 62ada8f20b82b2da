@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// Base of the downloader suites: the shared nginx, image files written into
/// its document root under names of their own, a downloader whose URLCache
/// lives in a fresh directory, and access-log counting by a per-URL tag.
class ImageDownloaderTestCase: XCTestCase {
    var nginx: NginxFixture!
    var downloader: ImageDownloader!
    private var cacheDirectory: URL!

    override func setUpWithError() throws {
        nginx = try SharedServers.nginx()
        cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-image-cache-\(UUID().uuidString)")
        downloader = ImageDownloader(sessionConfiguration: configuration())
    }

    override func tearDown() {
        downloader?.sessionManager.invalidateSessionCancelingTasks(true)
        downloader = nil
        if let cacheDirectory { try? FileManager.default.removeItem(at: cacheDirectory) }
    }

    /// 3.2.1's configuration, with a URLCache of the test's own.
    func configuration() -> URLSessionConfiguration {
        let configuration = ImageDownloader.defaultURLSessionConfiguration()
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 16 << 20, diskPath: cacheDirectory.path)
        return configuration
    }

    /// A downloader with one download slot (the rest queue) and no image cache.
    func singleSlotDownloader(_ order: ImageDownloadPrioritization) -> ImageDownloader {
        let manager = HTTPSessionManager(sessionConfiguration: configuration())
        manager.responseSerializer = ImageResponseSerializer()
        return ImageDownloader(sessionManager: manager, downloadPrioritization: order, maximumActiveDownloads: 1, imageCache: nil)
    }

    /// Writes `data` into nginx's root under a fresh name ending in `ext`; its path.
    func serve(_ data: Data, ext: String = "png") throws -> String {
        let name = "image-\(UUID().uuidString).\(ext)"
        try data.write(to: nginx.directory.appendingPathComponent("www/\(name)"))
        return name
    }

    /// A small PNG served at a new path.
    func servePNG(_ width: Int = 40, _ height: Int = 30) throws -> String { try serve(ImageSamples.png(width, height)) }

    /// A PNG with 256 KiB of trailing bytes under `/slow/`: about half a
    /// second, so callers arriving right after the first find it in flight
    /// however loaded the machine is.
    func serveSlowPNG(_ width: Int = 40, _ height: Int = 30) throws -> String {
        "slow/" + (try serve(ImageSamples.png(width, height) + Data(count: 256 << 10)))
    }

    /// A PNG with 2 MiB of trailing bytes, served at a new path: under `/slow/`
    /// it takes about 4 s, long enough to be cancelled mid-body.
    func serveLargePNG() throws -> String {
        try serve(ImageSamples.png(64, 64) + Data(count: 2 << 20))
    }

    /// A request for `path` tagged with a query no other test uses.
    func request(_ path: String, tag: String = UUID().uuidString) -> URLRequest {
        var request = URLRequest(url: URL(string: "\(nginx.httpURL.absoluteString)/\(path)?t=\(tag)")!)
        request.timeoutInterval = 20
        return request
    }

    /// The access-log lines of requests carrying `tag`.
    func logLines(_ tag: String) -> [Substring] {
        nginx.accessLog.split(separator: "\n").filter { $0.contains(tag) }
    }

    /// The access-log lines of `tag` once nginx has logged every request that
    /// ended before this call: nginx logs a request after answering it, so a
    /// client can finish before its line is written. A sentinel request sent
    /// now is logged after all of those; waiting for its line settles the log.
    func settledLogLines(_ tag: String) -> [Substring] {
        let sentinel = "sentinel-\(UUID().uuidString)"
        let operation = HTTPRequestOperation(request: URLRequest(url: URL(string: "\(nginx.httpURL.absoluteString)/\(sentinel)")!))
        operation.start()
        operation.waitUntilFinished()
        XCTAssertTrue(nginx.logShows(sentinel, timeout: 10), "nginx logged the sentinel")
        return logLines(tag)
    }

    func tag(of request: URLRequest) -> String {
        String(request.url!.query!.dropFirst(2))
    }

    /// The number of callers joined to the download of `request` now.
    func callerCount(_ downloader: ImageDownloader, _ request: URLRequest) -> Int {
        downloader.state.withLock { $0.book.downloads[request.url!.absoluteString]?.callers.count ?? 0 }
    }

    /// Spins the main run loop (bounded) until `condition` holds.
    func spin(until condition: () -> Bool, timeout: TimeInterval = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() && Date() < deadline {
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
        return condition()
    }

    /// What one caller's blocks received.
    struct Answer {
        var image: Image?
        var response: HTTPURLResponse?
        var request: URLRequest?
        var error: NSError?
        var calls = 0
        var onMainThread = true
    }

    /// Starts a download whose blocks record into the returned box and fulfil `done`.
    func download(_ request: URLRequest, with downloader: ImageDownloader? = nil, receiptID: UUID = UUID(),
                  done: XCTestExpectation? = nil) -> (ImageDownloadReceipt?, Locked<Answer>) {
        let answer = Locked(Answer())
        let receipt = (downloader ?? self.downloader).downloadImage(for: request, withReceiptID: receiptID, success: { request, response, image in
            let main = Thread.isMainThread
            answer.withLock { $0.image = image; $0.response = response; $0.request = request; $0.calls += 1; $0.onMainThread = $0.onMainThread && main }
            done?.fulfill()
        }, failure: { request, response, error in
            let main = Thread.isMainThread
            answer.withLock { $0.error = error as NSError; $0.response = response; $0.request = request; $0.calls += 1; $0.onMainThread = $0.onMainThread && main }
            done?.fulfill()
        })
        return (receipt, answer)
    }
}
