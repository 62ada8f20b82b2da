import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// cachePolicy with URLCache.shared: fresh hits, revalidation, no-store, the
/// cache-response block and the policies that skip or demand the cache.
final class CachingTests: OperationTestCase {
    @discardableResult
    private func fetch(_ path: String, policy: URLRequest.CachePolicy = .useProtocolCachePolicy,
                       configure: (HTTPRequestOperation) -> Void = { _ in }) -> (HTTPRequestOperation, Outcome) {
        var request = self.request(path)
        request.cachePolicy = policy
        let operation = HTTPRequestOperation(request: request)
        configure(operation)
        return (operation, run(operation))
    }

    private func count(_ path: String) -> Int { server.requests.filter { $0.uri == path }.count }

    func testAFreshResponseIsServedWithoutARequest() {
        server.respond("/fresh", headers: [("Cache-Control", "max-age=600")], body: Data("cached body".utf8))
        XCTAssertNil(fetch("/fresh").1.error)
        let (second, outcome) = fetch("/fresh")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(second.responseString, "cached body")
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(count("/fresh"), 1)
    }

    func testNoStoreIsNeverStored() {
        server.respond("/secret", headers: [("Cache-Control", "no-store, max-age=600")], body: Data("x".utf8))
        fetch("/secret")
        fetch("/secret")
        XCTAssertEqual(count("/secret"), 2)
    }

    func testAStaleResponseIsRevalidatedWithIfNoneMatchAnd304ServesTheCachedBody() throws {
        server.route("/tagged") { request in
            if request.headers.first(name: "if-none-match") == "\"v7\"" {
                return [.head(status: 304, headers: [("ETag", "\"v7\"")]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"v7\""), ("Cache-Control", "max-age=0"), ("Content-Length", "8")]),
                    .body(Data("original".utf8)), .end]
        }
        fetch("/tagged")
        let (second, outcome) = fetch("/tagged")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(second.responseString, "original")
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-none-match"), "\"v7\"")
        XCTAssertEqual(count("/tagged"), 2)
    }

    /// RFC 9111 §4.3.1: the entity tag and the date both, so a server whose
    /// tag changed with the coding still confirms by the date.
    func testARevalidationCarriesBothValidators() {
        let stamp = "Sun, 06 Nov 1994 08:49:37 GMT"
        server.route("/both") { request in
            if request.headers.first(name: "if-modified-since") == stamp {
                return [.head(status: 304, headers: []), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"v1-gzip\""), ("Last-Modified", stamp), ("Cache-Control", "max-age=0"),
                                                 ("Content-Length", "4")]), .body(Data("both".utf8)), .end]
        }
        fetch("/both")
        let (second, _) = fetch("/both")
        XCTAssertEqual(second.responseString, "both")
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-none-match"), "\"v1-gzip\"")
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-modified-since"), stamp)
        XCTAssertEqual(count("/both"), 2)
    }

    func testLastModifiedRevalidationWithNoCache() {
        let stamp = "Sun, 06 Nov 1994 08:49:37 GMT"
        server.route("/dated") { request in
            if request.headers.first(name: "if-modified-since") == stamp {
                return [.head(status: 304, headers: []), .end]
            }
            return [.head(status: 200, headers: [("Last-Modified", stamp), ("Cache-Control", "no-cache"), ("Content-Length", "5")]),
                    .body(Data("dated".utf8)), .end]
        }
        fetch("/dated")
        let (second, _) = fetch("/dated")
        XCTAssertEqual(second.responseString, "dated")
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-modified-since"), stamp)
    }

    func testReturnCacheDataDontLoad() {
        let (_, missing) = fetch("/absent", policy: .returnCacheDataDontLoad)
        XCTAssertEqual(missing.error?.code, NSURLErrorResourceUnavailable)
        XCTAssertEqual(count("/absent"), 0)

        server.respond("/present", headers: [("Cache-Control", "max-age=0"), ("ETag", "\"p\"")], body: Data("stale but usable".utf8))
        fetch("/present")
        let (offline, outcome) = fetch("/present", policy: .returnCacheDataDontLoad)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(offline.responseString, "stale but usable")
        XCTAssertEqual(count("/present"), 1)
    }

    func testReloadIgnoringLocalCacheDataAlwaysLoads() {
        server.respond("/reload", headers: [("Cache-Control", "max-age=600")], body: Data("r".utf8))
        fetch("/reload")
        fetch("/reload", policy: .reloadIgnoringLocalCacheData)
        XCTAssertEqual(count("/reload"), 2)
    }

    func testCacheResponseBlockCanRefuseOrChangeWhatIsStored() {
        server.respond("/refused", headers: [("Cache-Control", "max-age=600")], body: Data("a".utf8))
        fetch("/refused") { $0.setCacheResponseBlock { _, _ in nil } }
        fetch("/refused")
        XCTAssertEqual(count("/refused"), 2)

        server.respond("/changed", headers: [("Cache-Control", "max-age=600")], body: Data("from the server".utf8))
        fetch("/changed") {
            $0.setCacheResponseBlock { _, proposed in
                CachedURLResponse(response: proposed.response, data: Data("rewritten".utf8), userInfo: nil, storagePolicy: .allowed)
            }
        }
        let (second, _) = fetch("/changed")
        XCTAssertEqual(second.responseString, "rewritten")
        XCTAssertEqual(count("/changed"), 1)
    }

    func testResponsesLargerThanFivePercentOfTheCacheAreNotStored() {
        let limit = max(URLCache.shared.memoryCapacity, URLCache.shared.diskCapacity) / 20
        server.respond("/large", headers: [("Cache-Control", "max-age=600")], body: Data(repeating: 1, count: limit + 1))
        fetch("/large")
        fetch("/large")
        XCTAssertEqual(count("/large"), 2)
    }
}
