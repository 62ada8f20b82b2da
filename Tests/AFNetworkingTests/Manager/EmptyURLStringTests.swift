import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `get("")` asks for the base URL itself on both managers (RFC 3986's empty
/// reference, what Apple's `URL(string: "", relativeTo:)` gives and 2.x relied
/// on); without a base URL it is still `NSURLErrorBadURL`.
final class EmptyURLStringTests: OperationTestCase {
    private func serveBase() {
        server.respond("/api/", headers: [("Content-Type", "text/plain")], body: Data("the base".utf8))
    }

    func testTheOperationManagerGetsTheBaseURLForAnEmptyString() {
        serveBase()
        let manager = HTTPRequestOperationManager(baseURL: url("/api"))
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "empty-url")
        let done = expectation(description: "get")
        let result = Locked<(body: Data?, error: Error?)>((nil, nil))
        let operation = manager.get("", parameters: nil, success: { _, object in
            result.withLock { $0.body = object as? Data }
            done.fulfill()
        }, failure: { _, error in
            result.withLock { $0.error = error }
            done.fulfill()
        })
        wait(for: [done], timeout: 15)
        XCTAssertNil(result.value.error)
        XCTAssertEqual(result.value.body, Data("the base".utf8))
        XCTAssertEqual(operation?.request.url?.absoluteString, url("/api/").absoluteString)
        XCTAssertEqual(server.requests.map(\.uri), ["/api/"])
    }

    func testTheSessionManagerGetsTheBaseURLForAnEmptyString() {
        serveBase()
        let manager = HTTPSessionManager(baseURL: url("/api"))
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "empty-url")
        let done = expectation(description: "get")
        let result = Locked<(body: Data?, error: Error?)>((nil, nil))
        let task = manager.get("", parameters: nil, progress: nil, success: { _, object in
            result.withLock { $0.body = object as? Data }
            done.fulfill()
        }, failure: { _, error in
            result.withLock { $0.error = error }
            done.fulfill()
        })
        XCTAssertNotNil(task)
        wait(for: [done], timeout: 15)
        XCTAssertNil(result.value.error)
        XCTAssertEqual(result.value.body, Data("the base".utf8))
        XCTAssertEqual(server.requests.map(\.uri), ["/api/"])
    }

    func testAnEmptyStringWithoutABaseURLIsStillABadURL() {
        let manager = HTTPRequestOperationManager(baseURL: nil)
        manager.completionQueue = DispatchQueue(label: "empty-url")
        let done = expectation(description: "get")
        let failure = Locked<NSError?>(nil)
        _ = manager.get("", parameters: nil, success: { _, _ in done.fulfill() }, failure: { _, error in
            failure.value = error as NSError
            done.fulfill()
        })
        wait(for: [done], timeout: 15)
        XCTAssertEqual(failure.value?.code, NSURLErrorBadURL)
    }
}
