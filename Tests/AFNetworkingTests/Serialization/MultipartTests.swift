import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

final class MultipartTests: MultipartTestCase {
    /// Reads a stream to its end in `chunk`-sized reads, failing the test on a stream error.
    private func drain(_ stream: InputStream?, chunk: Int = 4096, maxReadSeen: UnsafeMutablePointer<Int>? = nil) -> Data {
        guard let stream = stream else { XCTFail("no stream"); return Data() }
        stream.open()
        defer { stream.close() }
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = stream.read(&buffer, maxLength: chunk)
            if count < 0 { XCTFail("stream error \(String(describing: stream.streamError))"); break }
            if count == 0 { break }
            maxReadSeen?.pointee = max(maxReadSeen?.pointee ?? 0, count)
            result.append(contentsOf: buffer[0..<count])
        }
        return result
    }

    private func boundary(of request: URLRequest) -> String {
        let type = request.value(forHTTPHeaderField: "Content-Type") ?? ""
        return type.components(separatedBy: "boundary=").last ?? ""
    }

    // 2.7: testThatAFHTTPRequestSerialiationSerializesMIMETypeCorrectly (adn_0.cer)
    func testMIMETypeFromExtensionFollowsApple() throws {
        XCTAssertEqual(MIMETypes.mimeType(forPathExtension: "cer"), "application/x-x509-ca-cert")
        XCTAssertEqual(MIMETypes.mimeType(forPathExtension: "PNG"), "image/png")
        XCTAssertEqual(MIMETypes.mimeType(forPathExtension: "nosuchext"), "application/octet-stream")
        let form = StreamingMultipartFormData()
        try form.appendPart(withFileURL: try file("adn_0.cer", Data([0x30, 0x82])), name: "test")
        let headers = form.parts.first?.headers ?? []
        XCTAssertEqual(headers.first { $0.0 == "Content-Type" }?.1, "application/x-x509-ca-cert")
        XCTAssertEqual(headers.first { $0.0 == "Content-Disposition" }?.1, "form-data; name=\"test\"; filename=\"adn_0.cer\"")
    }

    func testBodyMatchesContentLengthAndLayout() throws {
        let fileURL = try file("notes.txt", Data("file body".utf8))
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload",
                                                          parameters: ["field": "value", "n": 1]) { form in
            try form.appendPart(withFileURL: fileURL, name: "doc")
            form.appendPart(withFileData: Data("abc".utf8), name: "blob", fileName: "b.bin", mimeType: "application/octet-stream")
            form.appendPart(with: InputStream(data: Data("streamed".utf8)), name: "s", fileName: "s.txt", length: 8, mimeType: "text/plain")
            form.appendPart(withHeaders: ["X-Custom": "yes"], body: Data("raw".utf8))
        }
        let b = boundary(of: request)
        XCTAssertTrue(b.hasPrefix("Boundary+"))
        XCTAssertNil(request.httpBody)
        let body = drain(request.httpBodyStream)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Length"), String(body.count))
        let expected = "--\(b)\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue"
            + "\r\n--\(b)\r\nContent-Disposition: form-data; name=\"n\"\r\n\r\n1"
            + "\r\n--\(b)\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"notes.txt\"\r\nContent-Type: text/plain\r\n\r\nfile body"
            + "\r\n--\(b)\r\nContent-Disposition: form-data; name=\"blob\"; filename=\"b.bin\"\r\nContent-Type: application/octet-stream\r\n\r\nabc"
            + "\r\n--\(b)\r\nContent-Disposition: form-data; name=\"s\"; filename=\"s.txt\"\r\nContent-Type: text/plain\r\n\r\nstreamed"
            + "\r\n--\(b)\r\nX-Custom: yes\r\n\r\nraw"
            + "\r\n--\(b)--\r\n"
        XCTAssertEqual(String(data: body, encoding: .utf8), expected)
    }

    /// A CR, LF or NUL that could inject a header or part is refused; they
    /// were stripped, so the part went out with other headers than asked for.
    /// A `"` is still percent-encoded, as browsers do.
    func testNamesCannotInjectHeadersOrParts() throws {
        let blocks: [(String, @Sendable (MultipartFormData) throws -> Void)] = [
            ("name", { $0.appendPart(withFileData: Data("x".utf8), name: "a\"\r\nX-Evil: 1", fileName: "f", mimeType: "text/plain") }),
            ("file name", { $0.appendPart(withFileData: Data("x".utf8), name: "a", fileName: "f\r\n--Boundary\"", mimeType: "text/plain") }),
            ("MIME type", { $0.appendPart(withFileData: Data("x".utf8), name: "a", fileName: "f", mimeType: "text/plain\r\nX-Evil: 2") }),
            ("header name", { $0.appendPart(withHeaders: ["X-H\r\nX-Evil": "v"], body: Data()) }),
            ("header value", { $0.appendPart(withHeaders: ["X-H": "v\r\n\r\nbody"], body: Data()) }),
        ]
        for (what, block) in blocks {
            let error = assertThrowsNSError(try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com",
                                                                                parameters: nil, constructingBodyWith: block))
            XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain, what)
            XCTAssertEqual(error?.code, NSURLErrorBadURL, what)
        }
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            form.appendPart(withFileData: Data("x".utf8), name: "a\"b", fileName: "f\"\u{FC}.txt", mimeType: "text/plain")
        }
        let text = String(data: drain(request.httpBodyStream), encoding: .utf8) ?? ""
        XCTAssertTrue(text.contains("name=\"a%22b\"; filename=\"f%22\u{FC}.txt\""), text)
    }

    func testFileErrorsAreThrownAtAppendTime() throws {
        let form = StreamingMultipartFormData()
        let missing = assertThrowsNSError(try form.appendPart(withFileURL: directory.appendingPathComponent("missing.png"), name: "f"))
        XCTAssertEqual(missing?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(missing?.code, NSURLErrorBadURL)
        XCTAssertThrowsError(try form.appendPart(withFileURL: URL(string: "http://example.com/a.png")!, name: "f"))
        XCTAssertThrowsError(try form.appendPart(withFileURL: directory, name: "f"))
        let nope = directory.appendingPathComponent("nope")
        XCTAssertThrowsError(try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            try form.appendPart(withFileURL: nope, name: "f")
        })
        XCTAssertThrowsError(try serializer.multipartFormRequest(withMethod: "GET", urlString: "http://example.com", parameters: nil, constructingBodyWith: nil))
    }

    /// A symbolic link is followed, as reading the part does: the part is the
    /// whole target and the Content-Length counts all of it. (Sized with
    /// lstat(2), the part was the link's own length: the body was cut short
    /// to the first few dozen bytes of the file, without an error.)
    func testALinkedFileIsSentWhole() throws {
        let contents = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        let target = try file("target.bin", contents)
        let link = directory.appendingPathComponent("link.bin")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let form = StreamingMultipartFormData()
        try form.appendPart(withFileURL: link, name: "f")
        XCTAssertEqual(form.parts.first?.bodyLength, 1000, "the target's length, not the link's")

        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            try form.appendPart(withFileURL: link, name: "file", fileName: "link.bin", mimeType: "application/octet-stream")
        }
        let body = drain(request.httpBodyStream)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Length"), String(body.count))
        let b = boundary(of: request)
        let head = "--\(b)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"link.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        XCTAssertEqual(body, Data(head.utf8) + contents + Data("\r\n--\(b)--\r\n".utf8))
    }

    /// What is not a regular file once links are followed is refused when the
    /// part is appended: a link to a directory (it passed the directory check
    /// and failed only while sending), a FIFO (its part was 0 bytes long) and
    /// a link to nothing.
    func testALinkToADirectoryAFIFOAndADanglingLinkAreRefused() throws {
        let folder = directory.appendingPathComponent("folder")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let toFolder = directory.appendingPathComponent("folder-link")
        try FileManager.default.createSymbolicLink(at: toFolder, withDestinationURL: folder)
        let fifo = directory.appendingPathComponent("fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0, "mkfifo: errno \(errno)")
        let dangling = directory.appendingPathComponent("dangling")
        try FileManager.default.createSymbolicLink(atPath: dangling.path, withDestinationPath: directory.appendingPathComponent("gone").path)

        let form = StreamingMultipartFormData()
        let linked = assertThrowsNSError(try form.appendPart(withFileURL: toFolder, name: "f"))
        XCTAssertEqual(linked?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(linked?.code, NSURLErrorBadURL)
        XCTAssertEqual(linked?.localizedDescription, "File URL is a directory.")
        let special = assertThrowsNSError(try form.appendPart(withFileURL: fifo, name: "f"))
        XCTAssertEqual(special?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(special?.code, NSURLErrorBadURL)
        XCTAssertEqual(special?.localizedDescription, "File URL is not a regular file.")
        let nothing = assertThrowsNSError(try form.appendPart(withFileURL: dangling, name: "f"))
        XCTAssertEqual(nothing?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(nothing?.code, NSURLErrorBadURL)
        XCTAssertTrue(form.parts.isEmpty)
        XCTAssertThrowsError(try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            try form.appendPart(withFileURL: toFolder, name: "f")
        })
    }

    func testFilesAreStreamedOneChunkAtATime() throws {
        var contents = Data(count: 1 << 20)
        for index in stride(from: 0, to: contents.count, by: 997) { contents[index] = UInt8(index % 251) }
        let fileURL = try file("big.bin", contents)
        let request = try serializer.multipartFormRequest(withMethod: "PUT", urlString: "http://example.com", parameters: nil) { form in
            try form.appendPart(withFileURL: fileURL, name: "big")
        }
        guard let stream = request.httpBodyStream as? MultipartBodyStream else { return XCTFail("not a multipart stream") }
        let body = drain(stream, chunk: 4096)
        XCTAssertLessThanOrEqual(stream.largestFileChunk, 4096)
        XCTAssertEqual(Int64(body.count), stream.contentLength)
        XCTAssertEqual(String(body.count), request.value(forHTTPHeaderField: "Content-Length"))
        XCTAssertNotNil(body.range(of: contents))
    }

    func testStreamCopyRebuildsTheBodyForResending() throws {
        let fileURL = try file("a.txt", Data("again".utf8))
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: ["k": "v"]) { form in
            try form.appendPart(withFileURL: fileURL, name: "f")
        }
        guard let stream = request.httpBodyStream as? MultipartBodyStream else { return XCTFail("not a multipart stream") }
        let first = drain(stream)
        let second = drain(stream.copy() as? InputStream)
        XCTAssertEqual(first, second)
        XCTAssertFalse(first.isEmpty)
    }

    func testThrottlingLimitsEachRead() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            form.appendPart(withFileData: Data(repeating: 7, count: 1000), name: "d", fileName: "d", mimeType: "x/y")
            form.throttleBandwidth(withPacketSize: 100, delay: 0)
        }
        var largest = 0
        let body = drain(request.httpBodyStream, chunk: 4096, maxReadSeen: &largest)
        XCTAssertEqual(largest, 100)
        XCTAssertEqual(String(body.count), request.value(forHTTPHeaderField: "Content-Length"))
    }

    /// A packet size of 0 or less, or a negative or non-finite delay, is no
    /// throttling, and undoes an earlier throttle. A packet size of 0 became
    /// 1 byte per read: with 3G's 0.2 s between reads, 5 bytes a second.
    func testAThrottleWithoutARateIsNoThrottle() throws {
        let settings: [(Int, TimeInterval)] = [(0, kAFUploadStream3GSuggestedDelay), (-1, 0.2), (Int.min, 0), (100, -1), (100, .infinity), (100, .nan)]
        for (size, delay) in settings {
            let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
                form.appendPart(withFileData: Data(repeating: 7, count: 10_000), name: "d", fileName: "d", mimeType: "x/y")
                form.throttleBandwidth(withPacketSize: 100, delay: 1)
                form.throttleBandwidth(withPacketSize: size, delay: delay)
            }
            guard let stream = request.httpBodyStream as? MultipartBodyStream else { return XCTFail("not a multipart stream") }
            XCTAssertNil(stream.throttle, "\(size), \(delay)")
            var largest = 0
            let body = drain(stream, chunk: 4096, maxReadSeen: &largest)
            XCTAssertEqual(largest, 4096, "\(size), \(delay): reads are not limited")
            XCTAssertEqual(String(body.count), request.value(forHTTPHeaderField: "Content-Length"))
        }
    }

    func testShortInputStreamFailsInsteadOfLyingAboutLength() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            form.appendPart(with: InputStream(data: Data("short".utf8)), name: "s", fileName: "s", length: 50, mimeType: "x/y")
        }
        guard let stream = request.httpBodyStream else { return XCTFail("no stream") }
        stream.open()
        var buffer = [UInt8](repeating: 0, count: 1024)
        var result = 0
        for _ in 0..<10 {
            result = stream.read(&buffer, maxLength: buffer.count)
            if result <= 0 { break }
        }
        XCTAssertEqual(result, -1)
        XCTAssertNotNil(stream.streamError)
    }

    func testNoPartsLeavesAFormRequest() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil, constructingBodyWith: nil)
        XCTAssertNil(request.httpBodyStream)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded")
    }

    func testWritingStreamContentsToFile() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: ["a": "b"]) { form in
            form.appendPart(withFileData: Data(repeating: 1, count: 200_000), name: "d", fileName: "d.bin", mimeType: "x/y")
        }
        let target = directory.appendingPathComponent("body.out")
        let done = expectation(description: "written")
        let writeError = Locked<Error?>(nil)
        let stripped = serializer.request(withMultipartForm: request, writingStreamContentsToFile: target) { error in
            writeError.value = error
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        XCTAssertNil(writeError.value)
        XCTAssertNil(stripped.httpBodyStream)
        let written = try Data(contentsOf: target)
        XCTAssertEqual(String(written.count), request.value(forHTTPHeaderField: "Content-Length"))
        XCTAssertEqual(written, drain(request.httpBodyStream))
    }
}
