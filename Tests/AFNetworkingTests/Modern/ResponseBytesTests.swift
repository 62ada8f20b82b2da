@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Streamed responses (`ResponseBytes`) against a real server on 127.0.0.1
/// that writes a piece only when the socket took the last one: the bytes, the
/// back-pressure that reaches the server, cancellation, a body cut short and
/// an error status, for session tasks and for operations.
final class ResponseBytesTests: XCTestCase {
    private var server: StreamingBodyServer!
    private var client: StreamClient { StreamClient(server: server, queue: queue) }
    /// Runs the operations made directly (the `.operation` front).
    private let queue = OperationQueue()

    private typealias Front = StreamClient.Front

    override func setUpWithError() throws {
        server = try StreamingBodyServer()
    }

    override func tearDown() {
        server?.shutdown()
        server = nil
    }

    /// A bound comfortably above the writer's high-water mark plus one curl
    /// buffer (what may be pending when the transfer pauses).
    private let bufferBound = ResponseBodyWriter.highWater + 256 * 1024

    // MARK: - Bytes

    func testChunksConcatenateToExactlyTheBodyForEveryFront() async throws {
        let total = 8 << 20
        let expected = StreamingBodyServer.body(count: total)
        for front in Front.allCases {
            let (body, status, chunks) = try await modernBounded(60) { [client] in
                let (bytes, response) = try await client.stream("bytes/\(total)", via: front)
                let (body, chunks) = try await Self.collect(bytes, limit: total)
                return (body, response.statusCode, chunks)
            }
            XCTAssertEqual(status, 200, "\(front)")
            XCTAssertEqual(body.count, total, "\(front)")
            XCTAssertTrue(body == expected, "\(front): the bytes differ from what the server sent")
            XCTAssertGreaterThan(chunks, 1, "\(front): the body came in pieces")
        }
    }

    /// Two tasks iterating one sequence at once share its chunks (each goes
    /// to the iterator that asked first) instead of trapping.
    func testTwoConcurrentReadersShareTheChunks() async throws {
        let total = 4 << 20
        let received = try await modernBounded(60) { [client] () -> Int in
            let (bytes, _) = try await client.stream("bytes/\(total)", via: .sessionTask)
            async let first = Self.count(bytes)
            async let second = Self.count(bytes)
            return try await first + second
        }
        XCTAssertEqual(received, total, "every byte reached one reader or the other, once")
    }

    /// `makeResponseBytes()` racing a queue that starts the operation either
    /// streams the body or throws `NSURLErrorUnknown` at once: never a
    /// sequence that waits forever.
    func testMakingTheSequenceWhileAQueueStartsTheOperationNeverHangs() async throws {
        let url = try XCTUnwrap(server?.baseURL.appendingPathComponent("bytes/1000"))
        let queue = OperationQueue()
        let outcomes = try await modernBounded(60) { () -> [String] in
            var outcomes: [String] = []
            for _ in 0..<30 {
                let operation = HTTPRequestOperation(request: URLRequest(url: url))
                queue.addOperation(operation)
                let bytes = operation.makeResponseBytes()
                do {
                    outcomes.append("\(try await Self.count(bytes))")
                } catch {
                    outcomes.append("\((error as NSError).code)")
                }
            }
            return outcomes
        }
        XCTAssertEqual(outcomes.count, 30)
        XCTAssertTrue(outcomes.allSatisfy { $0 == "1000" || $0 == "\(NSURLErrorUnknown)" }, "\(outcomes)")
    }

    private static func count(_ bytes: ResponseBytes) async throws -> Int {
        var total = 0
        for try await chunk in bytes { total += chunk.count }
        return total
    }

    func testAnErrorStatusIsNotThrownAndItsBodyIsTheSequence() async throws {
        for front in Front.allCases {
            let (status, body) = try await modernBounded(30) { [client] in
                let (bytes, response) = try await client.stream("status/404/5000", via: front)
                return (response.statusCode, try await Self.collect(bytes, limit: 5000).body)
            }
            XCTAssertEqual(status, 404, "\(front)")
            XCTAssertEqual(body, StreamingBodyServer.body(count: 5000), "\(front)")
        }
    }

    func testABodyCutShortIsThrownByNextAfterTheBytesBeforeIt() async throws {
        for front in Front.allCases {
            let (received, error) = try await modernBounded(30) { [client] () -> (Data, NSError?) in
                let (bytes, _) = try await client.stream("short/\(1 << 20)/\(100 * 1024)", via: front)
                var received = Data()
                do {
                    for try await chunk in bytes { received.append(chunk) }
                    return (received, nil as NSError?)
                } catch {
                    return (received, error as NSError?)
                }
            }
            let failure = try XCTUnwrap(error, "\(front): a body shorter than its Content-Length must throw")
            XCTAssertEqual(failure.domain, NSURLErrorDomain, "\(front): \(failure)")
            XCTAssertEqual(received, StreamingBodyServer.body(count: 100 * 1024), "\(front): every byte before the cut is handed out")
        }
    }

    /// A response block that answers `.becomeDownload` cannot take a body a
    /// reader waits for: the stream goes on whole.
    func testBecomeDownloadLeavesAStreamedBodyWithItsReader() async throws {
        let total = 1 << 20
        let url = server.baseURL.appendingPathComponent("bytes/\(total)")
        let asked = Locked(0)
        let becomeDownload = SessionLegacyNames.current.becomeDownload
        let body = try await modernBounded(30) { () -> Data in
            let manager = URLSessionManager(sessionConfiguration: .default)
            defer { manager.invalidateSessionCancelingTasks(false) }
            manager.setDataTaskDidReceiveResponseBlock { _, _, _ in
                asked.increment()
                return becomeDownload
            }
            let (bytes, _) = try await manager.bytes(for: URLRequest(url: url))
            return try await Self.collect(bytes, limit: total).body
        }
        XCTAssertEqual(asked.value, 1, "the block was asked")
        XCTAssertEqual(body, StreamingBodyServer.body(count: total))
    }

    // MARK: - Back-pressure

    /// Mutation check: with the writer releasing a chunk as soon as it is
    /// buffered (an unbounded buffer) the server writes the whole body while
    /// the reader sleeps, and both bounds below fail.
    func testAReaderThatStopsPausesTheServerAndReadingAgainFinishesTheBody() async throws {
        for front in [Front.sessionTask, .operationVerb] {
            try await assertBackPressure(via: front)
        }
    }

    private func assertBackPressure(via front: Front) async throws {
        let total = 128 << 20
        let before = server.bodyBytesWritten
        let (stalledAt, peak, received) = try await modernBounded(120) { [client] in
            let (bytes, _) = try await client.stream("bytes/\(total)", via: front)
            var iterator = bytes.makeAsyncIterator()
            var received = try await iterator.next()?.count ?? 0
            // The reader sleeps; the server goes on until the transfer pauses
            // and the kernel's buffers are full: wait until it stops moving.
            let stalledAt = await Self.settledValue { client.server.bodyBytesWritten - before }
            let peak = bytes.bufferedBytes.peak
            var chunks = 0
            while let chunk = try await iterator.next() {
                received += chunk.count
                chunks += 1
                guard chunks < 1_000_000 else { break }
            }
            return (stalledAt, peak, received)
        }
        XCTAssertLessThanOrEqual(peak, bufferBound, "\(front): unread bytes waiting in memory (the server wrote \(stalledAt))")
        XCTAssertLessThan(stalledAt, total / 3, "\(front): the server wrote \(stalledAt) of \(total) bytes while nobody read")
        XCTAssertEqual(received, total, "\(front): reading again resumed the transfer to its end")
    }

    /// A reader slower than the request's idle timeout: the paused transfer
    /// is not idle, so the body still arrives whole.
    func testAReaderSlowerThanTheIdleTimeoutStillGetsTheWholeBody() async throws {
        let total = 16 << 20
        var request = URLRequest(url: server.baseURL.appendingPathComponent("bytes/\(total)"))
        request.timeoutInterval = 1
        let received = try await modernBounded(60) { [request] () -> Int in
            let configuration = URLSessionConfiguration.default
            configuration.timeoutIntervalForRequest = 1
            let manager = URLSessionManager(sessionConfiguration: configuration)
            defer { manager.invalidateSessionCancelingTasks(false) }
            let (bytes, _) = try await manager.bytes(for: request)
            var iterator = bytes.makeAsyncIterator()
            var received = try await iterator.next()?.count ?? 0
            try await Task.sleep(nanoseconds: 2_500_000_000)
            var chunks = 0
            while let chunk = try await iterator.next(), chunks < 1_000_000 {
                received += chunk.count
                chunks += 1
            }
            return received
        }
        XCTAssertEqual(received, total)
    }

    // MARK: - Cancellation

    func testCancellingTheReadingTaskThrowsCancellationErrorAndClosesTheConnection() async throws {
        let server = try XCTUnwrap(self.server)
        for front in [Front.sessionTask, .operationVerb, .operation] {
            let total = 128 << 20
            let closedBefore = server.closedConnections
            let armed = Locked(false)
            let reader = Task { [client] () -> (Int, Error?) in
                var received = 0
                do {
                    let (bytes, _) = try await client.stream("bytes/\(total)", via: front)
                    for try await chunk in bytes {
                        received += chunk.count
                        if received >= 1 << 20 { armed.value = true }
                    }
                    return (received, nil)
                } catch {
                    return (received, error)
                }
            }
            let wasArmed = await Self.waitUntil(seconds: 20) { armed.value }
            reader.cancel()
            let (received, error) = try await modernBounded(30) { await reader.value }
            XCTAssertTrue(wasArmed, "\(front)")
            XCTAssertTrue(error is CancellationError, "\(front): \(String(describing: error))")
            XCTAssertLessThan(received, total, "\(front)")
            let closed = await Self.waitUntil(seconds: 10) { server.closedConnections > closedBefore }
            XCTAssertTrue(closed, "\(front): the server saw the connection closed")
        }
    }

    func testDroppingTheSequenceBeforeItsEndCancelsTheTransfer() async throws {
        let server = try XCTUnwrap(self.server)
        for front in [Front.sessionTask, .operationVerb] {
            let closedBefore = server.closedConnections
            try await modernBounded(30) { [client] in
                let (bytes, _) = try await client.stream("bytes/\(128 << 20)", via: front)
                var iterator = bytes.makeAsyncIterator()
                _ = try await iterator.next()
            }
            let closed = await Self.waitUntil(seconds: 10) { server.closedConnections > closedBefore }
            XCTAssertTrue(closed, "\(front): dropped unread, the transfer was stopped")
        }
    }

    func testMakeResponseBytesAfterTheStartThrows() async throws {
        let operation = HTTPRequestOperation(request: URLRequest(url: server.baseURL.appendingPathComponent("bytes/10")))
        queue.addOperation(operation)
        let finished = await Self.waitUntil(seconds: 10) { operation.isFinished }
        XCTAssertTrue(finished)
        let bytes = operation.makeResponseBytes()
        do {
            for try await _ in bytes { XCTFail("no chunk expected") }
            XCTFail("expected an error")
        } catch {
            XCTAssertEqual((error as NSError).code, NSURLErrorUnknown)
        }
        XCTAssertEqual(operation.responseData?.count, 10, "the operation's own body is untouched")
    }

    func testReplacingTheOutputStreamBeforeTheStartFailsTheSequence() async throws {
        let operation = HTTPRequestOperation(request: URLRequest(url: server.baseURL.appendingPathComponent("bytes/10")))
        let bytes = operation.makeResponseBytes()
        operation.outputStream = OutputStream(toMemory: ())
        queue.addOperation(operation)
        let failure = try await modernBounded(10) { () -> NSError? in
            do {
                for try await _ in bytes {}
                return nil
            } catch {
                return error as NSError
            }
        }
        XCTAssertEqual(failure?.code, NSURLErrorUnknown, "the reader is told, not left waiting")
        let finished = await Self.waitUntil(seconds: 10) { operation.isFinished }
        XCTAssertTrue(finished)
        XCTAssertEqual(operation.responseData?.count, 10, "the body went to the stream that replaced it")
    }

    // MARK: - Helpers

    /// Reads `bytes` to its end (at most `limit` bytes, and a bounded number of chunks).
    private static func collect(_ bytes: ResponseBytes, limit: Int) async throws -> (body: Data, chunks: Int) {
        var body = Data()
        var chunks = 0
        for try await chunk in bytes {
            XCTAssertFalse(chunk.isEmpty)
            body.append(chunk)
            chunks += 1
            guard body.count <= limit, chunks < 1_000_000 else { break }
        }
        return (body, chunks)
    }

    /// Polls `condition` every 20 ms for at most `seconds`.
    static func waitUntil(seconds: TimeInterval, _ condition: @Sendable () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
        return condition()
    }

    /// `value()` once it has not changed for half a second (at most 15 s).
    private static func settledValue(_ value: @Sendable () -> Int) async -> Int {
        let deadline = Date().addingTimeInterval(15)
        var last = value()
        var stableSince = Date()
        while Date() < deadline {
            try? await Task.sleep(nanoseconds: 50_000_000)
            let now = value()
            if now != last {
                last = now
                stableSince = Date()
            } else if Date().timeIntervalSince(stableSince) >= 0.5 {
                break
            }
        }
        return last
    }
}

/// Opens streamed GETs on the test's server through each front-end.
private struct StreamClient: Sendable {
    let server: StreamingBodyServer
    /// Runs the operations made directly (the `.operation` front).
    let queue: OperationQueue

    /// The ways to get a streamed GET of `path` from the server.
    enum Front: CaseIterable {
        case sessionTask, sessionVerb, operationVerb, operation
    }

    func stream(_ path: String, via front: Front) async throws -> (ResponseBytes, HTTPURLResponse) {
        let url = server.baseURL.appendingPathComponent(path)
        switch front {
        case .sessionTask:
            let manager = URLSessionManager(sessionConfiguration: .default)
            defer { manager.invalidateSessionCancelingTasks(false) }
            let (bytes, response) = try await manager.bytes(for: URLRequest(url: url))
            return (bytes, try XCTUnwrap(response as? HTTPURLResponse))
        case .sessionVerb:
            let manager = HTTPSessionManager(baseURL: server.baseURL)
            defer { manager.invalidateSessionCancelingTasks(false) }
            return try await manager.bytes(path, headers: ["X-Stream": "yes"])
        case .operationVerb:
            return try await HTTPRequestOperationManager(baseURL: server.baseURL).bytes(path)
        case .operation:
            let operation = HTTPRequestOperation(request: URLRequest(url: url))
            let bytes = operation.makeResponseBytes()
            queue.addOperation(operation)
            // The operation's own response, once its head is in.
            _ = await ResponseBytesTests.waitUntil(seconds: 10) { operation.response != nil }
            return (bytes, try XCTUnwrap(operation.response))
        }
    }
}
