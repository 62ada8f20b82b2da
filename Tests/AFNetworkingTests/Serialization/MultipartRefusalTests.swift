import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// A part the multipart form cannot send as given is refused, never changed:
/// the append methods that cannot throw record the problem, and
/// `multipartFormRequest` throws it after the block has run
/// (`NSURLErrorBadURL` in `AFURLRequestSerializationErrorDomain`).
final class MultipartRefusalTests: XCTestCase {
    let serializer = HTTPRequestSerializer()
    let urlString = "http://example.com/upload"

    /// `build` throws the multipart refusal, whose message contains `mention`.
    private func assertRefused(_ build: @autoclosure () throws -> URLRequest, mentioning mention: String, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        let error = assertThrowsNSError(try build(), file: file, line: line)
        XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain, what, file: file, line: line)
        XCTAssertEqual(error?.code, NSURLErrorBadURL, what, file: file, line: line)
        let message = error?.localizedDescription ?? ""
        XCTAssertTrue(message.contains(mention), "\(what): \(message)", file: file, line: line)
        XCTAssertNotNil(error?.userInfo[AFNetworkingOperationFailingURLRequestErrorKey], "\(what): the request", file: file, line: line)
    }

    /// A negative length (-1 for "unknown") was sent as an empty part.
    func testAStreamPartWithANegativeLengthIsRefused() {
        for length: Int64 in [-1, -100, .min] {
            assertRefused(try serializer.multipartFormRequest(withMethod: "POST", urlString: urlString, parameters: nil) { form in
                form.appendPart(with: InputStream(data: Data("abc".utf8)), name: "s", fileName: "s.bin", length: length, mimeType: "x/y")
            }, mentioning: "\"s\" has the length \(length)", "length \(length)")
        }
    }

    /// The first problem is kept and the refused part is left out.
    func testTheFirstProblemIsKeptAndTheRefusedPartLeftOut() {
        let form = StreamingMultipartFormData()
        form.appendPart(withForm: Data("v".utf8), name: "kept")
        form.appendPart(with: nil, name: "a", fileName: "a", length: -1, mimeType: "x/y")
        form.appendPart(with: nil, name: "b", fileName: "b", length: -2, mimeType: "x/y")
        XCTAssertEqual(form.parts.count, 1)
        XCTAssertTrue(form.problem?.localizedDescription.contains("\"a\"") ?? false, form.problem?.localizedDescription ?? "no problem")
    }

    /// A CR, LF or NUL in a name, file name or MIME type, through every
    /// append method (they were stripped or percent-encoded, so the part went
    /// out under another name than asked for).
    func testALineBreakOrNULInANameFileNameOrMIMETypeIsRefused() {
        for bad in ["a\r\nX-Evil: 1", "a\rb", "a\nb", "a\u{0}b"] {
            let blocks: [(String, @Sendable (MultipartFormData) throws -> Void)] = [
                ("form name", { $0.appendPart(withForm: Data("v".utf8), name: bad) }),
                ("data name", { $0.appendPart(withFileData: Data("v".utf8), name: bad, fileName: "f", mimeType: "x/y") }),
                ("data file name", { $0.appendPart(withFileData: Data("v".utf8), name: "n", fileName: bad, mimeType: "x/y") }),
                ("data MIME type", { $0.appendPart(withFileData: Data("v".utf8), name: "n", fileName: "f", mimeType: bad) }),
                ("stream name", { $0.appendPart(with: InputStream(data: Data("v".utf8)), name: bad, fileName: "f", length: 1, mimeType: "x/y") }),
                ("stream file name", { $0.appendPart(with: InputStream(data: Data("v".utf8)), name: "n", fileName: bad, length: 1, mimeType: "x/y") }),
                ("stream MIME type", { $0.appendPart(with: InputStream(data: Data("v".utf8)), name: "n", fileName: "f", length: 1, mimeType: bad) }),
            ]
            for (what, block) in blocks {
                let mention = what.hasSuffix("MIME type") ? "MIME type" : "CR, LF or NUL"
                assertRefused(try serializer.multipartFormRequest(withMethod: "POST", urlString: urlString, parameters: nil, constructingBodyWith: block),
                              mentioning: mention, "\(what) \(bad.debugDescription)")
            }
        }
    }

    /// The file-URL methods can throw, so they throw at once and append nothing.
    func testTheFileURLMethodsThrowAtOnce() throws {
        let fileURL = FileManager.default.temporaryDirectory.appendingPathComponent("afn-refusal-\(UUID().uuidString).txt")
        try Data("file".utf8).write(to: fileURL)
        defer { try? FileManager.default.removeItem(at: fileURL) }
        let form = StreamingMultipartFormData()
        for (name, fileName, mimeType) in [("a\r\nb", "f", "x/y"), ("n", "f\nx", "x/y"), ("n", "f", "x/y\u{0}")] {
            let error = assertThrowsNSError(try form.appendPart(withFileURL: fileURL, name: name, fileName: fileName, mimeType: mimeType))
            XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain)
            XCTAssertEqual(error?.code, NSURLErrorBadURL)
        }
        XCTAssertThrowsError(try form.appendPart(withFileURL: fileURL, name: "a\nb"))
        XCTAssertTrue(form.parts.isEmpty)
        XCTAssertNil(form.problem, "thrown, not recorded")
    }

    /// Header names must be tokens and values free of CR, LF and NUL; a
    /// value is never quoted in the message (it may be a credential).
    func testCustomHeadersMustBeSendableAsTheyAre() {
        for name in ["", "X H", "X:H", "X-H\r\nX-Evil", "X-\u{FC}", "X\u{0}"] {
            assertRefused(try serializer.multipartFormRequest(withMethod: "POST", urlString: urlString, parameters: nil) { form in
                form.appendPart(withHeaders: [name: "v"], body: Data())
            }, mentioning: "invalid name", "name \(name.debugDescription)")
        }
        for value in ["s3cr3t\r\nX-Evil: 1", "s3cr3t\n", "s3cr3t\r", "s3cr3t\u{0}"] {
            let error = assertThrowsNSError(try serializer.multipartFormRequest(withMethod: "POST", urlString: urlString, parameters: nil) { form in
                form.appendPart(withHeaders: ["Authorization": value], body: Data())
            })
            XCTAssertEqual(error?.code, NSURLErrorBadURL, value.debugDescription)
            let message = error?.localizedDescription ?? ""
            XCTAssertTrue(message.contains("\"Authorization\" has an invalid value"), message)
            XCTAssertFalse(message.contains("s3cr3t"), "the value is not quoted")
        }
    }

    /// Valid custom headers, quotes and non-ASCII text are sent as before.
    func testValidHeadersQuotesAndNonASCIIAreSent() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: urlString, parameters: ["na\"me": "v"]) { form in
            form.appendPart(withHeaders: ["Content-Disposition": "form-data; name=\"h\"", "X-Tab": "a,\tb \u{FC}"], body: Data("raw".utf8))
            form.appendPart(withFileData: Data("x".utf8), name: "\u{FC}", fileName: "r\u{E9}sum\u{E9} \"1\".txt", mimeType: "text/plain")
        }
        guard let stream = request.httpBodyStream else { return XCTFail("no body") }
        stream.open()
        defer { stream.close() }
        var body = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<1000 {
            let count = stream.read(&buffer, maxLength: buffer.count)
            guard count > 0 else { break }
            body.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: body, as: UTF8.self)
        XCTAssertTrue(text.contains("name=\"na%22me\""), text)
        XCTAssertTrue(text.contains("Content-Disposition: form-data; name=\"h\"\r\nX-Tab: a,\tb \u{FC}\r\n\r\nraw"), text)
        XCTAssertTrue(text.contains("name=\"\u{FC}\"; filename=\"r\u{E9}sum\u{E9} %221%22.txt\""), text)
        XCTAssertEqual(String(body.count), request.value(forHTTPHeaderField: "Content-Length"))
    }

    /// A parameter whose name the form refuses fails before the block runs.
    func testAParameterNameWithALineBreakIsRefusedBeforeTheBlock() {
        let ran = Locked(false)
        assertRefused(try serializer.multipartFormRequest(withMethod: "POST", urlString: urlString, parameters: ["a\r\nb": "v"]) { _ in
            ran.value = true
        }, mentioning: "CR, LF or NUL", "parameter name")
        XCTAssertFalse(ran.value, "the block did not run")
    }

    /// The manager's multipart POST hands the refusal to its failure block
    /// without making an operation.
    func testAManagerHandsTheRefusalToItsFailureBlock() {
        let manager = HTTPRequestOperationManager(baseURL: URL(string: "http://127.0.0.1:9/")!)
        manager.completionQueue = .global()
        let failed = expectation(description: "failure")
        let received = Locked<NSError?>(nil)
        let operation = manager.post("upload", parameters: nil, constructingBodyWith: { form in
            form.appendPart(with: nil, name: "s", fileName: "s", length: -1, mimeType: "x/y")
        }, success: nil) { _, error in
            received.value = error as NSError
            failed.fulfill()
        }
        XCTAssertNil(operation)
        wait(for: [failed], timeout: 10)
        XCTAssertEqual(received.value?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(received.value?.code, NSURLErrorBadURL)
    }
}
