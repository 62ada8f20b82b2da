import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// AFNetworking 3.2.1's AFImageDownloaderTests, as behaviours, against nginx.
final class ImageDownloaderPortedTests: ImageDownloaderTestCase {
    func testDefaultInstanceIsOneDownloader() {
        XCTAssertTrue(ImageDownloader.defaultInstance() === ImageDownloader.defaultInstance())
        XCTAssertTrue(ImageDownloader.defaultInstance().imageCache is AutoPurgingImageCache)
        XCTAssertEqual(ImageDownloader.defaultInstance().downloadPrioritization, .fifo)
    }

    func testDefaultConfigurationIs3xs() {
        let configuration = ImageDownloader.defaultURLSessionConfiguration()
        XCTAssertTrue(configuration.httpShouldSetCookies)
        XCTAssertEqual(configuration.requestCachePolicy, .useProtocolCachePolicy)
        XCTAssertTrue(configuration.allowsCellularAccess)
        XCTAssertEqual(configuration.timeoutIntervalForRequest, 60)
        let cache = ImageDownloader.defaultURLCache()
        XCTAssertEqual(cache.memoryCapacity, 20 * 1024 * 1024)
        XCTAssertEqual(cache.diskCapacity, 150 * 1024 * 1024)
        XCTAssertFalse(cache === ImageDownloader.defaultURLCache(), "a new cache each call")
        XCTAssertTrue(downloader.sessionManager.responseSerializer is ImageResponseSerializer)
    }

    func testReleasingTheDownloaderWithDownloadsInFlightIsSafe() throws {
        let request = request(try servePNG())
        var local: ImageDownloader? = ImageDownloader(sessionConfiguration: configuration())
        weak let released = local
        local?.downloadImage(for: request, success: nil, failure: nil)
        local = nil
        XCTAssertTrue(spin { released == nil }, "nothing keeps the downloader alive")
        XCTAssertTrue(nginx.logShows(tag(of: request), timeout: 10), "the request itself still ran")
    }

    func testRequestWithoutURLFailsWithBadURLAndNoReceipt() {
        var request = URLRequest(url: nginx.httpURL)
        request.url = nil
        let done = expectation(description: "failure")
        let (receipt, answer) = download(request, done: done)
        XCTAssertNil(receipt)
        XCTAssertEqual(answer.value.calls, 0, "never inside the call")
        wait(for: [done], timeout: 5)
        XCTAssertEqual(answer.value.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(answer.value.error?.code, NSURLErrorBadURL)
    }

    func testDownloadsAnImage() throws {
        let done = expectation(description: "success")
        let (receipt, answer) = download(request(try servePNG(40, 30)), done: done)
        XCTAssertNotNil(receipt)
        wait(for: [done], timeout: 20)
        XCTAssertEqual(answer.value.response?.statusCode, 200)
        XCTAssertEqual(answer.value.image?.pixelWidth, 40)
        XCTAssertEqual(answer.value.image?.pixelHeight, 30)
    }

    func testDownloadsTwoImagesAtOnce() throws {
        let pngDone = expectation(description: "png")
        let jpegDone = expectation(description: "jpeg")
        let (_, png) = download(request(try servePNG()), done: pngDone)
        let (_, jpeg) = download(request(try serve(ImageSamples.jpeg(64, 48), ext: "jpg")), done: jpegDone)
        wait(for: [pngDone, jpegDone], timeout: 20)
        XCTAssertEqual(png.value.image?.format, .png)
        XCTAssertEqual(jpeg.value.image?.format, .jpeg)
        XCTAssertNotNil(png.value.response)
        XCTAssertNotNil(jpeg.value.response)
    }

    func testSimultaneousRequestsForOneURLShareOneResponse() throws {
        let request = request(try serveSlowPNG())
        let first = expectation(description: "first")
        let second = expectation(description: "second")
        let (_, one) = download(request, done: first)
        let (_, two) = download(request, done: second)
        wait(for: [first, second], timeout: 20)
        XCTAssertNotNil(one.value.response)
        XCTAssertTrue(one.value.response === two.value.response, "the same response object")
        XCTAssertEqual(one.value.image, two.value.image)
    }

    func testImageBehindARedirect() throws {
        let done = expectation(description: "success")
        let (_, answer) = download(request("redirect/" + (try servePNG(7, 9))), done: done)
        wait(for: [done], timeout: 20)
        XCTAssertEqual(answer.value.image?.pixelWidth, 7)
        XCTAssertNotNil(answer.value.response)
    }

    func testAnImageCacheHitHasNoResponse() throws {
        let request = request(try servePNG())
        let first = expectation(description: "download")
        let (_, one) = download(request, done: first)
        wait(for: [first], timeout: 20)
        let second = expectation(description: "cache hit")
        let (_, two) = download(request, done: second)
        wait(for: [second], timeout: 5)
        XCTAssertNotNil(one.value.response)
        XCTAssertNil(two.value.response)
        XCTAssertEqual(one.value.image, two.value.image)
        XCTAssertEqual(settledLogLines(tag(of: request)).count, 1)
    }

    func testTheImageCacheIsAskedWhetherToCacheAndThenFilled() throws {
        let cache = ScriptedImageCache(shouldCache: true)
        downloader.imageCache = cache
        let request = request(try servePNG())
        let first = expectation(description: "download")
        let (_, one) = download(request, done: first)
        wait(for: [first], timeout: 20)
        XCTAssertEqual(cache.asked.value, 1)
        XCTAssertEqual(cache.added.value, [request.url!.absoluteString], "added before the blocks ran")
        let second = expectation(description: "cache hit")
        let (_, two) = download(request, done: second)
        wait(for: [second], timeout: 5)
        XCTAssertNotNil(one.value.response)
        XCTAssertNil(two.value.response)
    }

    func testAnImageCacheRefusingMeansTheNextCallDownloadsAgain() throws {
        let cache = ScriptedImageCache(shouldCache: false)
        downloader.imageCache = cache
        let path = try servePNG()
        let first = expectation(description: "first")
        let (_, one) = download(request(path), done: first)
        wait(for: [first], timeout: 20)
        let second = expectation(description: "second")
        let (_, two) = download(request(path), done: second)
        wait(for: [second], timeout: 20)
        XCTAssertEqual(cache.asked.value, 2)
        XCTAssertEqual(cache.added.value, [])
        XCTAssertNotNil(one.value.response)
        XCTAssertNotNil(two.value.response)
    }

    func testAnImageCacheHitReturnsNoReceipt() throws {
        let request = request(try servePNG())
        let first = expectation(description: "download")
        let (receipt1, _) = download(request, done: first)
        wait(for: [first], timeout: 20)
        let second = expectation(description: "cache hit")
        let (receipt2, answer) = download(request, done: second)
        XCTAssertEqual(answer.value.calls, 0, "a cache hit still answers asynchronously")
        wait(for: [second], timeout: 5)
        XCTAssertNotNil(receipt1)
        XCTAssertNil(receipt2)
    }

    func testAReloadingCachePolicySkipsTheImageCache() throws {
        var request = request(try servePNG())
        let first = expectation(description: "download")
        let (receipt1, one) = download(request, done: first)
        wait(for: [first], timeout: 20)
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let second = expectation(description: "download again")
        let (receipt2, two) = download(request, done: second)
        wait(for: [second], timeout: 20)
        XCTAssertNotNil(receipt1)
        XCTAssertNotNil(receipt2)
        XCTAssertFalse(receipt1 === receipt2)
        XCTAssertNotNil(one.value.response)
        XCTAssertNotNil(two.value.response)
        XCTAssertEqual(settledLogLines(tag(of: request)).count, 2)
    }

    func testCancellingAReceiptFailsItWithCancelled() throws {
        let request = request("slow/" + (try serveLargePNG()))
        let done = expectation(description: "failure")
        let (receipt, answer) = download(request, done: done)
        downloader.cancelTask(for: try XCTUnwrap(receipt))
        wait(for: [done], timeout: 10)
        XCTAssertEqual(answer.value.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(answer.value.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(answer.value.error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String,
                       "ImageDownloader cancelled URL request: \(request.url!.absoluteString)")
        XCTAssertNil(answer.value.response)
        XCTAssertEqual(answer.value.request?.url, request.url)
        XCTAssertNil(answer.value.image)
    }

    func testCancellingOneOfTwoReceiptsLetsTheOtherFinish() throws {
        let request = request(try serveSlowPNG())
        let first = expectation(description: "success")
        let second = expectation(description: "cancelled")
        let (_, one) = download(request, done: first)
        let (receipt, two) = download(request, done: second)
        downloader.cancelTask(for: try XCTUnwrap(receipt))
        wait(for: [first, second], timeout: 20)
        XCTAssertNotNil(one.value.image)
        XCTAssertNotNil(one.value.response)
        XCTAssertEqual(two.value.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(two.value.calls, 1)
    }

    func testDownloadCancelThenDownloadAgain() throws {
        let requests = try (0..<5).map { _ in request(try serveSlowPNG()) }
        let cancelled = requests.map { expectation(description: "cancelled \($0.url!)") }
        for (request, done) in zip(requests, cancelled) {
            let (receipt, answer) = download(request, done: done)
            downloader.cancelTask(for: try XCTUnwrap(receipt))
            addTeardownBlock { XCTAssertEqual(answer.value.error?.code, NSURLErrorCancelled) }
        }
        wait(for: cancelled, timeout: 10)
        let succeeded = requests.map { expectation(description: "downloaded \($0.url!)") }
        let answers = zip(requests, succeeded).map { download($0, done: $1).1 }
        wait(for: succeeded, timeout: 30)
        XCTAssertEqual(answers.filter { $0.value.image != nil }.count, 5)
    }

    func testSuccessBlocksRunOnTheMainQueue() throws {
        let done = expectation(description: "success")
        let (_, answer) = download(request(try servePNG()), done: done)
        wait(for: [done], timeout: 20)
        XCTAssertNotNil(answer.value.image)
        XCTAssertTrue(answer.value.onMainThread)
    }

    func testFailureBlocksRunOnTheMainQueue() {
        let done = expectation(description: "failure")
        let (_, answer) = download(request("missing-\(UUID().uuidString).png"), done: done)
        wait(for: [done], timeout: 20)
        XCTAssertEqual(answer.value.response?.statusCode, 404)
        XCTAssertEqual(answer.value.error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(answer.value.onMainThread)
    }

    func testTheReceiptCarriesTheGivenID() throws {
        let id = UUID()
        let (receipt, _) = download(request("slow/" + (try servePNG())), receiptID: id)
        XCTAssertEqual(receipt?.receiptID, id)
        downloader.cancelTask(for: try XCTUnwrap(receipt))
    }
}

/// An auto-purging cache that records what the downloader asks and adds
/// (3.2.1's mock, as a subclass overriding the open methods).
final class ScriptedImageCache: AutoPurgingImageCache, @unchecked Sendable {
    // @unchecked: the answer is immutable and the records are Locked boxes.
    private let answer: Bool
    let asked = Locked(0)
    let added = Locked<[String]>([])

    init(shouldCache: Bool) {
        answer = shouldCache
        super.init(memoryCapacity: 1 << 20, preferredMemoryCapacity: 1 << 19)
    }

    override func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        asked.withLock { $0 += 1 }
        return answer
    }

    override func add(_ image: Image, withIdentifier identifier: String) {
        added.append(identifier)
        super.add(image, withIdentifier: identifier)
    }
}
