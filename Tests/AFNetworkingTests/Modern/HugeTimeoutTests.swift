@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Timeouts that are infinite, huge or meaningless never trap: longer than a
/// year means "none", 0, negative and NaN mean the default (idle) or none
/// (resource), on operations, the operation manager and session tasks.
final class HugeTimeoutTests: OperationTestCase {
    private let values: [TimeInterval] = [
        Date.distantFuture.timeIntervalSinceNow, .greatestFiniteMagnitude, .infinity, .nan, -1, 0,
        TransferOptions.longestIdleTimeout + 1, 1e12,
    ]

    private func serve() {
        server.respond("/ok", headers: [("Content-Type", "text/plain")], body: Data("fine".utf8))
    }

    func testAnIdleTimeoutPastTheLongestMeansNone() {
        for value in values {
            var request = URLRequest(url: url("/ok"))
            request.timeoutInterval = value
            let options = TransferOptions(request: request)
            if value > TransferOptions.longestIdleTimeout {
                XCTAssertNil(options.idleTimeoutNanoseconds, "\(value)")
            } else {
                XCTAssertEqual(options.idleTimeoutNanoseconds, 60_000_000_000, "\(value): the default")
            }
            XCTAssertGreaterThan(options.connectTimeoutMilliseconds, 0)
        }
        var request = URLRequest(url: url("/ok"))
        request.timeoutInterval = 2.5
        XCTAssertEqual(TransferOptions(request: request).idleTimeoutNanoseconds, 2_500_000_000)
        XCTAssertEqual(TransferOptions(request: request).connectTimeoutMilliseconds, 2500)
    }

    func testOperationsRunWithAnyTimeout() {
        serve()
        for value in values {
            var request = request("/ok")
            request.timeoutInterval = value
            let operation = HTTPRequestOperation(request: request)
            operation.responseSerializer = HTTPResponseSerializer()
            operation.timeoutIntervalForResource = value
            let outcome = run(operation, timeout: 15)
            XCTAssertEqual(outcome.calls, 1, "\(value)")
            XCTAssertNil(outcome.error, "\(value)")
        }
    }

    func testTheOperationManagerRunsWithAnyTimeout() {
        serve()
        for value in values {
            let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
            manager.responseSerializer = HTTPResponseSerializer()
            manager.requestSerializer.timeoutInterval = value
            manager.timeoutIntervalForResource = value
            manager.completionQueue = DispatchQueue(label: "huge-timeouts")
            let done = expectation(description: "\(value)")
            let error = Locked<Error?>(nil)
            manager.get("ok", parameters: nil, success: { _, _ in done.fulfill() },
                        failure: { _, failure in error.value = failure; done.fulfill() })
            wait(for: [done], timeout: 15)
            XCTAssertNil(error.value, "\(value)")
        }
    }

    func testSessionTasksRunWithAnyTimeout() {
        serve()
        for value in values {
            let configuration = URLSessionConfiguration.default
            configuration.timeoutIntervalForRequest = value
            configuration.timeoutIntervalForResource = value
            let manager = URLSessionManager(sessionConfiguration: configuration)
            manager.responseSerializer = HTTPResponseSerializer()
            manager.completionQueue = DispatchQueue(label: "huge-timeouts")
            var request = request("/ok")
            request.timeoutInterval = value
            let done = expectation(description: "\(value)")
            let error = Locked<Error?>(nil)
            manager.dataTask(with: request) { _, _, failure in
                error.value = failure
                done.fulfill()
            }.resume()
            wait(for: [done], timeout: 15)
            XCTAssertNil(error.value, "\(value)")
            manager.invalidateSessionCancelingTasks(true)
        }
    }
}
