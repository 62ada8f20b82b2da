import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// A multipart part's source must hold exactly the bytes it declared. One
/// that holds more (a file that grew after `appendPart`, an input stream
/// longer than its `length:`) was cut at the declared length and followed by
/// the closing boundary: the server took a truncated file as complete. Now
/// the body stream fails before the closing boundary, as it already did for
/// a source that runs short.
final class MultipartSourceLengthTests: MultipartTestCase {
    /// Reads `stream` in `chunk`-sized reads until it ends or fails (bounded):
    /// what it produced, and its error when a read returned -1.
    private func drainToEnd(_ stream: InputStream?, chunk: Int = 4096) -> (produced: Data, error: NSError?) {
        guard let stream = stream else {
            XCTFail("no stream")
            return (Data(), nil)
        }
        stream.open()
        defer { stream.close() }
        var produced = Data()
        var buffer = [UInt8](repeating: 0, count: chunk)
        // A body of a few hundred bytes ends in far fewer reads, even one byte at a time.
        for _ in 0..<10_000 {
            let count = stream.read(&buffer, maxLength: chunk)
            if count < 0 { return (produced, stream.streamError.map { $0 as NSError }) }
            if count == 0 { return (produced, nil) }
            produced.append(contentsOf: buffer[0..<count])
        }
        XCTFail("the stream never ended")
        return (produced, nil)
    }

    private func boundary(of request: URLRequest) -> String {
        let type = request.value(forHTTPHeaderField: "Content-Type") ?? ""
        return type.components(separatedBy: "boundary=").last ?? ""
    }

    /// A fresh, unread copy of the request's body stream.
    private func freshBody(of request: URLRequest) -> InputStream? {
        (request.httpBodyStream as? MultipartBodyStream)?.copy() as? InputStream
    }

    /// The stream failed with `NSURLErrorRequestBodyStreamExhausted` and never
    /// produced the closing boundary: a server cannot take the body as complete.
    private func assertFailsBeforeClosing(_ outcome: (produced: Data, error: NSError?), boundary: String, _ what: String,
                                          file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(outcome.error?.domain, AFURLRequestSerializationErrorDomain, what, file: file, line: line)
        XCTAssertEqual(outcome.error?.code, NSURLErrorRequestBodyStreamExhausted, what, file: file, line: line)
        XCTAssertNil(outcome.produced.range(of: Data("--\(boundary)--".utf8)), "\(what): no closing boundary", file: file, line: line)
    }

    func testAFileThatGrewAfterAppendingFailsTheBody() throws {
        let fileURL = try file("grows.bin", Data(repeating: 1, count: 10))
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            try form.appendPart(withFileURL: fileURL, name: "f")
        }
        try Data(repeating: 2, count: 20).write(to: fileURL)
        // Whole reads, one byte at a time, and sizes that end the part in the
        // middle of a read or exactly at its end.
        for chunk in [4096, 1, 7, 64] {
            let outcome = drainToEnd(freshBody(of: request), chunk: chunk)
            assertFailsBeforeClosing(outcome, boundary: boundary(of: request), "chunk \(chunk)")
            XCTAssertTrue(outcome.error?.localizedDescription.contains("more than its declared 10 bytes") ?? false,
                          outcome.error?.localizedDescription ?? "no error")
        }
    }

    func testAFileThatGrewFailsAlsoWhenOtherPartsFollow() throws {
        let fileURL = try file("grows.bin", Data(repeating: 1, count: 10))
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload",
                                                          parameters: ["after": "field"]) { form in
            try form.appendPart(withFileURL: fileURL, name: "f")
            form.appendPart(withForm: Data("last".utf8), name: "last")
        }
        try Data(repeating: 2, count: 11).write(to: fileURL)
        let outcome = drainToEnd(freshBody(of: request))
        assertFailsBeforeClosing(outcome, boundary: boundary(of: request), "a part follows")
    }

    func testAStreamLongerThanItsLengthFailsTheBody() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            form.appendPart(with: InputStream(data: Data(repeating: 3, count: 20)), name: "s", fileName: "s.bin",
                            length: 10, mimeType: "application/octet-stream")
        }
        let outcome = drainToEnd(request.httpBodyStream)
        assertFailsBeforeClosing(outcome, boundary: boundary(of: request), "a longer stream")
    }

    func testAStreamPartOfLengthZeroWithBytesFailsTheBody() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            form.appendPart(with: InputStream(data: Data("x".utf8)), name: "s", fileName: "s.bin", length: 0, mimeType: "x/y")
        }
        assertFailsBeforeClosing(drainToEnd(request.httpBodyStream), boundary: boundary(of: request), "length 0")
    }

    func testAFileThatShrankAfterAppendingFailsTheBody() throws {
        let fileURL = try file("shrinks.bin", Data(repeating: 1, count: 20))
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            try form.appendPart(withFileURL: fileURL, name: "f")
        }
        try Data(repeating: 2, count: 10).write(to: fileURL)
        for chunk in [4096, 1] {
            let outcome = drainToEnd(freshBody(of: request), chunk: chunk)
            assertFailsBeforeClosing(outcome, boundary: boundary(of: request), "shrank, chunk \(chunk)")
        }
        try Data().write(to: fileURL)
        assertFailsBeforeClosing(drainToEnd(freshBody(of: request)), boundary: boundary(of: request), "emptied")
    }

    /// Sources of exactly their declared length still make a whole body of
    /// exactly the announced `Content-Length`, empty ones included.
    func testSourcesOfTheirExactLengthStillMakeTheWholeBody() throws {
        let fileURL = try file("exact.bin", Data(repeating: 5, count: 10))
        let empty = try file("empty.bin", Data())
        for chunk in [4096, 1, 3] {
            // Made anew for each drain: an input stream part is read once.
            let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
                try form.appendPart(withFileURL: fileURL, name: "f")
                try form.appendPart(withFileURL: empty, name: "e")
                form.appendPart(with: InputStream(data: Data("12345".utf8)), name: "s", fileName: "s", length: 5, mimeType: "x/y")
                form.appendPart(with: InputStream(data: Data()), name: "z", fileName: "z", length: 0, mimeType: "x/y")
                form.appendPart(with: nil, name: "n", fileName: "n", length: 0, mimeType: "x/y")
            }
            let outcome = drainToEnd(request.httpBodyStream, chunk: chunk)
            XCTAssertNil(outcome.error, "chunk \(chunk)")
            XCTAssertEqual(String(outcome.produced.count), request.value(forHTTPHeaderField: "Content-Length"), "chunk \(chunk)")
            let closing = Data("\r\n--\(boundary(of: request))--\r\n".utf8)
            XCTAssertEqual(outcome.produced.suffix(closing.count), closing, "chunk \(chunk)")
        }
    }
}
