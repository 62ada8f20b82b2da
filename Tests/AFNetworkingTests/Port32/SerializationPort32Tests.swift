import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

// AFNetworking 3.2.1's serializer suites (AFImageResponseSerializerTests,
// AFCompoundResponseSerializerTests, AFHTTPRequestSerializationTests,
// AFHTTPResponseSerializationTests, AFJSONSerializationTests,
// AFPropertyList{Request,Response}SerializerTests,
// AFXML{Parser,Document}ResponseSerializerTests): the cases new in 3.x that
// no suite under Serialization/ or Port27/ already covers. Written against
// the public API only (a plain `import`, as an outside caller has).

/// An XML document with attributes and a nested element, the shape 3.x's XML suites use.
private let sampleXML = Data(#"<?xml version="1.0" encoding="UTF-8"?><catalog id="7" kind="test"><entry>first</entry></catalog>"#.utf8)

// MARK: - ImageResponseSerializer (AFImageResponseSerializerTests)

final class ImageResponseSerializerPort32Tests: XCTestCase {
    /// A copy is a new serializer with the caller's validation settings.
    func testImageSerializerCanBeCopied() throws {
        let serializer = ImageResponseSerializer.serializer()
        serializer.acceptableContentTypes = ["test/type"]
        serializer.acceptableStatusCodes = IndexSet(integer: 100)
        let copy = try XCTUnwrap(serializer.copy() as? ImageResponseSerializer)
        XCTAssertFalse(copy === serializer)
        XCTAssertEqual(copy.acceptableContentTypes, ["test/type"])
        XCTAssertEqual(copy.acceptableStatusCodes, IndexSet(integer: 100))
        // Migration.md: imageScale and automaticallyInflatesResponseImage have no meaning on Linux (no UIImage).
    }

    func testImageSerializerSupportsSecureCoding() {
        XCTAssertTrue(ImageResponseSerializer.supportsSecureCoding)
    }

    /// The defaults survive a secure archive, as the image serializer's own class.
    func testImageSerializerCanBeArchivedAndUnarchived() throws {
        let serializer = ImageResponseSerializer.serializer()
        let archive = try NSKeyedArchiver.archivedData(withRootObject: serializer, requiringSecureCoding: true)
        XCTAssertFalse(archive.isEmpty)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: ImageResponseSerializer.self, from: archive))
        XCTAssertFalse(restored === serializer)
        XCTAssertEqual(restored.acceptableContentTypes, serializer.acceptableContentTypes)
        XCTAssertEqual(restored.acceptableStatusCodes, serializer.acceptableStatusCodes)
    }

    /// 3.x changed imageScale and the inflation flag here; the settings an image
    /// serializer has on Linux are its validation ones, so those are changed instead.
    func testImageSerializerCanBeArchivedAndUnarchivedWithNonDefaultPropertyValues() throws {
        let serializer = ImageResponseSerializer.serializer()
        serializer.acceptableContentTypes = ["image/x-custom"]
        serializer.acceptableStatusCodes = IndexSet([200, 203])
        let archive = try NSKeyedArchiver.archivedData(withRootObject: serializer, requiringSecureCoding: true)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: ImageResponseSerializer.self, from: archive))
        XCTAssertFalse(restored === serializer)
        XCTAssertEqual(restored.acceptableContentTypes, ["image/x-custom"])
        XCTAssertEqual(restored.acceptableStatusCodes, IndexSet([200, 203]))
    }
}

// MARK: - CompoundResponseSerializer (AFCompoundResponseSerializerTests)

final class CompoundResponseSerializerPort32Tests: XCTestCase {
    private func imageThenJSON() -> CompoundResponseSerializer {
        CompoundResponseSerializer(responseSerializers: [ImageResponseSerializer.serializer(), JSONResponseSerializer.serializer()])
    }

    /// The image serializer refuses a JSON body; the JSON one after it answers.
    func testCompoundSerializerProperlySerializesResponse() throws {
        let body = try JSONSerialization.data(withJSONObject: ["key": "value"])
        let response = try XCTUnwrap(HTTPURLResponse(url: URL(string: "http://test.example")!, statusCode: 200, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Content-Type": "application/json"]))
        let object = try imageThenJSON().responseObject(for: response, data: body)
        XCTAssertEqual((object as? [String: Any])?["key"] as? String, "value")
    }

    func testCompoundSerializerCanBeCopied() throws {
        let compound = imageThenJSON()
        compound.acceptableStatusCodes = IndexSet(integer: 100)
        compound.acceptableContentTypes = ["test/type"]
        let copy = try XCTUnwrap(compound.copy() as? CompoundResponseSerializer)
        XCTAssertFalse(copy === compound)
        XCTAssertEqual(copy.responseSerializers.count, compound.responseSerializers.count)
        XCTAssertTrue(copy.responseSerializers.first.map { type(of: $0) == ImageResponseSerializer.self } ?? false)
        XCTAssertTrue(copy.responseSerializers.last.map { type(of: $0) == JSONResponseSerializer.self } ?? false)
        XCTAssertEqual(copy.acceptableStatusCodes, IndexSet(integer: 100))
        XCTAssertEqual(copy.acceptableContentTypes, ["test/type"])
    }

    func testCompoundSerializerCanBeArchivedAndUnarchived() throws {
        let compound = imageThenJSON()
        let archive = try NSKeyedArchiver.archivedData(withRootObject: compound, requiringSecureCoding: true)
        XCTAssertFalse(archive.isEmpty)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: CompoundResponseSerializer.self, from: archive))
        XCTAssertFalse(restored === compound)
        XCTAssertEqual(restored.responseSerializers.count, 2)
        XCTAssertTrue(restored.responseSerializers.first.map { type(of: $0) == ImageResponseSerializer.self } ?? false,
                      "\(restored.responseSerializers.map { type(of: $0) })")
        XCTAssertTrue(restored.responseSerializers.last.map { type(of: $0) == JSONResponseSerializer.self } ?? false,
                      "\(restored.responseSerializers.map { type(of: $0) })")
    }
}

// MARK: - HTTPResponseSerializer (AFHTTPResponseSerializationTests)

final class HTTPResponseSerializationPort32Tests: XCTestCase {
    /// A 205 without a Content-Type, with the serializer limited to text/html.
    private func resetContent() throws -> HTTPURLResponse {
        try XCTUnwrap(HTTPURLResponse(url: testBaseURL, statusCode: 205, httpVersion: "HTTP/1.1", headerFields: [:]))
    }

    func testThatAFHTTPResponseSerializationSucceedsWith205WithNoResponseContentTypeAndNoResponseData() throws {
        let serializer = HTTPResponseSerializer.serializer()
        XCTAssertTrue(serializer.acceptableStatusCodes?.contains(205) ?? false)
        serializer.acceptableContentTypes = ["text/html"]
        let response = try resetContent()
        XCTAssertNoThrow(try serializer.validate(response, data: nil), "no body: the missing content type is not checked")
        XCTAssertThrowsError(try serializer.validate(response, data: Data("test".utf8)), "a body without a content type is not text/html")
    }

    func testThatAFHTTPResponseSerializationFailsWith205WithNoResponseContentTypeAndResponseData() throws {
        let serializer = HTTPResponseSerializer.serializer()
        XCTAssertTrue(serializer.acceptableStatusCodes?.contains(205) ?? false)
        serializer.acceptableContentTypes = ["text/html"]
        let error = assertThrowsNSError(try serializer.validate(try resetContent(), data: Data("test".utf8)))
        XCTAssertNotNil(error)
        XCTAssertEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
    }

    func testSupportsSecureCoding() {
        XCTAssertTrue(HTTPResponseSerializer.supportsSecureCoding)
    }
}

// MARK: - HTTPRequestSerializer (AFHTTPRequestSerializationTests)

final class HTTPRequestSerializationPort32Tests: XCTestCase {
    /// Setting nil removes the field from the default headers altogether.
    func testThatHTTPHeaderValueCanBeRemoved() {
        let serializer = HTTPRequestSerializer.serializer()
        serializer.setValue("test", forHTTPHeaderField: "TestHeader")
        XCTAssertEqual(serializer.httpRequestHeaders["TestHeader"], "test")
        serializer.setValue(nil, forHTTPHeaderField: "TestHeader")
        XCTAssertFalse(serializer.httpRequestHeaders.keys.contains("TestHeader"))
        XCTAssertNil(serializer.value(forHTTPHeaderField: "TestHeader"))
    }

    /// A thousand writers on the global queues at once, each with a string of
    /// its own: no crash, and the field ends up holding one of the values set.
    func testThatHTTPHeaderValueCanBeSetToReferenceCountedStringFromMultipleThreadsWithoutCrashing() {
        let serializer = HTTPRequestSerializer.serializer()
        let writers = 1000
        let group = DispatchGroup()
        for index in 0..<writers {
            let value = "\(Date(timeIntervalSince1970: TimeInterval(index)))"
            group.enter()
            DispatchQueue.global().async {
                serializer.setValue(value, forHTTPHeaderField: "FrequentlyUpdatedHeaderField")
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 30), .success, "every writer finished")
        let values = Set((0..<writers).map { "\(Date(timeIntervalSince1970: TimeInterval($0)))" })
        let final = serializer.value(forHTTPHeaderField: "FrequentlyUpdatedHeaderField")
        XCTAssertTrue(final.map { values.contains($0) } ?? false, "\(String(describing: final))")
        XCTAssertEqual(serializer.httpRequestHeaders.keys.filter { $0.lowercased() == "frequentlyupdatedheaderfield" }.count, 1)
    }
}

// MARK: - JSON (AFJSONSerializationTests)

final class JSONSerializationPort32Tests: XCTestCase {
    /// A set is not a JSON value: the serializer refuses it with nothing built.
    func testThatJSONRequestSerializationErrorsWithInvalidJSON() {
        let parameters: [String: Any] = ["key": NSSet(object: "value")]
        let error = assertThrowsNSError(try JSONRequestSerializer.serializer().request(withMethod: "POST", urlString: testBaseURL.absoluteString,
                                                                                        parameters: parameters))
        XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain)
        // API.md: NSURLErrorCannotDecodeRawData for a value JSON cannot hold (3.x said NSURLErrorCannotDecodeContentData).
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeRawData)
        XCTAssertTrue(error?.localizedFailureReason?.hasPrefix("The parameters cannot be written as JSON") ?? false,
                      "\(String(describing: error?.localizedFailureReason))")
    }

    func testThatJSONResponseSerializerCanBeCopied() throws {
        let serializer = JSONResponseSerializer.serializer()
        serializer.acceptableStatusCodes = IndexSet(integer: 100)
        serializer.acceptableContentTypes = ["test/type"]
        serializer.readingOptions = .mutableLeaves
        serializer.removesKeysWithNullValues = true
        let copy = try XCTUnwrap(serializer.copy() as? JSONResponseSerializer)
        XCTAssertFalse(copy === serializer)
        XCTAssertEqual(copy.acceptableStatusCodes, serializer.acceptableStatusCodes)
        XCTAssertEqual(copy.acceptableContentTypes, serializer.acceptableContentTypes)
        XCTAssertEqual(copy.readingOptions, serializer.readingOptions)
        XCTAssertEqual(copy.removesKeysWithNullValues, serializer.removesKeysWithNullValues)
    }
}

// MARK: - Property lists (AFPropertyList{Request,Response}SerializerTests)

final class PropertyListSerializerPort32Tests: XCTestCase {
    /// A property list's dictionary keys are strings: a number key is refused.
    func testThatPropertyListRequestSerializerHandlesInvalidPlist() {
        let parameters: [Int: String] = [42: "value"]
        let error = assertThrowsNSError(try PropertyListRequestSerializer.serializer().request(withMethod: "POST",
                                                                                                urlString: testBaseURL.absoluteString,
                                                                                                parameters: parameters))
        XCTAssertNotNil(error)
        XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeRawData, "API.md: the code of a value a property list cannot hold")
    }

    /// JSON bytes labelled as a property list are not one.
    func testThatPropertyListResponseSerializerHandlesInvalidPlistData() throws {
        let body = try JSONSerialization.data(withJSONObject: ["foo": "bar"])
        let response = makeResponse(contentType: "application/x-plist")
        XCTAssertThrowsError(try PropertyListResponseSerializer.serializer().responseObject(for: response, data: body))
    }

    func testResponseSerializerCanBeCopied() throws {
        let serializer = PropertyListResponseSerializer.serializer()
        serializer.acceptableContentTypes = ["test/type"]
        serializer.acceptableStatusCodes = IndexSet(integer: 100)
        serializer.format = .xml
        serializer.readOptions = .mutableContainers
        let copy = try XCTUnwrap(serializer.copy() as? PropertyListResponseSerializer)
        XCTAssertFalse(copy === serializer)
        XCTAssertEqual(copy.format, serializer.format)
        XCTAssertEqual(copy.readOptions, serializer.readOptions)
        XCTAssertEqual(copy.acceptableContentTypes, serializer.acceptableContentTypes)
        XCTAssertEqual(copy.acceptableStatusCodes, serializer.acceptableStatusCodes)
    }
}

// MARK: - XML (AFXMLParserResponseSerializerTests, AFXMLDocumentResponseSerializerTests)

final class XMLResponseSerializerPort32Tests: XCTestCase {
    func testThatXMLParserResponseSerializerDoesNotAcceptsNonStandardXMLMimeType() {
        let error = assertThrowsNSError(try XMLParserResponseSerializer.serializer().validate(makeResponse(contentType: "nonstandard/xml"),
                                                                                              data: sampleXML))
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
    }

    func testThatXMLParserResponseSerializerCanBeCopied() throws {
        let serializer = XMLParserResponseSerializer.serializer()
        serializer.acceptableStatusCodes = IndexSet(integer: 100)
        serializer.acceptableContentTypes = ["test/type"]
        let copy = try XCTUnwrap(serializer.copy() as? XMLParserResponseSerializer)
        XCTAssertFalse(copy === serializer)
        XCTAssertEqual(copy.acceptableStatusCodes, serializer.acceptableStatusCodes)
        XCTAssertEqual(copy.acceptableContentTypes, serializer.acceptableContentTypes)
    }

    func testThatXMLDocumentResponseSerializerAcceptsTextXMLMimeType() {
        XCTAssertNoThrow(try XMLDocumentResponseSerializer.serializer().validate(makeResponse(contentType: "text/xml"), data: sampleXML))
    }

    func testThatXMLDocumentResponseSerializerDoesNotAcceptsNonStandardXMLMimeType() {
        let error = assertThrowsNSError(try XMLDocumentResponseSerializer.serializer().validate(makeResponse(contentType: "nonstandard/xml"),
                                                                                                data: sampleXML))
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
    }

    /// A document cut off inside its first tag is an error, not a partial tree.
    func testThatXMLDocumentResponseSerializerReturnsErrorForInvalidXML() {
        XCTAssertThrowsError(try XMLDocumentResponseSerializer.serializer().responseObject(for: makeResponse(contentType: "application/xml"),
                                                                                           data: Data("<foo".utf8)))
    }

    func testThatXMLDocumentResponseSerializerCanBeCopied() throws {
        let serializer = XMLDocumentResponseSerializer.serializer()
        serializer.acceptableStatusCodes = IndexSet(integer: 100)
        serializer.acceptableContentTypes = ["test/type"]
        serializer.options = XMLNode.Options(rawValue: 1)
        let copy = try XCTUnwrap(serializer.copy() as? XMLDocumentResponseSerializer)
        XCTAssertFalse(copy === serializer)
        XCTAssertEqual(copy.acceptableStatusCodes, serializer.acceptableStatusCodes)
        XCTAssertEqual(copy.acceptableContentTypes, serializer.acceptableContentTypes)
        XCTAssertEqual(copy.options, serializer.options)
    }
}
