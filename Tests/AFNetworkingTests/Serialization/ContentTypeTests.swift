import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// Media-type parameters are case-insensitive (RFC 9110 §8.3.1): `Charset=`
/// decodes the same as `charset=` in `responseString` and every serializer,
/// over a real exchange and from a bare `HTTPURLResponse`.
final class ContentTypeTests: OperationTestCase {
    /// "café" in ISO-8859-1: invalid as UTF-8.
    private let latin1Text = Data([0x63, 0x61, 0x66, 0xE9])
    private let latin1JSON = Data([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0x63, 0x61, 0x66, 0xE9, 0x22, 0x7D])

    func testParameterNamesAndQuotedValues() {
        let cases: [(String, String?, String?)] = [
            ("text/plain; Charset=ISO-8859-1", "text/plain", "iso-8859-1"),
            ("Text/HTML;CHARSET=\"UTF-8\"", "text/html", "utf-8"),
            ("application/json ; charset = utf-8 ", "application/json", "utf-8"),
            ("text/plain; format=\"a;b\"; charset=latin1", "text/plain", "latin1"),
            ("text/plain; name=\"x\\\"y\"; charset=\"us\\-ascii\"", "text/plain", "us-ascii"),
            ("text/plain; charset=", "text/plain", nil),
            ("text/plain; novalue; charset=utf-8", "text/plain", "utf-8"),
            ("; charset=utf-8", nil, "utf-8"),
            ("", nil, nil),
        ]
        for (field, type, charset) in cases {
            let parsed = ContentType.parse(field)
            XCTAssertEqual(parsed.mimeType, type, field)
            XCTAssertEqual(parsed.charset, charset, field)
        }
    }

    func testResponseStringHonoursACapitalisedCharset() {
        server.respond("/text", headers: [("Content-Type", "text/plain; Charset=ISO-8859-1")], body: latin1Text)
        let (operation, outcome) = get("text")
        XCTAssertNil(outcome.error)
        XCTAssertEqual(operation.responseStringEncoding, .isoLatin1)
        XCTAssertEqual(operation.responseString, "café")
    }

    func testJSONSerializerHonoursACapitalisedCharset() throws {
        server.respond("/json", headers: [("Content-Type", "application/json; CHARSET=\"ISO-8859-1\"")], body: latin1JSON)
        let operation = HTTPRequestOperation(request: request("json"))
        operation.responseSerializer = JSONResponseSerializer()
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.object as? [String: Any])?["a"] as? String, "café")

        // The same through the public entry point, from an HTTPURLResponse.
        let response = makeResponse(contentType: "application/json; Charset=ISO-8859-1")
        let object = try JSONResponseSerializer().responseObject(for: response, data: latin1JSON)
        XCTAssertEqual((object as? [String: Any])?["a"] as? String, "café")
        // And the Decodable serializer.
        struct Payload: Decodable, Sendable { let a: String }
        let decoded = try DecodableResponseSerializer<Payload>().responseObject(for: response, data: latin1JSON) as? Payload
        XCTAssertEqual(decoded?.a, "café")
    }

    func testValidationReadsTheMediaTypeThroughTheSameParser() throws {
        let serializer = JSONResponseSerializer()
        let response = makeResponse(contentType: "Application/JSON ;Charset=utf-8")
        XCTAssertNoThrow(try serializer.validate(response, data: Data("{}".utf8)))
    }
}
