import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

// The thumbnail service of ImageDownloading.md, verbatim, so the article's
// snippet keeps compiling and doing what it says.

/// Makes thumbnails of remote images; `resize` is your image library's
/// scaler (it gets the original and a width, and returns PNG or JPEG bytes).
final class ThumbnailService: Sendable {
    enum Failure: Error { case tooLarge(width: Int, height: Int), notAnImage }

    private let downloader: ImageDownloader
    private let cache: AutoPurgingImageCache
    private let resize: @Sendable (Image, Int) throws -> Data

    init(resize: @escaping @Sendable (Image, Int) throws -> Data) {
        cache = AutoPurgingImageCache(memoryCapacity: 512 << 20, preferredMemoryCapacity: 384 << 20)
        let manager = HTTPSessionManager(sessionConfiguration: ImageDownloader.defaultURLSessionConfiguration())
        manager.responseSerializer = ImageResponseSerializer()
        downloader = ImageDownloader(sessionManager: manager, downloadPrioritization: .lifo,
                                     maximumActiveDownloads: 8, imageCache: cache)
        self.resize = resize
    }

    /// A thumbnail `width` pixels wide of the image at `url`.
    func thumbnail(of url: URL, width: Int) async throws -> Image {
        var request = URLRequest(url: url)
        request.timeoutInterval = 15
        let variant = "w=\(width)"
        if let cached = cache.image(for: request, withAdditionalIdentifier: variant) {
            return cached
        }
        // Joins a download of the same URL already in flight.
        let original = try await downloader.image(for: request)
        // The header gave the size without decoding: refuse decompression bombs.
        guard original.pixelWidth <= 10_000, original.pixelHeight <= 10_000 else {
            throw Failure.tooLarge(width: original.pixelWidth, height: original.pixelHeight)
        }
        guard let thumbnail = Image(data: try resize(original, width)) else { throw Failure.notAnImage }
        cache.add(thumbnail, for: request, withAdditionalIdentifier: variant)
        return thumbnail
    }
}

final class ImageDownloadingArticleTests: ImageDownloaderTestCase {
    func testTheThumbnailServiceFetchesEachOriginalOnce() async throws {
        let calls = Locked(0)
        let service = ThumbnailService { original, width in
            calls.withLock { $0 += 1 }
            return ImageSamples.png(width, original.pixelHeight * width / original.pixelWidth)
        }
        let request = request(try serveSlowPNG(400, 300))
        let url = request.url!
        let first = try await withThrowingTaskGroup(of: Image.self) { group in
            for _ in 0..<10 { group.addTask { try await service.thumbnail(of: url, width: 100) } }
            var sizes: [Image] = []
            for try await image in group { sizes.append(image) }
            return sizes
        }
        XCTAssertEqual(first.count, 10)
        XCTAssertTrue(first.allSatisfy { $0.pixelWidth == 100 && $0.pixelHeight == 75 })
        let again = try await service.thumbnail(of: url, width: 100)
        XCTAssertEqual(again.pixelWidth, 100)
        XCTAssertTrue(nginx.logShows(tag(of: request)))
        XCTAssertEqual(settledLogLines(tag(of: request)).count, 1, "one download for eleven thumbnails")
        XCTAssertLessThanOrEqual(calls.value, 10, "the last one came from the cache")

        let bomb = self.request(try servePNG(20_000, 20_000))
        do {
            _ = try await service.thumbnail(of: bomb.url!, width: 100)
            XCTFail("too large")
        } catch ThumbnailService.Failure.tooLarge(let width, _) {
            XCTAssertEqual(width, 20_000)
        }
    }
}
