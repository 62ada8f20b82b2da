@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The in-memory index in front of URLCache: the disk is read once per URL,
/// writes happen behind the requests, and the cache semantics stay intact.
final class CacheIndexTests: OperationTestCase {
    private var previous: URLCache!
    private var cache: CountingCache!

    override func setUpWithError() throws {
        try super.setUpWithError()
        previous = URLCache.shared
        cache = CountingCache(memoryCapacity: 4 << 20, diskCapacity: 16 << 20,
                              diskPath: FileManager.default.temporaryDirectory.appendingPathComponent("afn-index-\(UUID().uuidString)").path)
        URLCache.shared = cache
    }

    override func tearDown() {
        URLCache.shared = previous
        super.tearDown()
    }

    func testANoStoreResponseIsLookedUpOnceAndNeverStored() {
        server.respond("/api", headers: [("Cache-Control", "no-store")], body: Data("{}".utf8))
        for _ in 0..<50 { XCTAssertNil(run(HTTPRequestOperation(request: request("/api"))).error) }
        XCTAssertEqual(server.requests.count, 50)
        XCTAssertEqual(cache.lookups.value, 1, "the disk is asked once per URL, not once per request")
        XCTAssertEqual(cache.stores.value, 0)
    }

    func testAFreshEntryIsServedFromMemory() {
        server.respond("/asset", headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"a\"")], body: Data("asset".utf8))
        for _ in 0..<30 {
            let operation = HTTPRequestOperation(request: request("/asset"))
            XCTAssertNil(run(operation).error)
            XCTAssertEqual(operation.responseData, Data("asset".utf8))
            XCTAssertEqual(operation.response?.statusCode, 200)
        }
        XCTAssertEqual(server.requests.count, 1, "29 answers came from the cache")
        XCTAssertEqual(cache.lookups.value, 1)
        XCTAssertTrue(spin { self.cache.stores.value == 1 }, "the entry is written to URLCache behind the request")
    }

    func testAStaleEntryLeftByAnEarlierRunIsRevalidatedOnceThenDroppedWhenTheAnswerIsNoStore() throws {
        server.respond("/api", headers: [("Cache-Control", "no-store")], body: Data("fresh".utf8))
        // What an earlier run of the program left on disk.
        let url = self.url("/api")
        let old = "Mon, 02 Jan 2023 10:00:00 GMT"
        let response = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Date": old, "ETag": "\"old\"", "Cache-Control": "max-age=60"]))
        cache.storeCachedResponse(CachedURLResponse(response: response, data: Data("stale".utf8)), for: URLRequest(url: url))
        cache.resetCounts()

        let first = HTTPRequestOperation(request: request("/api"))
        XCTAssertNil(run(first).error)
        XCTAssertEqual(first.responseData, Data("fresh".utf8))
        XCTAssertEqual(server.requests.first?.headers.first(name: "if-none-match"), "\"old\"", "the stale entry was revalidated")
        XCTAssertTrue(spin { self.cache.removals.value == 1 }, "the obsolete entry is removed from URLCache")
        for _ in 0..<20 { XCTAssertNil(run(HTTPRequestOperation(request: request("/api"))).error) }
        XCTAssertEqual(server.requests.count, 21)
        XCTAssertTrue(server.requests.dropFirst().allSatisfy { $0.headers.first(name: "if-none-match") == nil },
                      "later requests no longer revalidate the removed entry")
        XCTAssertEqual(cache.lookups.value, 1)
    }

    private func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    /// RFC 9111 §4.2.3 across runs: an entry an earlier run stored is aged
    /// from when it was received (kept with it), not from when it is read back.
    func testAnEntryFromAnEarlierRunIsAgedFromWhenItWasReceived() throws {
        server.respond("/aged", headers: [("Cache-Control", "max-age=60")], body: Data("fresh".utf8))
        let url = self.url("/aged")
        let now = Date()
        // Received 100 s ago with Age 0 and a Date of then: 40 s past its lifetime.
        let response = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Date": httpDate(now.addingTimeInterval(-100)),
                                                                    "Cache-Control": "max-age=3600", "Age": "3550", "ETag": "\"old\""]))
        let stored = CacheRules.stamped(CachedURLResponse(response: response, data: Data("stale".utf8)), receivedAt: now.addingTimeInterval(-100))
        cache.storeCachedResponse(stored, for: URLRequest(url: url))
        let operation = HTTPRequestOperation(request: request("/aged"))
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseData, Data("fresh".utf8), "Age 3550 plus 100 s resident is past max-age=3600")
        XCTAssertEqual(server.requests.first?.headers.first(name: "if-none-match"), "\"old\"")
    }

    /// Without a kept receive time (another program stored it), the `Date`
    /// stands for it: `Age` plus the time since `Date`, not the larger of the two.
    func testAnEntryWithoutAReceiveTimeIsAgedFromItsDate() throws {
        server.respond("/dated-entry", headers: [("Cache-Control", "max-age=60")], body: Data("fresh".utf8))
        let url = self.url("/dated-entry")
        let response = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Date": httpDate(Date().addingTimeInterval(-1000)),
                                                                    "Cache-Control": "max-age=3600", "Age": "3000"]))
        cache.storeCachedResponse(CachedURLResponse(response: response, data: Data("stale".utf8)), for: URLRequest(url: url))
        let operation = HTTPRequestOperation(request: request("/dated-entry"))
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.responseData, Data("fresh".utf8), "3000 + 1000 s is past max-age=3600 (max(1000, 3000) was not)")
        XCTAssertEqual(server.requests.count, 1)
    }

    func testA304ExtendsTheEntryWithItsOwnLifetime() {
        let served = Locked(0)
        server.route("/v") { request in
            served.increment()
            if request.headers.first(name: "if-none-match") == "\"v1\"" {
                return [.head(status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=3600")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"v1\""), ("Cache-Control", "max-age=0"), ("Content-Length", "4")]),
                    .body(Data("body".utf8)), .end]
        }
        for _ in 0..<5 {
            let operation = HTTPRequestOperation(request: request("/v"))
            XCTAssertNil(run(operation).error)
            XCTAssertEqual(operation.responseData, Data("body".utf8))
        }
        XCTAssertEqual(served.value, 2, "a 200 (stale at once), then a 304 that made the entry fresh for an hour")
    }

    func testAnUnsafeMethodInvalidatesTheEntryOfItsURL() {
        server.route("/doc") { request in
            if request.method == "PUT" { return [.head(status: 204, headers: []), .end] }
            return [.head(status: 200, headers: [("Cache-Control", "max-age=3600"), ("Content-Length", "3")]), .body(Data("doc".utf8)), .end]
        }
        XCTAssertNil(run(HTTPRequestOperation(request: request("/doc"))).error)
        XCTAssertNil(run(HTTPRequestOperation(request: request("/doc"))).error)
        XCTAssertEqual(server.requests.count, 1)
        XCTAssertNil(run(HTTPRequestOperation(request: request("/doc", method: "PUT"))).error)
        XCTAssertNil(run(HTTPRequestOperation(request: request("/doc"))).error)
        XCTAssertEqual(server.requests.map(\.method), ["GET", "PUT", "GET"], "the PUT made the cached GET obsolete")
    }

    /// RFC 9111 §4.4: the unsafe request's own URL, when a redirect took it
    /// elsewhere (a DELETE answered 303 to the list); also when the answer it
    /// was redirected to is an error: the 303 was not.
    func testARedirectedUnsafeMethodInvalidatesTheEntryOfItsOwnURL() {
        for (path, listStatus) in [("/item1", 200), ("/item2", 404)] {
            server.route(path) { request in
                if request.method == "DELETE" { return [.head(status: 303, headers: [("Location", "/list"), ("Content-Length", "0")]), .end] }
                return [.head(status: 200, headers: [("Cache-Control", "max-age=3600"), ("Content-Length", "4")]), .body(Data("item".utf8)), .end]
            }
            server.route("/list") { _ in [.head(status: listStatus, headers: [("Content-Length", "0")]), .end] }
            XCTAssertNil(run(HTTPRequestOperation(request: request(path))).error)
            XCTAssertNil(run(HTTPRequestOperation(request: request(path))).error)
            let delete = HTTPRequestOperation(request: request(path, method: "DELETE"))
            delete.responseSerializer.acceptableStatusCodes = nil
            XCTAssertNil(run(delete).error)
            XCTAssertNil(run(HTTPRequestOperation(request: request(path))).error)
            XCTAssertEqual(server.requests.filter { $0.uri == path }.map(\.method), ["GET", "DELETE", "GET"],
                           "the DELETE made the cached GET of \(path) obsolete (its list answered \(listStatus))")
        }
    }

    /// RFC 9111 §4.4: an unsafe method's answer also makes its same-origin
    /// `Location` and `Content-Location` obsolete; another origin's entry is
    /// never dropped at this server's word.
    func testAnUnsafeMethodAlsoInvalidatesItsSameOriginLocations() throws {
        for path in ["/items/7", "/items/8"] {
            server.route(path) { _ in
                [.head(status: 200, headers: [("Cache-Control", "max-age=3600"), ("Content-Length", "4")]), .body(Data("item".utf8)), .end]
            }
        }
        let elsewhere = try XCTUnwrap(URL(string: "http://elsewhere.invalid/items/9"))
        let absolute = url("/items/8").absoluteString
        server.route("/items") { _ in
            [.head(status: 201, headers: [("Location", "/items/7"), ("Content-Location", absolute),
                                          ("Content-Length", "0")]), .end]
        }
        server.route("/moved") { _ in
            [.head(status: 201, headers: [("Location", elsewhere.absoluteString), ("Content-Length", "0")]), .end]
        }
        let stored = try XCTUnwrap(HTTPURLResponse(url: elsewhere, statusCode: 200, httpVersion: "HTTP/1.1",
                                                   headerFields: ["Cache-Control": "max-age=3600"]))
        cache.storeCachedResponse(CachedURLResponse(response: stored, data: Data("other".utf8)), for: URLRequest(url: elsewhere))
        for path in ["/items/7", "/items/8", "/items/7", "/items/8"] {
            XCTAssertNil(run(HTTPRequestOperation(request: request(path))).error)
        }
        XCTAssertEqual(server.requests.count, 2, "both cached")
        XCTAssertNil(run(HTTPRequestOperation(request: request("/items", method: "POST"))).error)
        for path in ["/items/7", "/items/8"] {
            XCTAssertNil(run(HTTPRequestOperation(request: request(path))).error)
        }
        XCTAssertEqual(server.requests.map(\.uri), ["/items/7", "/items/8", "/items", "/items/7", "/items/8"],
                       "the POST made both named entries obsolete")
        XCTAssertNil(run(HTTPRequestOperation(request: request("/moved", method: "POST"))).error)
        // A removal would go through the write-behind queue: let it run first.
        CacheIndex.finishWrites(to: cache)
        XCTAssertNotNil(cache.cachedResponse(for: URLRequest(url: elsewhere)), "another origin's entry stays")
    }

    func testACacheWithoutCapacityStoresNothing() {
        URLCache.shared = CountingCache(memoryCapacity: 0, diskCapacity: 0, diskPath: nil)
        server.respond("/asset", headers: [("Cache-Control", "max-age=3600")], body: Data("a".utf8))
        for _ in 0..<3 { XCTAssertNil(run(HTTPRequestOperation(request: request("/asset"))).error) }
        XCTAssertEqual(server.requests.count, 3)
    }

    func testReplacingTheSharedCacheIsHonoured() {
        server.respond("/asset", headers: [("Cache-Control", "max-age=3600")], body: Data("a".utf8))
        XCTAssertNil(run(HTTPRequestOperation(request: request("/asset"))).error)
        XCTAssertNil(run(HTTPRequestOperation(request: request("/asset"))).error)
        XCTAssertEqual(server.requests.count, 1)
        URLCache.shared = CountingCache(memoryCapacity: 1 << 20, diskCapacity: 0, diskPath: nil)
        XCTAssertNil(run(HTTPRequestOperation(request: request("/asset"))).error)
        XCTAssertEqual(server.requests.count, 2, "the new, empty cache has no entry")
    }

    func testEntriesForOtherQueryStringsAreNotServed() {
        server.route("/q") { request in
            [.head(status: 200, headers: [("Cache-Control", "max-age=3600"), ("Content-Length", "\(request.uri.utf8.count)")]),
             .body(Data(request.uri.utf8)), .end]
        }
        for query in ["a=1", "a=2", "a=1"] {
            var components = URLComponents(url: url("/q"), resolvingAgainstBaseURL: false)!
            components.query = query
            let operation = HTTPRequestOperation(request: URLRequest(url: components.url!))
            XCTAssertNil(run(operation).error)
            XCTAssertEqual(operation.responseData, Data("/q?\(query)".utf8))
        }
    }

    func testHitsOfOneEntryShareAResponseWhileItsAgeInSecondsIsTheSame() throws {
        let url = URL(string: "http://127.0.0.1/hot")!
        let stored = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [
            "Cache-Control": "max-age=3600, no-cache=\"Set-Cookie\"", "Set-Cookie": "a=1", "Age": "3", "ETag": "\"v\""]))
        let entry = CacheIndex.Entry(cached: CachedURLResponse(response: stored, data: Data("hot".utf8)),
                                     freshness: CacheFreshness(stored, receivedAt: Date()), policyTag: "")
        let first = entry.hit(age: 5.2), second = entry.hit(age: 5.9)
        XCTAssertTrue(first === second, "one response serves every hit of the same second")
        let later = entry.hit(age: 6.0)
        XCTAssertFalse(later === first)
        for (hit, age) in [(first, "5"), (later, "6")] {
            let response = try XCTUnwrap(hit.response as? HTTPURLResponse)
            XCTAssertEqual(response.value(forHTTPHeaderField: "Age"), age)
            XCTAssertNil(response.value(forHTTPHeaderField: "Set-Cookie"), "a qualified no-cache field stays out of every hit")
            XCTAssertEqual(response.value(forHTTPHeaderField: "ETag"), "\"v\"")
            XCTAssertEqual(hit.data, Data("hot".utf8))
        }
        XCTAssertTrue(entry.hit(age: 5.5) !== first, "only the last age made is kept")
    }

    func testAnAgeBeyondWhatAnIntHoldsIsServedAs2147483648() {
        // A fresh entry whose age overflows Int once converted: RFC 9111 §1.2.2 caps what Age says.
        XCTAssertEqual(CacheRules.ageSeconds(1e20), 2_147_483_648)
        XCTAssertEqual(CacheRules.ageSeconds(.infinity), 2_147_483_648)
        XCTAssertEqual(CacheRules.ageSeconds(-4), 0)
        XCTAssertEqual(CacheRules.ageSeconds(41.9), 41)
        server.respond("/ancient", headers: [("Cache-Control", "max-age=999999999999999999999999999"),
                                             ("Age", "99999999999999999999")], body: Data("old".utf8))
        for _ in 0..<2 {
            let operation = HTTPRequestOperation(request: request("/ancient"))
            XCTAssertNil(run(operation).error)
            XCTAssertEqual(operation.responseData, Data("old".utf8))
        }
        XCTAssertEqual(server.requests.count, 1, "the second answer came from the cache")
        let operation = HTTPRequestOperation(request: request("/ancient"))
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Age"), "2147483648")
    }
}

/// A URLCache that counts what the library asks of it.
final class CountingCache: URLCache, @unchecked Sendable {
    // @unchecked: the counters are locked; URLCache itself is thread-safe.
    let lookups = Locked(0)
    let stores = Locked(0)
    let removals = Locked(0)

    func resetCounts() {
        lookups.value = 0
        stores.value = 0
        removals.value = 0
    }

    override func cachedResponse(for request: URLRequest) -> CachedURLResponse? {
        lookups.increment()
        return super.cachedResponse(for: request)
    }

    override func storeCachedResponse(_ cachedResponse: CachedURLResponse, for request: URLRequest) {
        stores.increment()
        super.storeCachedResponse(cachedResponse, for: request)
    }

    override func removeCachedResponse(for request: URLRequest) {
        removals.increment()
        super.removeCachedResponse(for: request)
    }
}
