import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// A pause before the head of the entity has arrived — before the start, or
/// while the first answer is still awaited — leaves the request's `Range`
/// and `If-Range` as they were. They used to be stripped (nothing had been
/// received, so there seemed to be nothing to continue): a restart-proof
/// download then got the whole entity, wrote it after the bytes its partial
/// file already held and succeeded, and a caller's own `Range` was lost.
final class PauseBeforeTheHeadTests: OperationTestCase {
    private static let entity = Data((0..<8_000).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) })
    /// What the partial file an earlier run left holds.
    private static let offset = 3_000

    func testARestartProofDownloadPausedBeforeItStartedAsksForTheRest() throws {
        let (entity, offset) = (Self.entity, Self.offset)
        let request = request("/entity")
        let (destination, _, _) = try leftByAnEarlierRun(request, "paused-before-start", holding: entity.prefix(offset),
                                                         expectedLength: entity.count)
        server.route("/entity") { answerForTheRest($0, of: entity, from: offset) }
        let operation = try HTTPRequestOperation(request: request, resumingDownloadTo: destination)
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "Range"), "bytes=\(offset)-")
        operation.pause()
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "Range"), "bytes=\(offset)-", "nothing arrived: the request is as it was")
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        let outcome = Locked(Outcome())
        let done = expectation(description: "completion")
        record(operation, into: outcome) { done.fulfill() }
        let queue = OperationQueue()
        queue.addOperation(operation)
        XCTAssertTrue(operation.isPaused, "added while paused, it waits for its resume")
        XCTAssertTrue(server.requests.isEmpty)
        operation.resume()
        wait(for: [done], timeout: 15)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(server.requests.map { $0.headers.first(name: "range") }, ["bytes=\(offset)-"])
        XCTAssertEqual(operation.response?.statusCode, 206)
        XCTAssertEqual(try Data(contentsOf: destination), entity, "the partial file's bytes and then the rest, each once")
    }

    func testARestartProofDownloadPausedBeforeTheFirstHeadAsksForTheRest() throws {
        let (entity, offset) = (Self.entity, Self.offset)
        let request = request("/slow-entity")
        let (destination, _, _) = try leftByAnEarlierRun(request, "paused-before-head", holding: entity.prefix(offset),
                                                         expectedLength: entity.count)
        let paused = Locked(false)
        let answered = Locked(0)
        server.route("/slow-entity") { request in
            // The first answer never comes: it waits for the pause, which drops the connection.
            if answered.increment() == 1 { return [.waitUntil({ paused.value }, timeout: 10), .close] }
            return answerForTheRest(request, of: entity, from: offset)
        }
        let operation = try HTTPRequestOperation(request: request, resumingDownloadTo: destination)
        let outcome = Locked(Outcome())
        let done = expectation(description: "completion")
        record(operation, into: outcome) { done.fulfill() }
        let queue = OperationQueue()
        queue.addOperation(operation)
        XCTAssertTrue(spin(until: { server.requests.count == 1 }), "the first request went out")
        operation.pause()
        paused.value = true
        XCTAssertTrue(operation.isPaused)
        XCTAssertNil(operation.response, "no head arrived")
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "Range"), "bytes=\(offset)-", "nothing arrived: the request is as it was")
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
        operation.resume()
        wait(for: [done], timeout: 15)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(server.requests.map { $0.headers.first(name: "range") }, ["bytes=\(offset)-", "bytes=\(offset)-"],
                       "the resumed request asks for the rest, as the first one did")
        XCTAssertEqual(server.requests.last?.headers.first(name: "if-range"), "\"v1\"")
        XCTAssertEqual(operation.response?.statusCode, 206)
        XCTAssertEqual(try Data(contentsOf: destination), entity, "the partial file's bytes and then the rest, each once")
    }

    func testACallersOwnRangeSurvivesAPauseBeforeTheStart() {
        let entity = Data("0123456789".utf8)
        server.route("/ranged") { request in
            guard request.headers.first(name: "range") == "bytes=5-" else {
                return [.head(status: 200, headers: [("Content-Length", "\(entity.count)")]), .body(entity), .end]
            }
            return [.head(status: 206, headers: [("Content-Range", "bytes 5-9/10"), ("Content-Length", "5")]), .body(entity.suffix(5)), .end]
        }
        var ranged = request("/ranged")
        ranged.setValue("bytes=5-", forHTTPHeaderField: "Range")
        let operation = HTTPRequestOperation(request: ranged)
        operation.pause()
        XCTAssertEqual(operation.request.value(forHTTPHeaderField: "Range"), "bytes=5-", "nothing arrived: the request is as it was")
        let outcome = Locked(Outcome())
        let done = expectation(description: "completion")
        record(operation, into: outcome) { done.fulfill() }
        operation.start()
        XCTAssertTrue(operation.isPaused, "started while paused, it waits for its resume")
        operation.resume()
        wait(for: [done], timeout: 15)
        XCTAssertNil(outcome.value.error)
        XCTAssertEqual(server.requests.map { $0.headers.first(name: "range") }, ["bytes=5-"])
        XCTAssertEqual(operation.response?.statusCode, 206)
        XCTAssertEqual(operation.responseData, entity.suffix(5))
    }
}

/// The server's side: a request for the rest of `entity` from `offset`, while
/// "v1" is still the entity it names, gets a 206 with the rest; any other
/// request gets the whole entity, so a resume that lost its `Range` shows as
/// a file holding the partial bytes twice.
private func answerForTheRest(_ request: ScriptedServer.Request, of entity: Data, from offset: Int) -> [ScriptedServer.Step] {
    guard request.headers.first(name: "range") == "bytes=\(offset)-", request.headers.first(name: "if-range") == "\"v1\"" else {
        return [.head(status: 200, headers: [("ETag", "\"v1\""), ("Content-Length", "\(entity.count)")]), .body(entity), .end]
    }
    return [.head(status: 206, headers: [("ETag", "\"v1\""), ("Content-Range", "bytes \(offset)-\(entity.count - 1)/\(entity.count)"),
                                         ("Content-Length", "\(entity.count - offset)")]),
            .body(entity[offset...]), .end]
}
