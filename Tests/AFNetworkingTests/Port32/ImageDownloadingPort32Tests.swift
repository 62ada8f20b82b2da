import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// AFNetworking 3.2.1's AFAutoPurgingImageCacheTests that
/// ImageDownloading/AutoPurgingImageCacheTests.swift covers only in part: the
/// request-keyed removals reported a second time, and a replacing add made
/// through the request-keyed method. (3.2.1 compared UIImage identities;
/// `Image` is a value, so two images of different sizes tell them apart.)
final class AutoPurgingImageCachePort32Tests: XCTestCase {
    private let cache = AutoPurgingImageCache(memoryCapacity: 100 * 1024 * 1024, preferredMemoryCapacity: 60 * 1024 * 1024)
    private let request = URLRequest(url: URL(string: "http://test.example/image")!)
    private let logo = Image(data: ImageSamples.png(510, 500))!

    override func tearDown() {
        cache.removeAllImages()
        super.tearDown()
    }

    func testDuplicateImageAddedToCacheIsReturned() throws {
        cache.add(logo, for: request, withAdditionalIdentifier: nil)
        let replacement = try XCTUnwrap(Image(data: ImageSamples.png(64, 32)))
        cache.add(replacement, for: request, withAdditionalIdentifier: nil)
        let cached = cache.image(for: request, withAdditionalIdentifier: nil)
        XCTAssertEqual(cached, replacement)
        XCTAssertNotEqual(cached, logo)
        XCTAssertEqual(cache.memoryUsage, 64 * 32 * 4, "the replaced image's cost is gone")
    }

    func testImageIsRemovedWithURLRequest() {
        cache.add(logo, for: request, withAdditionalIdentifier: nil)
        XCTAssertTrue(cache.removeImage(for: request, withAdditionalIdentifier: nil), "reported as removed")
        XCTAssertFalse(cache.removeImage(for: request, withAdditionalIdentifier: nil), "nothing left the second time")
        XCTAssertNil(cache.image(for: request, withAdditionalIdentifier: nil))
    }

    func testImageIsRemovedWithURLRequestWithAdditionalIdentifier() {
        cache.add(logo, for: request, withAdditionalIdentifier: "filter")
        XCTAssertTrue(cache.removeImage(for: request, withAdditionalIdentifier: "filter"), "reported as removed")
        XCTAssertFalse(cache.removeImage(for: request, withAdditionalIdentifier: "filter"), "nothing left the second time")
        XCTAssertNil(cache.image(for: request, withAdditionalIdentifier: "filter"))
    }
}
