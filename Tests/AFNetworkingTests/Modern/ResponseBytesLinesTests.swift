@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `ResponseBytes.lines`: bodies the scripted server writes piece by piece (a
/// pause after each, so each arrives as a chunk of its own), read as lines
/// through a session task and through an operation — lines and breaks cut by
/// chunks, empty lines, a last line without a break, the bound on a line's
/// length, a transport error and a cancelled reader. Then the splitter alone,
/// without a socket, against every way of cutting a text in three.
final class ResponseBytesLinesTests: OperationTestCase {
    /// Runs the operations the tests make.
    private let queue = OperationQueue()

    /// How the body is streamed: `bytes(for:)` of a session manager, or an operation's `makeResponseBytes()`.
    private enum Front: CaseIterable {
        case sessionTask, operation
    }

    // MARK: - Over a socket

    func testLinesCutByChunksComeOutWhole() async throws {
        serve("/cut", ["alpha\nbe", "ta\ngam", "ma\ndelta\n"])
        for front in Front.allCases {
            let (lines, error) = try await readLines("/cut", via: front)
            XCTAssertNil(error, "\(front)")
            XCTAssertEqual(lines, ["alpha", "beta", "gamma", "delta"], "\(front)")
        }
    }

    /// The CR ends one chunk and the LF starts the next: one break, not two.
    func testACRLFCutBetweenTwoChunksIsOneBreak() async throws {
        serve("/crlf", ["one\r", "\ntwo\r", "\n", "three\r", "four"])
        for front in Front.allCases {
            let (lines, error) = try await readLines("/crlf", via: front)
            XCTAssertNil(error, "\(front)")
            XCTAssertEqual(lines, ["one", "two", "three", "four"], "\(front)")
        }
    }

    func testALastLineWithoutABreakIsYieldedAndABreakAtTheEndAddsNoLine() async throws {
        serve("/unterminated", ["first\nla", "st"])
        serve("/terminated", ["first\nlast\n"])
        for front in Front.allCases {
            let unterminated = try await readLines("/unterminated", via: front)
            XCTAssertEqual(unterminated.lines, ["first", "last"], "\(front)")
            let terminated = try await readLines("/terminated", via: front)
            XCTAssertEqual(terminated.lines, ["first", "last"], "\(front)")
        }
    }

    func testEmptyLinesAreYieldedAndAnEmptyBodyYieldsNothing() async throws {
        serve("/empty-lines", ["\n\n", "x\n\r\n", "\r", "\r"])
        server.respond("/empty-body", body: Data())
        for front in Front.allCases {
            let (lines, error) = try await readLines("/empty-lines", via: front)
            XCTAssertNil(error, "\(front)")
            XCTAssertEqual(lines, ["", "", "x", "", "", ""], "\(front)")
            let empty = try await readLines("/empty-body", via: front)
            XCTAssertNil(empty.error, "\(front)")
            XCTAssertEqual(empty.lines, [], "\(front)")
        }
    }

    /// NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR break lines even when a
    /// chunk ends inside them; invalid UTF-8 becomes U+FFFD.
    func testUnicodeBreaksCutByChunksAndInvalidBytes() async throws {
        let pieces: [Data] = [Data("fünf".utf8) + Data([0xC2]), Data([0x85]) + Data("sechs".utf8) + Data([0xE2]),
                              Data([0x80, 0xA8]) + Data("sieben".utf8) + Data([0xE2, 0x80]), Data([0xA9, 0x61, 0xFF, 0x62])]
        serve("/unicode", pieces)
        for front in Front.allCases {
            let (lines, error) = try await readLines("/unicode", via: front)
            XCTAssertNil(error, "\(front)")
            XCTAssertEqual(lines, ["fünf", "sechs", "sieben", "a\u{FFFD}b"], "\(front)")
        }
    }

    /// The public bound: a line one byte longer than 8 MiB throws, after the lines before it.
    func testALineLongerThan8MiBThrowsTheLengthError() async throws {
        let bound = ResponseLines.maximumLineLength
        XCTAssertEqual(bound, 8 << 20)
        let long = Data(repeating: 0x61, count: bound + 1)
        var pieces = [Data("ok\n".utf8)]
        pieces += stride(from: 0, to: long.count, by: 1 << 20).map { long[$0..<min($0 + (1 << 20), long.count)] }
        pieces.append(Data("\nnever\n".utf8))
        serve("/long", pieces)
        let (lines, error) = try await readLines("/long", via: .sessionTask)
        XCTAssertEqual(lines, ["ok"])
        let failure = try XCTUnwrap(error as NSError?, "a line past the bound must throw")
        XCTAssertEqual(failure.domain, NSURLErrorDomain)
        XCTAssertEqual(failure.code, NSURLErrorDataLengthExceedsMaximum)
        XCTAssertTrue(failure.localizedDescription.contains("longer than \(bound) bytes"), failure.localizedDescription)
    }

    /// With a small bound: a line of exactly the bound passes, a longer one
    /// throws while the server still has more to send, and the transfer is
    /// stopped (the operation ends cancelled instead of waiting for it).
    func testTheBoundIsExactAndALongerLineStopsTheTransfer() async throws {
        let exact = String(repeating: "b", count: 1000)
        server.route("/bounded") { _ in
            [.head(status: 200, headers: [("Content-Length", "100000")]),
             .body(Data("ok\n\(exact.prefix(400))".utf8)), .wait(0.05), .body(Data("\(exact.dropFirst(400))\n".utf8)), .wait(0.05),
             .body(Data(repeating: 0x63, count: 1010)), .wait(30), .end]
        }
        let operation = HTTPRequestOperation(request: request("/bounded"))
        let bytes = operation.makeResponseBytes()
        queue.addOperation(operation)
        let (lines, error) = try await modernBounded(30) { () -> ([String], (any Error)?) in
            var lines: [String] = []
            do {
                for try await line in ResponseLines(bytes: bytes, maximumLength: 1000) { lines.append(line) }
                return (lines, nil)
            } catch {
                return (lines, error)
            }
        }
        XCTAssertEqual(lines, ["ok", exact])
        XCTAssertEqual((error as NSError?)?.code, NSURLErrorDataLengthExceedsMaximum)
        let finished = await modernEventually(10) { operation.isFinished }
        XCTAssertTrue(finished, "the transfer was stopped, not left waiting for the server's 30 s")
        XCTAssertEqual((operation.error as NSError?)?.code, NSURLErrorCancelled)
    }

    func testATransportErrorIsThrownAfterTheLinesBeforeIt() async throws {
        serve("/cut-short", ["one\ntwo\n", "thr"], cutShort: true)
        for front in Front.allCases {
            let (lines, error) = try await readLines("/cut-short", via: front)
            XCTAssertEqual(lines, ["one", "two"], "\(front): the line the failure cut is not yielded")
            let failure = try XCTUnwrap(error as NSError?, "\(front): a body shorter than its Content-Length must throw")
            XCTAssertEqual(failure.domain, NSURLErrorDomain, "\(front): \(failure)")
        }
    }

    func testCancellingTheReadingTaskThrowsCancellationError() async throws {
        server.route("/stalls") { _ in
            [.head(status: 200, headers: [("Content-Length", "100000")]), .body(Data("first\nsec".utf8)), .wait(30), .end]
        }
        let request = self.request("/stalls")
        let firstLine = Locked(false)
        let reader = Task { () -> ([String], (any Error)?) in
            var lines: [String] = []
            do {
                let manager = URLSessionManager(sessionConfiguration: .default)
                defer { manager.invalidateSessionCancelingTasks(false) }
                let (bytes, _) = try await manager.bytes(for: request)
                for try await line in bytes.lines {
                    lines.append(line)
                    firstLine.value = true
                }
                return (lines, nil)
            } catch {
                return (lines, error)
            }
        }
        let read = await modernEventually(10) { firstLine.value }
        XCTAssertTrue(read)
        reader.cancel()
        let (lines, error) = try await modernBounded(10) { await reader.value }
        XCTAssertEqual(lines, ["first"])
        XCTAssertTrue(error is CancellationError, String(describing: error))
    }

    // MARK: - The splitter alone

    /// Every way of cutting the text in three chunks gives the lines a
    /// scalar-by-scalar reading of the whole text gives.
    func testEveryCutOfATextInThreeChunksGivesTheSameLines() throws {
        let text = "one\r\ntwo\rthree\n\nfünf\u{85}six\u{2028}seven\u{2029}\r\n\u{1F600}é\r\r\n\u{85}\u{85}end"
        let data = Data(text.utf8)
        let expected = Self.referenceLines(text)
        XCTAssertEqual(expected, ["one", "two", "three", "", "fünf", "six", "seven", "", "\u{1F600}é", "", "", "", "end"])
        for first in 0...data.count {
            for second in first...data.count {
                // Slices, as chunks may be: indices that do not start at 0.
                let lines = try Self.split([data[..<first], data[first..<second], data[second...]])
                XCTAssertEqual(lines, expected, "cut at \(first) and \(second)")
            }
        }
    }

    func testInvalidUTF8BecomesTheReplacementCharacter() throws {
        let lines = try Self.split([Data([0x61, 0xC2]), Data([0x0A, 0xE2, 0x80]), Data([0x0A, 0xFF, 0x62])])
        XCTAssertEqual(lines, ["a\u{FFFD}", "\u{FFFD}", "\u{FFFD}b"])
    }

    /// The bound counts a line's bytes without its break, whichever chunks they are in.
    func testTheBoundCountsALineWithoutItsBreak() throws {
        let sixteen = Data(repeating: 0x61, count: 16)
        let line = String(repeating: "a", count: 16)
        XCTAssertEqual(try Self.split([sixteen], maximumLength: 16), [line])
        XCTAssertEqual(try Self.split([sixteen + Data([0xC2]), Data([0x85, 0x62])], maximumLength: 16), [line, "b"])
        XCTAssertEqual(try Self.split([sixteen.prefix(10), sixteen.suffix(6) + Data([0xE2, 0x80]), Data([0xA8])], maximumLength: 16), [line])
        for tooLong in [[sixteen + Data([0x61])], [sixteen.prefix(10), Data(repeating: 0x61, count: 7) + Data([0x0A])],
                        [sixteen.prefix(10), Data(repeating: 0x61, count: 7) + Data([0xE2, 0x80])]] {
            XCTAssertThrowsError(try Self.split(tooLong, maximumLength: 16)) { error in
                XCTAssertEqual((error as NSError).code, NSURLErrorDataLengthExceedsMaximum)
            }
        }
    }

    // MARK: - Helpers

    /// Answers `path` with `pieces` written one by one, a short pause after
    /// each; `cutShort` announces more than is sent and closes the connection.
    private func serve(_ path: String, _ pieces: [Data], cutShort: Bool = false) {
        let length = pieces.reduce(0) { $0 + $1.count } + (cutShort ? 1000 : 0)
        server.route(path) { _ in
            var steps: [ScriptedServer.Step] = [.head(status: 200, headers: [("Content-Length", "\(length)")])]
            for piece in pieces { steps += [.body(piece), .wait(0.05)] }
            steps.append(cutShort ? .close : .end)
            return steps
        }
    }

    private func serve(_ path: String, _ pieces: [String], cutShort: Bool = false) {
        serve(path, pieces.map { Data($0.utf8) }, cutShort: cutShort)
    }

    /// The lines of `path` read through `front`, and the error that ended them, if any.
    private func readLines(_ path: String, via front: Front) async throws -> (lines: [String], error: (any Error)?) {
        let (request, queue) = (self.request(path), self.queue)
        return try await modernBounded(60) { () -> ([String], (any Error)?) in
            let bytes: ResponseBytes
            switch front {
            case .sessionTask:
                let manager = URLSessionManager(sessionConfiguration: .default)
                defer { manager.invalidateSessionCancelingTasks(false) }
                bytes = try await manager.bytes(for: request).0
            case .operation:
                let operation = HTTPRequestOperation(request: request)
                bytes = operation.makeResponseBytes()
                queue.addOperation(operation)
            }
            var lines: [String] = []
            do {
                for try await line in bytes.lines { lines.append(line) }
                return (lines, nil)
            } catch {
                return (lines, error)
            }
        }
    }

    /// `chunks` through a splitter, as `ResponseLines` feeds it.
    private static func split(_ chunks: [Data], maximumLength: Int = 1 << 20) throws -> [String] {
        var splitter = LineSplitter(maximumLength: maximumLength)
        var lines: [String] = []
        for chunk in chunks {
            splitter.append(chunk)
            while let line = try splitter.nextLine() { lines.append(line) }
        }
        if let last = try splitter.finish() { lines.append(last) }
        return lines
    }

    /// The lines of `text` read scalar by scalar (valid text only): the
    /// rules, written the plain way.
    private static func referenceLines(_ text: String) -> [String] {
        var lines: [String] = []
        var current = String.UnicodeScalarView()
        var afterCR = false
        for scalar in text.unicodeScalars {
            if afterCR {
                afterCR = false
                if scalar == "\n" { continue }
            }
            switch scalar {
            case "\n", "\u{85}", "\u{2028}", "\u{2029}", "\r":
                lines.append(String(current))
                current = String.UnicodeScalarView()
                afterCR = scalar == "\r"
            default:
                current.append(scalar)
            }
        }
        if !current.isEmpty { lines.append(String(current)) }
        return lines
    }
}
