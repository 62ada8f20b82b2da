@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import CAFCompression
import Foundation
import XCTest

/// The bounded-step content decoder, without I/O. The compressed vectors were
/// made by independent encoders (Python's zlib and gzip modules, libbrotlienc,
/// the zstd command); the large ones by the gzip command at test time.
final class ContentDecoderTests: XCTestCase {
    static let zlibHello: [UInt8] = [0x78, 0x9C, 0x4B, 0x49, 0x4D, 0xCB, 0x49, 0x2C, 0x49, 0x55, 0x28, 0x4E, 0xAC, 0x2C, 0x56, 0xC8,
                                     0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51, 0x48, 0xC1, 0x10, 0x03, 0x00, 0x13, 0x2D, 0x0E, 0x1F]
    static let rawDeflateHello: [UInt8] = [0x4B, 0x49, 0x4D, 0xCB, 0x49, 0x2C, 0x49, 0x55, 0x28, 0x4E, 0xAC, 0x2C, 0x56, 0xC8, 0x48,
                                           0xCD, 0xC9, 0xC9, 0xD7, 0x51, 0x48, 0xC1, 0x10, 0x03, 0x00]
    static let deflateHelloText = "deflate says hello, deflate says hello"
    /// gzip over zlib: a body sent with `Content-Encoding: deflate, gzip`.
    static let gzipOfDeflate: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0xAB, 0x98, 0xA3, 0xAD, 0x79,
                                         0x3E, 0xDC, 0xE3, 0x9C, 0xFF, 0xC9, 0x33, 0xDE, 0xFA, 0xD7, 0x02, 0x35, 0x1C, 0x0B, 0x18,
                                         0x0A, 0xB6, 0x73, 0xF2, 0x03, 0x00, 0xC1, 0x6E, 0x96, 0x6B, 0x17, 0x00, 0x00, 0x00]
    static let brotliHello: [UInt8] = [0x1B, 0x23, 0x00, 0xF8, 0x1D, 0x89, 0x71, 0x2C, 0x89, 0xBB, 0xEF, 0x11, 0x4A, 0xB1, 0x30,
                                       0xB9, 0x4E, 0x63, 0x7B, 0x9B, 0x93, 0x20, 0x74, 0x79, 0xA5, 0xCC, 0x40, 0x25, 0x82, 0x4A,
                                       0x73, 0x89, 0xFB, 0xD0, 0x20]
    static let brotliHelloText = "brotli says hello, brotli says hello"
    static let zstdHello: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x58, 0xBD, 0x00, 0x00, 0x88, 0x7A, 0x73, 0x74, 0x64, 0x20, 0x73,
                                     0x61, 0x79, 0x73, 0x20, 0x68, 0x65, 0x6C, 0x6C, 0x6F, 0x2C, 0x20, 0x01, 0x00, 0xA9, 0x9B, 0x4B,
                                     0xCA, 0xDB, 0xFB, 0x24]
    static let zstdHelloText = "zstd says hello, zstd says hello"
    /// The start of a zstd frame asking for a 128 MiB window (`zstd --long=27`).
    static let zstdHugeWindow: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x88, 0x64, 0x00, 0x00, 0x10, 0x00, 0x00, 0x02, 0x00, 0xE9,
                                          0xFF, 0x37, 0x73, 0xE0, 0x01, 0x2C, 0x02, 0x00, 0x10, 0x00, 0x03, 0x9F, 0x04, 0x00, 0x2D]

    // MARK: - Plans

    func testTheFieldValueNamesWhatToUndo() {
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: nil), .identity)
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: ""), .identity)
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: " Identity "), .identity)
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: "GZIP"), .decode([CAFDEC_GZIP]))
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: "x-gzip"), .decode([CAFDEC_GZIP]))
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: "deflate, gzip"), .decode([CAFDEC_DEFLATE, CAFDEC_GZIP]))
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: "br,zstd"), .decode([CAFDEC_BROTLI, CAFDEC_ZSTD]))
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: "compress"), .passThrough, "unknown: delivered as received")
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: "gzip, sdch"), .passThrough, "one unknown coding hides the rest")
        XCTAssertEqual(ContentDecoder.plan(forContentEncoding: Array(repeating: "gzip", count: 6).joined(separator: ",")), .passThrough)
    }

    // MARK: - Each coding

    func testEachCodingIsUndone() throws {
        XCTAssertEqual(try decodeAll(Self.zlibHello, [CAFDEC_DEFLATE]), Data(Self.deflateHelloText.utf8))
        XCTAssertEqual(try decodeAll(Self.rawDeflateHello, [CAFDEC_DEFLATE]), Data(Self.deflateHelloText.utf8),
                       "deflate without its zlib wrapper, as some servers send it")
        XCTAssertEqual(try decodeAll(Self.brotliHello, [CAFDEC_BROTLI]), Data(Self.brotliHelloText.utf8))
        XCTAssertEqual(try decodeAll(Self.zstdHello, [CAFDEC_ZSTD]), Data(Self.zstdHelloText.utf8))
        XCTAssertEqual(try decodeAll(Self.gzipOfDeflate, [CAFDEC_DEFLATE, CAFDEC_GZIP]), Data("two codings, two codings".utf8))
    }

    func testEveryCodingWorksOneByteAtATime() throws {
        for (vector, kinds, text) in [(Self.zlibHello, [CAFDEC_DEFLATE], Self.deflateHelloText),
                                      (Self.rawDeflateHello, [CAFDEC_DEFLATE], Self.deflateHelloText),
                                      (Self.brotliHello, [CAFDEC_BROTLI], Self.brotliHelloText),
                                      (Self.zstdHello, [CAFDEC_ZSTD], Self.zstdHelloText),
                                      (Self.gzipOfDeflate, [CAFDEC_DEFLATE, CAFDEC_GZIP], "two codings, two codings")] {
            XCTAssertEqual(try decodeAll(vector, kinds, deliverySize: 1), Data(text.utf8), "\(kinds)")
        }
    }

    /// "deflate" with or without its zlib wrapper is told apart by its first
    /// two bytes, however the network cuts the body: a first delivery of one
    /// byte of raw deflate failed (-1016), the same bytes in one delivery decoded.
    func testRawDeflateIsRecognisedWhateverTheFirstDeliveryHolds() throws {
        for size in [1, 2, 3, 7, 64] {
            XCTAssertEqual(try decodeAll(Self.rawDeflateHello, [CAFDEC_DEFLATE], deliverySize: size), Data(Self.deflateHelloText.utf8),
                           "raw deflate in deliveries of \(size)")
            XCTAssertEqual(try decodeAll(Self.zlibHello, [CAFDEC_DEFLATE], deliverySize: size), Data(Self.deflateHelloText.utf8),
                           "zlib in deliveries of \(size)")
        }
        let oneByte = try XCTUnwrap(ContentDecoder(codings: [CAFDEC_DEFLATE]))
        let outcome = try [Self.rawDeflateHello[0]].withUnsafeBytes { raw in try oneByte.decode(raw) { _ in true } }
        XCTAssertEqual(outcome, .consumed, "held until the second byte says which")
        XCTAssertFalse(oneByte.isComplete, "one byte is no deflate stream")
    }

    func testConcatenatedGzipMembersAreOneBody() throws {
        let body = try GzipCommand.compress(Data("first ".utf8)) + GzipCommand.compress(Data("second".utf8))
        XCTAssertEqual(try decodeAll([UInt8](body), [CAFDEC_GZIP]), Data("first second".utf8))
    }

    // MARK: - Damage

    func testDamagedDataIsRefused() throws {
        XCTAssertThrowsError(try decodeAll([UInt8]("definitely not gzip".utf8), [CAFDEC_GZIP]))
        let memberThenGarbage = try [UInt8](GzipCommand.compress(Data("one".utf8))) + [0x1F, 0x8B, 0x08, 0x00] + [UInt8]("garbage-garbage".utf8)
        XCTAssertThrowsError(try decodeAll(memberThenGarbage, [CAFDEC_GZIP]))
        XCTAssertThrowsError(try decodeAll(Self.brotliHello + [0x00, 0x01], [CAFDEC_BROTLI]), "data after a brotli stream's end")
        XCTAssertThrowsError(try decodeAll([UInt8]("not zstd at all".utf8), [CAFDEC_ZSTD]))
        XCTAssertThrowsError(try decodeAll(Self.zlibHello + [0x42], [CAFDEC_DEFLATE]), "data after a deflate stream's end")
    }

    func testABodyCutShortInsideItsStreamIsIncomplete() throws {
        for (vector, kinds) in [(Self.zlibHello, [CAFDEC_DEFLATE]), (Self.brotliHello, [CAFDEC_BROTLI]),
                                (Self.zstdHello, [CAFDEC_ZSTD]), (Self.gzipOfDeflate, [CAFDEC_DEFLATE, CAFDEC_GZIP])] {
            let whole = try XCTUnwrap(ContentDecoder(codings: kinds))
            XCTAssertTrue(whole.isComplete, "nothing received: complete (a HEAD, a 304)")
            _ = try vector.withUnsafeBytes { raw in try whole.decode(raw) { _ in true } }
            XCTAssertTrue(whole.isComplete, "\(kinds)")
            let cut = try XCTUnwrap(ContentDecoder(codings: kinds))
            _ = try vector.dropLast(4).withUnsafeBytes { raw in try cut.decode(raw) { _ in true } }
            XCTAssertFalse(cut.isComplete, "\(kinds)")
        }
    }

    /// A frame may not make the decoder allocate a huge window (RFC 9659 lets
    /// HTTP clients refuse over 8 MiB; browsers do).
    func testAZstdWindowOverEightMiBIsRefused() {
        XCTAssertThrowsError(try decodeAll(Self.zstdHugeWindow, [CAFDEC_ZSTD]))
    }

    // MARK: - Bounded steps and pauses

    /// 64 MiB of zeros from ~64 KiB: no piece is larger than the step, and the
    /// whole expansion of one delivery is never made at once.
    func testABombComesOutInBoundedPieces() throws {
        let plain = Data(count: 64 << 20)
        let compressed = try GzipCommand.compress(plain)
        XCTAssertLessThan(compressed.count, 1 << 20)
        let decoder = try XCTUnwrap(ContentDecoder(codings: [CAFDEC_GZIP]))
        var total = 0, largest = 0, pieces = 0
        let outcome = try compressed.withUnsafeBytes { raw in
            try decoder.decode(raw) { piece in
                total += piece.count
                largest = max(largest, piece.count)
                pieces += 1
                return true
            }
        }
        XCTAssertEqual(outcome, .consumed)
        XCTAssertEqual(total, plain.count)
        XCTAssertLessThanOrEqual(largest, ContentDecoder.pieceSize)
        XCTAssertGreaterThanOrEqual(pieces, plain.count / ContentDecoder.pieceSize)
    }

    /// The owner declines pieces at random; curl hands the same delivery over
    /// again each time (as libcurl does after `CURL_WRITEFUNC_PAUSE`); the
    /// output is the input, exactly, and a declined piece is offered again first.
    func testADeclinedPieceIsOfferedAgainAndNothingIsLostOrRepeated() throws {
        var generator = SeededGenerator(seed: 0x5EED)
        var plain = Data(count: 3 << 20)
        plain.withUnsafeMutableBytes { bytes in
            for index in stride(from: 0, to: bytes.count, by: 4096) { bytes[index] = UInt8.random(in: 0...255, using: &generator) }
        }
        let compressed = [UInt8](try GzipCommand.compress(plain))
        let decoder = try XCTUnwrap(ContentDecoder(codings: [CAFDEC_GZIP]))
        var output = Data()
        var declines = 0
        var offset = 0
        var rounds = 0
        while offset < compressed.count {
            let delivery = Array(compressed[offset..<min(offset + 16 * 1024, compressed.count)])
            var outcome = ContentDecoder.Outcome.paused
            while outcome == .paused {
                rounds += 1
                XCTAssertLessThan(rounds, 100_000, "bounded")
                if rounds >= 100_000 { return }
                outcome = try delivery.withUnsafeBytes { raw in
                    try decoder.decode(raw) { piece in
                        if Bool.random(using: &generator) {
                            declines += 1
                            return false
                        }
                        output.append(contentsOf: piece)
                        return true
                    }
                }
            }
            offset += delivery.count
        }
        XCTAssertGreaterThan(declines, 10)
        XCTAssertEqual(output.count, plain.count)
        XCTAssertEqual(output, plain)
    }

    // MARK: - Helpers

    private func decodeAll(_ input: [UInt8], _ kinds: [cafdec_kind], deliverySize: Int = 1 << 16) throws -> Data {
        let decoder = try XCTUnwrap(ContentDecoder(codings: kinds))
        var output = Data()
        var offset = 0
        repeat {
            let delivery = Array(input[offset..<min(offset + deliverySize, input.count)])
            let outcome = try delivery.withUnsafeBytes { raw in
                try decoder.decode(raw) { piece in
                    output.append(contentsOf: piece)
                    return true
                }
            }
            XCTAssertEqual(outcome, .consumed)
            offset += delivery.count
        } while offset < input.count
        return output
    }
}
