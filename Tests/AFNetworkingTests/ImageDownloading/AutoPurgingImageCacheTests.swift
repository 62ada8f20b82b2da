import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The auto-purging cache on its own: identifiers, byte accounting, LRU purge.
/// The first group ports AFNetworking 3.2.1's AFAutoPurgingImageCacheTests as
/// behaviours; the rest pins the exact purge order and byte counts.
final class AutoPurgingImageCacheTests: XCTestCase {
    /// 510 × 500 pixels: 1,020,000 bytes decoded, whatever its few encoded bytes.
    private let logo = Image(data: ImageSamples.png(510, 500))!
    private let logoCost: UInt64 = 1_020_000
    private var cache = AutoPurgingImageCache(memoryCapacity: 100 * 1024 * 1024, preferredMemoryCapacity: 60 * 1024 * 1024)
    private let request = URLRequest(url: URL(string: "http://test.example/image")!)

    private func image(_ width: Int, _ height: Int) -> Image { Image(data: ImageSamples.png(width, height))! }

    // MARK: - 3.2.1 behaviours

    /// A header's dimensions are a server's word: 4294967295 × 4294967295
    /// would overflow the cost (and trap). The cost stops far above any
    /// capacity, so such an image is simply not kept.
    func testAnImageClaimingHugeDimensionsIsNotKeptAndDoesNotTrap() throws {
        let huge = try XCTUnwrap(Image(data: ImageSamples.png(Int(UInt32.max), Int(UInt32.max))))
        let cache = AutoPurgingImageCache()
        cache.add(huge, withIdentifier: "huge")
        XCTAssertNil(cache.image(withIdentifier: "huge"), "over the capacity: purged at once")
        XCTAssertEqual(cache.memoryUsage, 0)
        cache.add(image(10, 10), withIdentifier: "small")
        XCTAssertEqual(cache.memoryUsage, 400)
    }

    /// "Unlimited" (a capacity of UInt64.max) never purges: 65,536 images
    /// each said to cost the most one may (2^48) would pass UInt64.max; the
    /// usage stops there instead of trapping.
    func testTheUsageOfAnUnlimitedCacheSaturatesInsteadOfTrapping() throws {
        let huge = try XCTUnwrap(Image(data: ImageSamples.png(Int(UInt32.max), Int(UInt32.max))))
        let cache = AutoPurgingImageCache(memoryCapacity: .max, preferredMemoryCapacity: .max)
        for index in 0..<65_537 { cache.add(huge, withIdentifier: "huge\(index)") }
        XCTAssertEqual(cache.memoryUsage, .max)
        XCTAssertTrue(cache.removeImage(withIdentifier: "huge0"))
        XCTAssertTrue(cache.removeAllImages())
        XCTAssertEqual(cache.memoryUsage, 0)
    }

    func testImageIsReturnedForItsIdentifier() {
        cache.add(logo, withIdentifier: "logo")
        XCTAssertEqual(cache.image(withIdentifier: "logo"), logo)
    }

    func testImageIsReturnedForItsRequest() {
        cache.add(logo, for: request, withAdditionalIdentifier: nil)
        XCTAssertEqual(cache.image(for: request, withAdditionalIdentifier: nil), logo)
    }

    func testImageIsReturnedForItsRequestAndAdditionalIdentifier() {
        cache.add(logo, for: request, withAdditionalIdentifier: "filter")
        XCTAssertEqual(cache.image(for: request, withAdditionalIdentifier: "filter"), logo)
        // The identifier is the URL followed directly by the additional one.
        XCTAssertEqual(cache.image(withIdentifier: "http://test.example/imagefilter"), logo)
    }

    func testImageAddedWithAdditionalIdentifierIsMissedWithout() {
        cache.add(logo, for: request, withAdditionalIdentifier: "filter")
        XCTAssertNil(cache.image(for: request, withAdditionalIdentifier: nil))
    }

    func testImageIsMissedForAnotherURL() {
        cache.add(logo, for: request, withAdditionalIdentifier: nil)
        XCTAssertNil(cache.image(for: URLRequest(url: URL(string: "http://test.example/other")!), withAdditionalIdentifier: nil))
    }

    func testAddingUnderAHeldIdentifierReplacesTheImageAndItsCost() {
        let small = image(10, 10)
        cache.add(logo, withIdentifier: "logo")
        cache.add(small, withIdentifier: "logo")
        XCTAssertEqual(cache.image(withIdentifier: "logo"), small)
        XCTAssertEqual(cache.memoryUsage, 400)
    }

    func testImageIsRemovedByIdentifier() {
        cache.add(logo, withIdentifier: "logo")
        XCTAssertTrue(cache.removeImage(withIdentifier: "logo"))
        XCTAssertNil(cache.image(withIdentifier: "logo"))
        XCTAssertFalse(cache.removeImage(withIdentifier: "logo"), "nothing left to remove")
    }

    func testImageIsRemovedByRequest() {
        cache.add(logo, for: request, withAdditionalIdentifier: nil)
        XCTAssertTrue(cache.removeImage(for: request, withAdditionalIdentifier: nil))
        XCTAssertNil(cache.image(for: request, withAdditionalIdentifier: nil))
    }

    func testImageIsRemovedByRequestAndAdditionalIdentifier() {
        cache.add(logo, for: request, withAdditionalIdentifier: "filter")
        XCTAssertTrue(cache.removeImage(for: request, withAdditionalIdentifier: "filter"))
        XCTAssertNil(cache.image(for: request, withAdditionalIdentifier: "filter"))
    }

    func testImageIsNotRemovedByRequestWithoutItsAdditionalIdentifier() {
        cache.add(logo, for: request, withAdditionalIdentifier: "filter")
        XCTAssertFalse(cache.removeImage(for: request, withAdditionalIdentifier: nil))
        XCTAssertNotNil(cache.image(for: request, withAdditionalIdentifier: "filter"))
    }

    func testImageIsNotRemovedByRequestWithAnotherAdditionalIdentifier() {
        cache.add(logo, for: request, withAdditionalIdentifier: "filter")
        XCTAssertFalse(cache.removeImage(for: request, withAdditionalIdentifier: "nofilter"))
        XCTAssertNotNil(cache.image(for: request, withAdditionalIdentifier: "filter"))
    }

    func testMemoryUsageGrowsByTheDecodedSizeOnAdd() {
        XCTAssertEqual(cache.memoryUsage, 0)
        cache.add(logo, withIdentifier: "logo")
        XCTAssertEqual(cache.memoryUsage, logoCost)
    }

    func testMemoryUsageShrinksOnRemove() {
        cache.add(logo, withIdentifier: "logo")
        cache.add(image(3, 7), withIdentifier: "other")
        XCTAssertTrue(cache.removeImage(withIdentifier: "logo"))
        XCTAssertEqual(cache.memoryUsage, 84)
        XCTAssertTrue(cache.removeAllImages())
        XCTAssertEqual(cache.memoryUsage, 0)
        XCTAssertFalse(cache.removeAllImages(), "an empty cache reports nothing removed")
    }

    func testImagesArePurgedToThePreferredSizeWhenCapacityIsPassed() {
        cache = AutoPurgingImageCache(memoryCapacity: 10 * logoCost, preferredMemoryCapacity: 6 * logoCost)
        for index in 1...10 {
            cache.add(logo, withIdentifier: "image-\(index)")
            XCTAssertEqual(cache.memoryUsage, UInt64(index) * logoCost, "at capacity is not over it")
        }
        cache.add(logo, withIdentifier: "image-11")
        XCTAssertEqual(cache.memoryUsage, 6 * logoCost)
    }

    func testPurgeRemovesTheLeastRecentlyAccessedImagesFirst() {
        cache = AutoPurgingImageCache(memoryCapacity: 10 * logoCost, preferredMemoryCapacity: 6 * logoCost)
        for index in 0..<10 { cache.add(logo, withIdentifier: "image-\(index)") }
        XCTAssertNotNil(cache.image(withIdentifier: "image-0"), "a hit makes image-0 the most recent")
        cache.add(logo, withIdentifier: "image-10")
        for index in 0...10 {
            let held = cache.image(withIdentifier: "image-\(index)") != nil
            XCTAssertEqual(held, index == 0 || index >= 6, "image-\(index)")
        }
    }

    func testShouldCacheIsAlwaysTrue() {
        XCTAssertTrue(cache.shouldCache(logo, for: request, withAdditionalIdentifier: "filter"))
        XCTAssertTrue(cache.shouldCache(logo, for: request, withAdditionalIdentifier: nil))
    }

    // MARK: - Exact accounting and order

    func testCostIsFourBytesPerPixelWhateverTheFormat() {
        cache.add(Image(data: ImageSamples.jpeg(1024, 768))!, withIdentifier: "jpeg")
        cache.add(Image(data: ImageSamples.gif(32, 16))!, withIdentifier: "gif")
        XCTAssertEqual(cache.memoryUsage, 1024 * 768 * 4 + 32 * 16 * 4)
    }

    /// Five 100-byte images (5 × 5 pixels) in a 450-byte cache that purges to 200:
    /// the sixth add goes over (600 > 450) and must remove the four least
    /// recently accessed (400 bytes), hits and misses taken into account.
    func testPurgeOrderAndBytesAreExact() {
        cache = AutoPurgingImageCache(memoryCapacity: 450, preferredMemoryCapacity: 200)
        let tile = image(5, 5)
        for name in ["a", "b", "c", "d"] { cache.add(tile, withIdentifier: name) }
        XCTAssertEqual(cache.memoryUsage, 400)
        XCTAssertNotNil(cache.image(withIdentifier: "a"))             // order now b c d a
        XCTAssertNil(cache.image(withIdentifier: "missing"))          // a miss is no access
        _ = cache.shouldCache(tile, for: request, withAdditionalIdentifier: nil)
        _ = cache.memoryUsage
        cache.add(tile, withIdentifier: "c")                          // a replacing add is an access: b d a c
        XCTAssertEqual(cache.memoryUsage, 400)
        cache.add(tile, withIdentifier: "e")                          // 500 > 450: remove 300 bytes: b d a
        XCTAssertEqual(cache.memoryUsage, 200)
        XCTAssertEqual(["a", "b", "c", "d", "e"].filter { cache.image(withIdentifier: $0) != nil }, ["c", "e"])
    }

    func testPurgeRemovesWhateverIsNeededToReachTheTargetEvenTheNewImage() {
        cache = AutoPurgingImageCache(memoryCapacity: 1000, preferredMemoryCapacity: 500)
        cache.add(image(10, 10), withIdentifier: "small")             // 400
        cache.add(image(20, 20), withIdentifier: "huge")              // 1600: 2000 > 1000, remove ≥ 1500
        XCTAssertEqual(cache.memoryUsage, 0, "the image alone is over capacity and goes last")
        XCTAssertNil(cache.image(withIdentifier: "huge"))
    }

    func testChangingTheCapacityPurgesNothingUntilTheNextAdd() {
        cache = AutoPurgingImageCache(memoryCapacity: 1000, preferredMemoryCapacity: 500)
        cache.add(image(10, 10), withIdentifier: "one")               // 400
        cache.add(image(10, 10), withIdentifier: "two")               // 800
        cache.memoryCapacity = 100
        cache.preferredMemoryUsageAfterPurge = 0
        XCTAssertEqual(cache.memoryUsage, 800)
        cache.add(image(1, 1), withIdentifier: "three")              // 804 > 100: down to 0
        XCTAssertEqual(cache.memoryUsage, 0)
    }

    func testAPreferredSizeAboveCapacityPurgesDownToCapacity() {
        cache = AutoPurgingImageCache(memoryCapacity: 400, preferredMemoryCapacity: 10_000)
        cache.add(image(10, 10), withIdentifier: "one")               // 400, at capacity
        cache.add(image(5, 5), withIdentifier: "two")                 // 500 > 400: remove ≥ 100
        XCTAssertEqual(cache.memoryUsage, 100)
        XCTAssertNil(cache.image(withIdentifier: "one"))
    }

    /// A subclass's override of `add(_:withIdentifier:)` sees the request-keyed adds.
    func testRequestMethodsGoThroughTheIdentifierMethods() {
        final class Recording: AutoPurgingImageCache, @unchecked Sendable {
            // @unchecked: the list is only touched on the test's thread.
            var added: [String] = []
            override func add(_ image: Image, withIdentifier identifier: String) {
                added.append(identifier)
                super.add(image, withIdentifier: identifier)
            }
        }
        let recording = Recording()
        recording.add(logo, for: request, withAdditionalIdentifier: "x")
        XCTAssertEqual(recording.added, ["http://test.example/imagex"])
    }

    /// Many threads adding, reading and removing at once: the count stays exact.
    func testConcurrentCallersKeepTheAccountingExact() {
        cache = AutoPurgingImageCache(memoryCapacity: .max, preferredMemoryCapacity: .max)
        let tile = image(5, 5)
        let cache = self.cache
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for index in 0..<200 {
                cache.add(tile, withIdentifier: "\(worker)-\(index)")
                _ = cache.image(withIdentifier: "\(worker)-\(index / 2)")
                if index % 2 == 1 { cache.removeImage(withIdentifier: "\(worker)-\(index)") }
            }
        }
        XCTAssertEqual(cache.memoryUsage, 8 * 100 * 100)
    }
}
