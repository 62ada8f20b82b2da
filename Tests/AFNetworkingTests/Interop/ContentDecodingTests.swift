@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Content codings undone by the library (issue 15, item 8; issue 19's
/// "unknown content codings delivered as received"): gzip, deflate, br and
/// zstd from a real server, for operations and session tasks; an unknown
/// coding passed through with its field; and a gzip bomb into a stream that
/// keeps the process's memory flat, because the decoder stops where the
/// writer's back-pressure pauses it instead of libcurl buffering the expansion.
final class ContentDecodingTests: SessionTasksTestCase {
    private static let codings: [(name: String, body: [UInt8], text: String)] = [
        ("deflate", ContentDecoderTests.zlibHello, ContentDecoderTests.deflateHelloText),
        ("br", ContentDecoderTests.brotliHello, ContentDecoderTests.brotliHelloText),
        ("zstd", ContentDecoderTests.zstdHello, ContentDecoderTests.zstdHelloText),
        ("deflate, gzip", ContentDecoderTests.gzipOfDeflate, "two codings, two codings"),
    ]

    func testEachAdvertisedCodingIsDecodedForAnOperation() {
        for (index, coding) in Self.codings.enumerated() {
            server.respond("/coded\(index)", headers: [("Content-Encoding", coding.name)], body: Data(coding.body))
            let (operation, outcome) = get("/coded\(index)")
            XCTAssertNil(outcome.error, coding.name)
            XCTAssertEqual(operation.responseString, coding.text, coding.name)
            XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Encoding"), coding.name,
                           "the head says what the server sent")
        }
        let advertised = server.requests.last?.headers.first(name: "accept-encoding") ?? ""
        XCTAssertEqual(Set(advertised.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }),
                       ["gzip", "deflate", "br", "zstd"])
    }

    func testEachCodingIsDecodedForASessionDataTask() {
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        for (index, coding) in Self.codings.enumerated() {
            server.respond("/task\(index)", headers: [("Content-Encoding", coding.name)], body: Data(coding.body))
            let probe = makeProbe()
            let task = manager.dataTask(with: request("/task\(index)"), uploadProgress: nil, downloadProgress: nil,
                                        completionHandler: probe.data)
            let outcome = run(task, probe)
            XCTAssertNil(outcome.error, coding.name)
            XCTAssertEqual((outcome.object as? Data).map { String(decoding: $0, as: UTF8.self) }, coding.text, coding.name)
        }
    }

    /// RFC 9110 §8.4: a coding the client does not know leaves the body as it
    /// is; browsers deliver it with the field. (libcurl failed the request
    /// with "Unrecognized content encoding".)
    func testAnUnknownCodingIsDeliveredAsReceived() {
        let body = Data([0x1F, 0x9D, 0x90, 0x68, 0x00])
        server.respond("/compress", headers: [("Content-Encoding", "compress")], body: body)
        let (operation, outcome) = get("/compress")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData, body)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Encoding"), "compress")
    }

    /// Damaged data, and a body that ends inside its compressed stream
    /// (complete by its Content-Length, cut short in what it holds): not a
    /// complete body, whatever the framing said.
    func testDamagedOrCutShortCodedBodiesAreDecodingErrors() throws {
        server.respond("/cutbr", headers: [("Content-Encoding", "br")], body: Data(ContentDecoderTests.brotliHello.prefix(10)))
        server.respond("/cutgzip", headers: [("Content-Encoding", "gzip")], body: try gzipZeros(count: 100_000).dropLast(8))
        server.respond("/badzstd", headers: [("Content-Encoding", "zstd")], body: Data(ContentDecoderTests.zstdHugeWindow))
        server.respond("/baddeflate", headers: [("Content-Encoding", "deflate")], body: Data("plain text, not deflate".utf8))
        for path in ["/cutbr", "/cutgzip", "/badzstd", "/baddeflate"] {
            let (_, outcome) = get(path)
            XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain, path)
            XCTAssertEqual(outcome.error?.code, NSURLErrorCannotDecodeContentData, path)
        }
    }

    /// Raw deflate (no zlib wrapper) whose first byte arrives alone: the
    /// decoder waits for the second to tell the formats apart. It failed
    /// with -1016, while the same bytes in one delivery decoded.
    func testRawDeflateWhoseFirstByteArrivesAloneIsDecoded() {
        let raw = Data(ContentDecoderTests.rawDeflateHello)
        server.route("/rawdeflate") { _ in
            [.head(status: 200, headers: [("Content-Encoding", "deflate"), ("Content-Length", "\(raw.count)")]),
             .body(raw.prefix(1)), .wait(0.1), .body(raw.dropFirst()), .end]
        }
        let (operation, outcome) = get("/rawdeflate")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseString, ContentDecoderTests.deflateHelloText)
    }

    /// Content-Length counts the coded bytes; progress counts decoded ones
    /// (920,000 of 50,170). The expected total is unknown (-1) instead, as the
    /// resume data already said.
    func testDownloadProgressOfACodedBodyHasNoExpectedTotal() throws {
        let plain = Data(String(repeating: "progress ", count: 20_000).utf8)
        let coded = try GzipCommand.compress(plain)
        server.respond("/codedprogress", headers: [("Content-Encoding", "gzip")], body: coded)
        let operation = HTTPRequestOperation(request: request("/codedprogress"))
        let totals = Locked<[Int64]>([])
        let expected = Locked<[Int64]>([])
        operation.setDownloadProgressBlock { _, total, expectedTotal in
            totals.append(total)
            expected.append(expectedTotal)
        }
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseData, plain)
        XCTAssertTrue(spin(until: { totals.value.last == Int64(plain.count) }), "progress counts the decoded bytes")
        XCTAssertFalse(expected.value.isEmpty)
        XCTAssertTrue(expected.value.allSatisfy { $0 == -1 }, "not the coded length \(coded.count): \(Set(expected.value))")
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Length"), "\(coded.count)", "the head still says it")
    }

    func testAHeadAnswerWithACodingAndNoBodySucceeds() {
        server.respond("/head", headers: [("Content-Encoding", "gzip")], body: Data())
        var request = request("/head")
        request.httpMethod = "HEAD"
        let outcome = run(HTTPRequestOperation(request: request))
        XCTAssertNil(outcome.error)
    }

    /// 256 MiB of zeros in ~256 KiB of gzip, written to a stream: the peak
    /// resident size grows by what the writer may hold (1 MiB) and the
    /// decoder's steps, not by the expansion. Before, libcurl decoded each
    /// 64 KiB read in one go and kept what a paused writer did not take:
    /// +33 MiB here (+1.5 MiB now).
    func testAGzipBombIntoAStreamKeepsMemoryFlat() throws {
        let plainSize = 256 << 20
        let compressed = try gzipZeros(count: plainSize)
        server.respond("/bomb", headers: [("Content-Encoding", "gzip"), ("Content-Type", "application/octet-stream")],
                       body: compressed)
        // A first, small exchange the same way, so one-time costs (threads,
        // curl's handles, the writer's queue) are not counted.
        server.respond("/warm", headers: [("Content-Encoding", "gzip")], body: try gzipZeros(count: 1 << 20))
        let warmUp = HTTPRequestOperation(request: request("/warm"))
        warmUp.outputStream = RecordingOutputStream(keepsData: false)
        XCTAssertNil(run(warmUp).error)
        // A writer slower than decoding, so back-pressure pauses the transfer
        // again and again in the middle of a read's expansion.
        let counter = RecordingOutputStream(delayPerWrite: 0.000_2, keepsData: false)
        let operation = HTTPRequestOperation(request: request("/bomb", timeout: 60))
        operation.outputStream = counter
        try PeakMemory.reset()
        let before = try PeakMemory.residentKiB()
        let outcome = run(operation, timeout: 120)
        let peak = try PeakMemory.peakKiB()
        XCTAssertNil(outcome.error)
        XCTAssertEqual(counter.byteCount.value, plainSize, "every decoded byte reached the stream")
        XCTAssertLessThan(peak - before, 8 * 1024, "peak resident growth in KiB")
    }

    private func gzipZeros(count: Int) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "head -c \(count) /dev/zero | gzip -c -n -9"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let result = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        return result
    }
}

/// The process's peak resident set size, from /proc (Linux ≥ 4.0 lets a
/// process reset its own peak by writing 5 to clear_refs).
enum PeakMemory {
    static func reset() throws {
        try "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    static func residentKiB() throws -> Int { try field("VmRSS") }
    static func peakKiB() throws -> Int { try field("VmHWM") }

    private static func field(_ name: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }),
              let value = line.split(separator: " ").dropFirst().first(where: { Int($0) != nil }).flatMap({ Int($0) }) else {
            throw CocoaError(.fileReadCorruptFile)
        }
        return value
    }
}
