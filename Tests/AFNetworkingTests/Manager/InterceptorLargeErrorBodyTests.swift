import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// An answer the interceptor's retrier may send again waits apart from the
/// output; past 1 MiB it was cut without a word (a 3 MiB 404 arrived as
/// 1,048,576 bytes, also through `bytes(for:)`). Now a memory output holds it
/// whole, and a stream output receives it whole, streamed.
final class InterceptorLargeErrorBodyTests: OperationTestCase {
    private let size = 3 << 20
    private let asked = Locked(0)

    override func setUpWithError() throws {
        try super.setUpWithError()
        let body = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
        server.respond("/missing", status: 404, headers: [("Content-Type", "application/octet-stream")], body: body)
    }

    private var expected: Data { Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) }) }

    /// Keeps every failed answer (asked once per request).
    private var keeper: Interceptor {
        let asked = self.asked
        return Interceptor(retryHandler: { _, _, _, _, completion in
            asked.withLock { $0 += 1 }
            completion(.doNotRetry)
        })
    }

    func testAnOperationKeepsTheWholeErrorBodyInMemory() {
        let operation = HTTPRequestOperation(request: request("/missing"))
        operation.responseSerializer = HTTPResponseSerializer()
        operation.requestInterceptor = keeper
        let outcome = run(operation)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(operation.response?.statusCode, 404)
        XCTAssertEqual(operation.responseData?.count, size)
        XCTAssertTrue(operation.responseData == expected, "byte for byte")
        XCTAssertEqual(asked.value, 1)
    }

    func testAnOperationWritingToAFileGetsTheWholeErrorBody() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("afn-interceptor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let operation = HTTPRequestOperation(request: request("/missing"))
        operation.responseSerializer = HTTPResponseSerializer()
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: false)
        operation.requestInterceptor = keeper
        let totals = Locked<[Int64]>([])
        operation.setDownloadProgressBlock { _, total, _ in totals.append(total) }
        let outcome = run(operation)
        XCTAssertEqual(operation.response?.statusCode, 404)
        XCTAssertNotNil(outcome.error)
        XCTAssertTrue(try Data(contentsOf: file) == expected, "the file holds the whole body")
        XCTAssertTrue(spin(until: { totals.value.last == Int64(self.size) }), "progress counts every byte")
        XCTAssertEqual(asked.value, 0, "streamed once past what is held, it is no longer offered for a retry")
    }

    func testBytesForAnErrorStatusStreamsTheWholeBody() async throws {
        let manager = URLSessionManager(sessionConfiguration: .default)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.requestInterceptor = keeper
        let (bytes, response) = try await manager.bytes(for: request("/missing"))
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 404)
        var received = Data()
        for try await chunk in bytes { received.append(chunk) }
        XCTAssertEqual(received.count, size)
        XCTAssertTrue(received == expected, "the sequence is the whole body")
    }
}
