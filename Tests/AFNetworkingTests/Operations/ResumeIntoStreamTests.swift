@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Starting over after a pause (no `Range` sent, or a 200 to a ranged
/// request: a changed entity) empties every output before the new entity's
/// first byte — file streams included — so the file holds exactly the new
/// entity, byte for byte.
final class ResumeIntoStreamTests: OperationTestCase {
    private let original = Data((0..<262_144).map { UInt8(truncatingIfNeeded: ($0 &* 13) ^ ($0 >> 9)) })

    private func temporaryFile() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("afn-resume-stream-\(UUID().uuidString).bin")
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// The first answer sends `firstPart` bytes of `original` and stalls;
    /// any later one is `later(request)`.
    private func serve(firstPart: Int, later: @escaping @Sendable (ScriptedServer.Request) -> [ScriptedServer.Step]) {
        let original = self.original
        let answered = Locked(0)
        server.route("/entity") { request in
            if answered.increment() > 1 { return later(request) }
            return [.head(status: 200, headers: [("Content-Length", "\(original.count)"), ("ETag", "\"v1\"")]),
                    .body(original[0..<firstPart]), .wait(30)]
        }
    }

    /// Starts `operation`, pauses it once `bytes` arrived, resumes it and
    /// waits for its end.
    private func pauseAndResume(_ operation: URLConnectionOperation, after bytes: Int64) -> Bool {
        let paused = Locked(false)
        operation.setDownloadProgressBlock { [weak operation] _, total, _ in
            if total >= bytes && paused.setOnce() { operation?.pause() }
        }
        let finished = Locked(false)
        operation.completionBlock = { finished.value = true }
        operation.start()
        guard spin(until: { operation.isPaused }) else { return false }
        operation.resume()
        return spin(until: { finished.value && operation.isFinished }, timeout: 20)
    }

    func testAURLConnectionOperationResumedWithoutRangeWritesTheEntityOnceIntoAFile() throws {
        let original = self.original
        serve(firstPart: 65_536) { request in
            XCTAssertNil(request.headers.first(name: "range"), "a URLConnectionOperation does not rewrite its request")
            return [.head(status: 200, headers: [("Content-Length", "\(original.count)"), ("ETag", "\"v1\"")]), .body(original), .end]
        }
        let file = temporaryFile()
        let operation = URLConnectionOperation(request: request("/entity"))
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: false)
        XCTAssertTrue(pauseAndResume(operation, after: 65_536))
        XCTAssertNil(operation.error)
        let written = try Data(contentsOf: file)
        XCTAssertEqual(written.count, original.count, "not the pre-pause bytes plus the whole entity")
        XCTAssertEqual(written, original)
    }

    func testAURLConnectionOperationResumedWithoutRangeWritesTheEntityOnceIntoMemory() {
        let original = self.original
        serve(firstPart: 65_536) { _ in
            [.head(status: 200, headers: [("Content-Length", "\(original.count)")]), .body(original), .end]
        }
        let operation = URLConnectionOperation(request: request("/entity"))
        operation.outputStream = OutputStream(toMemory: ())
        XCTAssertTrue(pauseAndResume(operation, after: 65_536))
        XCTAssertNil(operation.error)
        XCTAssertEqual(operation.responseData, original)
    }

    func testAChangedEntityAfterAPauseReplacesTheFileWithoutAStaleTail() throws {
        let changed = Data(repeating: 0x5A, count: 300)
        serve(firstPart: 1_000) { request in
            // HTTPRequestOperation's pause() asks for the rest, If-Range the
            // old validator; the entity changed, so the answer is the new one whole.
            XCTAssertEqual(request.headers.first(name: "range"), "bytes=1000-")
            XCTAssertEqual(request.headers.first(name: "if-range"), "\"v1\"")
            XCTAssertEqual(request.headers.first(name: "accept-encoding"), "identity", "a range counts the entity's own bytes")
            return [.head(status: 200, headers: [("Content-Length", "\(changed.count)"), ("ETag", "\"v2\"")]), .body(changed), .end]
        }
        let file = temporaryFile()
        let operation = HTTPRequestOperation(request: request("/entity"))
        operation.responseSerializer = HTTPResponseSerializer()
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: false)
        XCTAssertTrue(pauseAndResume(operation, after: 1_000))
        XCTAssertNil(operation.error)
        XCTAssertEqual(try Data(contentsOf: file), changed, "exactly the new entity: no tail of the old one")
    }

    func testAStreamThatCannotGoBackFailsClearlyInsteadOfAppendingTheNewEntity() throws {
        let changed = Data(repeating: 0x33, count: 500)
        serve(firstPart: 2_000) { _ in
            [.head(status: 200, headers: [("Content-Length", "\(changed.count)")]), .body(changed), .end]
        }
        let file = temporaryFile()
        let before = Data("lines written before the download\n".utf8)
        try before.write(to: file)
        let operation = HTTPRequestOperation(request: request("/entity"))
        operation.responseSerializer = HTTPResponseSerializer()
        // Opened for appending: corelibs can neither seek nor truncate it.
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: true)
        XCTAssertTrue(pauseAndResume(operation, after: 2_000))
        XCTAssertEqual((operation.error as NSError?)?.code, NSURLErrorCannotWriteToFile, "not a silently corrupt file")
        let written = try Data(contentsOf: file)
        XCTAssertEqual(written.prefix(before.count), before, "what the file held before is untouched")
        XCTAssertFalse(written.count == before.count + 2_000 + changed.count && operation.error == nil)
    }
}
