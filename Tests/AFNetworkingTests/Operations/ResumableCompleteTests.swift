@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A restart-proof download whose `.partial` file already holds the whole
/// entity (the process stopped between the last write and the move) is
/// finalised: the server's `416` with `bytes */N` equal to the offset means
/// done, not failed.
final class ResumableCompleteTests: OperationTestCase {
    func testACompletePartialFileIsFinalisedOnA416() throws {
        let entity = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let request = request("/entity")
        let (destination, partial, sidecar) = try leftByAnEarlierRun(request, "complete", holding: entity, expectedLength: entity.count)
        server.route("/entity") { request in
            guard request.headers.first(name: "range") == "bytes=\(entity.count)-" else {
                return [.head(status: 500, headers: [("Content-Length", "0")]), .end]
            }
            return [.head(status: 416, headers: [("Content-Range", "bytes */\(entity.count)"), ("Content-Type", "text/html"),
                                                 ("Content-Length", "5")]), .body(Data("nope!".utf8)), .end]
        }
        let operation = try HTTPRequestOperation(request: request, resumingDownloadTo: destination)
        let outcome = run(operation)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertNil(outcome.error, "not -1011: the entity is complete")
        XCTAssertEqual(operation.response?.statusCode, 206, "a resumed download completes with a 206, whole here")
        XCTAssertEqual(operation.response?.expectedContentLength, Int64(entity.count))
        XCTAssertNil(operation.response?.value(forHTTPHeaderField: "Content-Type"), "the 416's type was its error body's")
        XCTAssertEqual(try Data(contentsOf: destination), entity)
        XCTAssertFalse(FileManager.default.fileExists(atPath: partial.path), "the partial file became the destination")
        XCTAssertFalse(FileManager.default.fileExists(atPath: sidecar.path))
        XCTAssertEqual(server.requests.count, 1)
    }

    /// A server that ignores If-Range answers from a changed entity: the
    /// resume is refused, nothing is spliced, and the next run starts over
    /// instead of failing the same way for ever.
    func testAChangedEntityIsRefusedAndTheNextRunStartsOver() throws {
        let old = Data(repeating: 1, count: 3_000)
        let new = Data(repeating: 2, count: 8_000)
        let request = request("/changed")
        let (destination, _, _) = try leftByAnEarlierRun(request, "changed", holding: old, expectedLength: 8_000)
        server.route("/changed") { request in
            if let range = request.headers.first(name: "range"), let start = Int(range.dropFirst(6).dropLast()) {
                return [.head(status: 206, headers: [("ETag", "\"v2\""), ("Content-Range", "bytes \(start)-\(new.count - 1)/\(new.count)"),
                                                     ("Content-Length", "\(new.count - start)")]), .body(new[start...]), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"v2\""), ("Content-Length", "\(new.count)")]), .body(new), .end]
        }
        let first = try HTTPRequestOperation(request: request, resumingDownloadTo: destination)
        XCTAssertEqual(run(first).error?.code, NSURLErrorBadServerResponse)
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination.path), "nothing spliced became the file")

        let second = try HTTPRequestOperation(request: request, resumingDownloadTo: destination)
        XCTAssertNil(second.request.value(forHTTPHeaderField: "Range"), "the next run starts over")
        XCTAssertNil(run(second).error)
        XCTAssertEqual(try Data(contentsOf: destination), new)
    }
}
