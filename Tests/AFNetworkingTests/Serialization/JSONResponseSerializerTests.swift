import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

final class JSONResponseSerializerTests: XCTestCase {
    let serializer = JSONResponseSerializer()
    let json = Data(#"{"foo":"bar"}"#.utf8)

    // 2.7: accepts application/json, text/json, text/javascript; rejects nonstandard/json
    func testAcceptableContentTypes() {
        for type in ["application/json", "text/json", "text/javascript"] {
            XCTAssertNoThrow(try serializer.validate(makeResponse(contentType: type), data: json), type)
        }
        XCTAssertThrowsError(try serializer.validate(makeResponse(contentType: "nonstandard/json"), data: json))
    }

    // 2.7: testThatJSONResponseSerializerReturnsDictionaryForValidJSONDictionary
    func testReturnsDictionary() throws {
        let object = try serializer.responseObject(for: makeResponse(contentType: "text/json"), data: json)
        XCTAssertEqual((object as? [String: Any])?["foo"] as? String, "bar")
    }

    // 2.7: testThatJSONResponseSerializerReturnsErrorForInvalidJSON
    func testInvalidJSONThrows() {
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "text/json"),
                                                           data: Data("{invalid}".utf8)))
    }

    func testEmptyAndWhitespaceBodiesAreNilWithoutError() throws {
        for body in ["", " ", "\n\t  \r\n"] {
            XCTAssertNil(try serializer.responseObject(for: makeResponse(), data: Data(body.utf8)), "body \(body.debugDescription)")
        }
        XCTAssertNil(try serializer.responseObject(for: makeResponse(), data: nil))
    }

    func testUnacceptableContentTypeThrowsWithoutParsing() {
        let error = assertThrowsNSError(try serializer.responseObject(for: makeResponse(contentType: "text/html"), data: json))
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
    }

    func testBadStatusWithValidJSONThrowsValidationError() {
        let error = assertThrowsNSError(try serializer.responseObject(for: makeResponse(status: 422), data: json))
        XCTAssertEqual(error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(error?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data, json)
    }

    func testBadStatusWithInvalidJSONChainsValidationUnderParseError() {
        let error = assertThrowsNSError(try serializer.responseObject(for: makeResponse(status: 500), data: Data("{".utf8)))
        XCTAssertNotEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual((error?.userInfo[NSUnderlyingErrorKey] as? NSError)?.code, NSURLErrorBadServerResponse)
    }

    func testRemovesKeysWithNullValuesRecursively() throws {
        serializer.removesKeysWithNullValues = true
        let body = Data(#"{"a":null,"b":{"c":null,"d":1},"e":[{"f":null,"g":2},null]}"#.utf8)
        let object = try serializer.responseObject(for: makeResponse(), data: body) as? [String: Any]
        XCTAssertNil(object?["a"])
        let b = object?["b"] as? [String: Any]
        XCTAssertNil(b?["c"])
        XCTAssertEqual((b?["d"] as? NSNumber)?.intValue, 1)
        let e = object?["e"] as? [Any]
        XCTAssertEqual(e?.count, 2)
        let first = e?.first as? [String: Any]
        XCTAssertEqual(first?.count, 1)
        XCTAssertTrue(e?.last is NSNull)
    }

    func testKeepsNullsByDefault() throws {
        let object = try serializer.responseObject(for: makeResponse(), data: Data(#"{"a":null}"#.utf8)) as? [String: Any]
        XCTAssertTrue(object?["a"] is NSNull)
    }

    func testReadingOptionsAllowFragments() throws {
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(), data: Data("42".utf8)))
        let lenient = JSONResponseSerializer(readingOptions: .fragmentsAllowed)
        XCTAssertEqual((try lenient.responseObject(for: makeResponse(), data: Data("42".utf8)) as? NSNumber)?.intValue, 42)
    }

    func testFollowsCharsetOfContentType() throws {
        let latin1 = Data([0x7B, 0x22, 0x6E, 0x22, 0x3A, 0x22, 0x63, 0x61, 0x66, 0xE9, 0x22, 0x7D]) // {"n":"café"}
        let object = try serializer.responseObject(for: makeResponse(contentType: "application/json; charset=iso-8859-1"),
                                                   data: latin1) as? [String: Any]
        XCTAssertEqual(object?["n"] as? String, "café")

        let cp1252 = Data(#"{"n":""#.utf8) + Data([0x80]) + Data(#""}"#.utf8) // 0x80 is € in Windows-1252
        let euro = try serializer.responseObject(for: makeResponse(contentType: "application/json; charset=windows-1252"),
                                                 data: cp1252) as? [String: Any]
        XCTAssertEqual(euro?["n"] as? String, "€")

        let utf16 = #"{"n":"ü"}"#.data(using: .utf16) ?? Data()
        let wide = try serializer.responseObject(for: makeResponse(contentType: "application/json; charset=UTF-16"),
                                                 data: utf16) as? [String: Any]
        XCTAssertEqual(wide?["n"] as? String, "ü")
    }

    func testInvalidUTF8IsAClearError() {
        let bad = Data(#"{"n":""#.utf8) + Data([0xC3, 0x28]) + Data(#""}"#.utf8)
        let error = assertThrowsNSError(try serializer.responseObject(for: makeResponse(contentType: "application/json; charset=utf-8"), data: bad))
        XCTAssertEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
        XCTAssertEqual(error?.localizedDescription, "Data failed decoding as a UTF-8 string")
    }

    func testByteOrderMarkIsIgnored() throws {
        let body = Data([0xEF, 0xBB, 0xBF]) + json
        XCTAssertNotNil(try serializer.responseObject(for: makeResponse(), data: body) as? [String: Any])
    }

    func testCopyAndCodingKeepOptions() throws {
        serializer.readingOptions = .mutableContainers
        serializer.removesKeysWithNullValues = true
        let copy = serializer.copy() as? JSONResponseSerializer
        XCTAssertEqual(copy?.readingOptions, .mutableContainers)
        XCTAssertEqual(copy?.removesKeysWithNullValues, true)
        let decoded = try archiveRoundTrip(serializer, as: JSONResponseSerializer.self)
        XCTAssertEqual(decoded?.readingOptions, .mutableContainers)
        XCTAssertEqual(decoded?.removesKeysWithNullValues, true)
        XCTAssertEqual(decoded?.acceptableContentTypes, ["application/json", "text/json", "text/javascript"])
    }
}

final class TextEncodingTests: XCTestCase {
    func testCharsetTable() {
        XCTAssertEqual(TextEncoding.encoding(forCharset: "UTF-8"), .utf8)
        XCTAssertEqual(TextEncoding.encoding(forCharset: "\"utf-8\""), .utf8)
        XCTAssertEqual(TextEncoding.encoding(forCharset: "ISO-8859-1"), .isoLatin1)
        XCTAssertEqual(TextEncoding.encoding(forCharset: "windows-1252"), .windowsCP1252)
        XCTAssertEqual(TextEncoding.encoding(forCharset: "utf-16le"), .utf16LittleEndian)
        XCTAssertNil(TextEncoding.encoding(forCharset: "klingon"))
        XCTAssertNil(TextEncoding.encoding(forCharset: nil))
    }

    /// A charset outside the package's table that iconv knows is decoded
    /// with it (CoreFoundation decoded it for 2.7 on Darwin), not read in the
    /// fallback encoding; bytes invalid in it are an error naming it.
    func testACharsetIconvKnowsIsDecodedWithIt() throws {
        let koi8 = Data("{\"a\":\"".utf8) + Data([0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4]) + Data("\"}".utf8)
        let text = try TextEncoding.decode(koi8, response: makeResponse(contentType: "application/json; charset=koi8-r"), fallback: .isoLatin1)
        XCTAssertEqual(text, "{\"a\":\"Привет\"}")
        let object = try JSONResponseSerializer().responseObject(for: makeResponse(contentType: "application/json; charset=koi8-r"), data: koi8)
        XCTAssertEqual((object as? [String: Any])?["a"] as? String, "Привет")
        XCTAssertThrowsError(try TextEncoding.decode(Data([0xC7]), response: makeResponse(contentType: "text/plain; charset=euc-kr"),
                                                     fallback: .isoLatin1)) { error in
            XCTAssertTrue((error as NSError).localizedDescription.contains("euc-kr"), (error as NSError).localizedDescription)
        }
    }

    func testUnknownCharsetFallsBackToSerializerEncoding() throws {
        let text = try TextEncoding.decode(Data([0x63, 0x61, 0x66, 0xE9]), response: makeResponse(contentType: "text/plain; charset=klingon"),
                                           fallback: .isoLatin1)
        XCTAssertEqual(text, "café")
    }
}
