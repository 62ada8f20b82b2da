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
