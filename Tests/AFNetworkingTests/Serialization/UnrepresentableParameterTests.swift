import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The default (form / query string) serializer refuses parameters it has
/// no text for — a struct at the top or at a leaf — with
/// `NSURLErrorCannotDecodeRawData` in `AFURLRequestSerializationErrorDomain`,
/// instead of sending the value's `description` (2.7 sent
/// `{"": "Order(id: 1, note: \"x\")"}`). Nothing reaches the server.
final class UnrepresentableParameterTests: OperationTestCase {
    private struct Order: Sendable {
        let id: Int
        let note: String
    }

    private func assertRefused(_ parameters: Any, mentions text: String, file: StaticString = #filePath, line: UInt = #line) {
        var request = URLRequest(url: url("/post"))
        request.httpMethod = "POST"
        XCTAssertThrowsError(try HTTPRequestSerializer().requestBySerializingRequest(request, withParameters: parameters),
                             file: file, line: line) { error in
            let error = error as NSError
            XCTAssertEqual(error.domain, AFURLRequestSerializationErrorDomain, file: file, line: line)
            XCTAssertEqual(error.code, NSURLErrorCannotDecodeRawData, file: file, line: line)
            XCTAssertTrue(error.localizedDescription.contains(text), error.localizedDescription, file: file, line: line)
        }
    }

    func testAStructPostedThroughTheManagerFailsAndSendsNothing() {
        server.respond("/post", body: Data("ok".utf8))
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.completionQueue = DispatchQueue(label: "unrepresentable")
        let done = expectation(description: "failure")
        let failure = Locked<NSError?>(nil)
        manager.post("post", parameters: Order(id: 1, note: "x"), success: { _, _ in
            XCTFail("a struct has no form encoding")
            done.fulfill()
        }, failure: { _, error in
            failure.withLock { $0 = error as NSError }
            done.fulfill()
        })
        wait(for: [done], timeout: 10)
        XCTAssertEqual(failure.value?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(failure.value?.code, NSURLErrorCannotDecodeRawData)
        XCTAssertTrue(failure.value?.localizedDescription.contains("Order") == true, "\(String(describing: failure.value))")
        XCTAssertTrue(server.requests.isEmpty, "nothing was sent: \(server.requests.map(\.uri))")
    }

    func testAStructAtALeafIsRefusedAndNamed() {
        assertRefused(["order": ["item": Order(id: 2, note: "y")]], mentions: "order[item]")
        assertRefused(["orders": [Order(id: 3, note: "z")]], mentions: "orders[]")
    }

    func testValuesWithTextOfTheirOwnAreStillEncoded() throws {
        var request = URLRequest(url: url("/post"))
        request.httpMethod = "POST"
        let id = UUID()
        let parameters: [String: Any] = ["a": 1, "b": 2.5, "c": true, "d": "text", "e": URL(string: "http://x.test/")!,
                                         "f": NSNull(), "g": [1, 2], "h": ["k": "v"], "i": id, "j": Set(["s"])]
        let serialized = try HTTPRequestSerializer().requestBySerializingRequest(request, withParameters: parameters)
        let body = String(decoding: serialized.httpBody ?? Data(), as: UTF8.self)
        XCTAssertEqual(body, "a=1&b=2.5&c=1&d=text&e=http%3A//x.test/&f&g%5B%5D=1&g%5B%5D=2&h%5Bk%5D=v&i=\(id.uuidString)&j=s")
    }

    /// A multipart form's fields are refused the same way (2.7 sent the description as the part).
    func testAStructInAMultipartFormIsRefusedAndNamed() {
        XCTAssertThrowsError(try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/post").absoluteString,
                                                                              parameters: ["order": Order(id: 1, note: "x")], constructingBodyWith: nil)) { error in
            let error = error as NSError
            XCTAssertEqual(error.domain, AFURLRequestSerializationErrorDomain)
            XCTAssertEqual(error.code, NSURLErrorCannotDecodeRawData)
            XCTAssertTrue(error.localizedDescription.contains("order"), error.localizedDescription)
        }
        XCTAssertNoThrow(try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/post").absoluteString,
                                                                          parameters: ["id": 1, "name": "x", "blob": Data([1, 2])], constructingBodyWith: nil))
    }
}
