import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest
@testable import AFNetworking

final class PropertyListResponseSerializerTests: XCTestCase {
    let serializer = PropertyListResponseSerializer()

    // 2.7: testThatPropertyListResponseSerializerHandles204
    func testHandles204() throws {
        XCTAssertNil(try serializer.responseObject(for: makeResponse(status: 204, contentType: "application/x-plist"), data: nil))
        XCTAssertNil(try serializer.responseObject(for: makeResponse(status: 204, contentType: "application/x-plist"), data: Data()))
    }

    func testDecodesXMLPlist() throws {
        let plist = try PropertyListSerialization.data(fromPropertyList: ["a": 1, "b": ["x", "y"]], format: .xml, options: 0)
        let object = try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"), data: plist) as? [String: Any]
        XCTAssertEqual((object?["a"] as? NSNumber)?.intValue, 1)
        XCTAssertEqual(object?["b"] as? [String], ["x", "y"])
    }

    func testMalformedPlistThrows() {
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"),
                                                           data: Data("<plist><dict><key>a</key>".utf8)))
    }

    func testRejectsOtherContentTypes() {
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "text/html"), data: Data("x".utf8)))
    }

    /// A binary plist whose arrays each hold the previous one `width` times
    /// (object 0 an integer, object k an array of k-1): tiny, yet it expands
    /// to width^depth values.
    private func sharedArrays(depth: Int, width: Int = 2) -> Data {
        var objects: [[UInt8]] = [[0x10, 0x00]]
        for level in 1...depth { objects.append([0xA0 | UInt8(width)] + Array(repeating: UInt8(level - 1), count: width)) }
        var data = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(data.count)
            data += object
        }
        let table = data.count
        data += offsets.map { UInt8($0) }
        func bigEndian(_ value: Int) -> [UInt8] { (0..<8).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        data += [0, 0, 0, 0, 0, 0, 1, 1] + bigEndian(objects.count) + bigEndian(depth) + bigEndian(table)
        return Data(data)
    }

    /// A binary plist of `count` one-element arrays, each holding the next,
    /// with object references and offsets of `size` bytes.
    private func nestedArrays(_ count: Int, referenceSize size: Int) -> Data {
        func bigEndian(_ value: Int, _ width: Int) -> [UInt8] { (0..<width).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        var data = Array("bplist00".utf8)
        var offsets: [Int] = []
        for index in 0..<count {
            offsets.append(data.count)
            data += [0xA1] + bigEndian(index + 1, size)
        }
        offsets.append(data.count)
        data += [0x10, 0x00]
        let table = data.count
        for offset in offsets { data += bigEndian(offset, 4) }
        data += [0, 0, 0, 0, 0, 0, 4, UInt8(size)] + bigEndian(count + 1, 8) + bigEndian(0, 8) + bigEndian(table, 8)
        return Data(data)
    }

    /// Nesting past 512 is refused (Foundation's reader recurses per level),
    /// and so is a form this reader cannot follow (9-byte references, which
    /// Foundation reads), rather than handed on unchecked.
    func testDeepOrUnreadableBinaryPlistsAreRefused() {
        for (name, data) in [("deep", nestedArrays(5_000, referenceSize: 2)), ("wide references", nestedArrays(3, referenceSize: 9))] {
            XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"), data: data), name) { error in
                XCTAssertEqual((error as NSError).code, NSURLErrorCannotDecodeContentData, name)
            }
        }
        XCTAssertNotNil(try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"),
                                                      data: nestedArrays(100, referenceSize: 2)), "100 deep is read")
    }

    /// 203 bytes that would expand to 2^40 values: refused at once, not
    /// handed to Foundation (which copies every shared container).
    func testABinaryPlistThatExpandsExponentiallyIsRefused() {
        let bomb = sharedArrays(depth: 40)
        XCTAssertLessThan(bomb.count, 256)
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"), data: bomb)) { error in
            let error = error as NSError
            XCTAssertEqual(error.domain, AFURLResponseSerializationErrorDomain)
            XCTAssertEqual(error.code, NSURLErrorCannotDecodeContentData)
            XCTAssertTrue(error.localizedDescription.contains("expand"), error.localizedDescription)
        }
    }

    /// Sharing within bounds, and real binary plists (shared strings and
    /// numbers, nested containers), are read as before.
    func testBinaryPlistsWithinBoundsAreRead() throws {
        let small = try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"), data: sharedArrays(depth: 10))
        XCTAssertEqual((small as? [Any])?.count, 2)
        let rows = (0..<500).map { ["name": "row", "tags": ["a", "b"], "n": $0 % 3] as [String: Any] }
        let binary = try PropertyListSerialization.data(fromPropertyList: ["rows": rows, "title": "row"], format: .binary, options: 0)
        let object = try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"), data: binary) as? [String: Any]
        XCTAssertEqual((object?["rows"] as? [Any])?.count, 500)
    }

    func testFactoryOptionsCopyAndCoding() throws {
        let custom = PropertyListResponseSerializer(format: .binary, readOptions: .mutableContainers)
        XCTAssertEqual(custom.format, .binary)
        let copy = custom.copy() as? PropertyListResponseSerializer
        XCTAssertEqual(copy?.format, .binary)
        XCTAssertEqual(copy?.readOptions, .mutableContainers)
        let decoded = try archiveRoundTrip(custom, as: PropertyListResponseSerializer.self)
        XCTAssertEqual(decoded?.format, .binary)
        XCTAssertEqual(decoded?.readOptions, .mutableContainers)
    }
}

final class XMLResponseSerializerTests: XCTestCase {
    let xml = Data("<?xml version=\"1.0\"?><root><item id=\"1\">hello</item></root>".utf8)

    func testParserSerializerReturnsParser() throws {
        let serializer = XMLParserResponseSerializer()
        let parser = try serializer.responseObject(for: makeResponse(contentType: "text/xml"), data: xml) as? XMLParser
        XCTAssertNotNil(parser)
        XCTAssertTrue(parser?.parse() ?? false)
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "application/json"), data: xml))
        XCTAssertNil(try serializer.responseObject(for: makeResponse(contentType: "text/xml"), data: nil))
    }

    func testDocumentSerializerParses() throws {
        let serializer = XMLDocumentResponseSerializer()
        let document = try serializer.responseObject(for: makeResponse(contentType: "application/xml"), data: xml) as? XMLDocument
        XCTAssertEqual(document?.rootElement()?.name, "root")
        XCTAssertEqual(document?.rootElement()?.elements(forName: "item").first?.stringValue, "hello")
    }

    func testDocumentSerializerThrowsOnMalformedXML() {
        let serializer = XMLDocumentResponseSerializer()
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "text/xml"), data: Data("<root><a></root>".utf8)))
    }

    func testDocumentOptionsCopyAndCoding() throws {
        let serializer = XMLDocumentResponseSerializer(xmlDocumentOptions: .nodePreserveWhitespace)
        XCTAssertEqual((serializer.copy() as? XMLDocumentResponseSerializer)?.options, .nodePreserveWhitespace)
        XCTAssertEqual(try archiveRoundTrip(serializer, as: XMLDocumentResponseSerializer.self)?.options, .nodePreserveWhitespace)
    }
}

final class CompoundResponseSerializerTests: XCTestCase {
    func testFirstSuccessfulSerializerWins() throws {
        let compound = CompoundResponseSerializer(responseSerializers: [JSONResponseSerializer(), PropertyListResponseSerializer()])
        let json = try compound.responseObject(for: makeResponse(contentType: "application/json"), data: Data(#"{"a":1}"#.utf8))
        XCTAssertNotNil(json as? [String: Any])
        let plistData = try PropertyListSerialization.data(fromPropertyList: ["p": "q"], format: .xml, options: 0)
        let plist = try compound.responseObject(for: makeResponse(contentType: "application/x-plist"), data: plistData)
        XCTAssertEqual((plist as? [String: Any])?["p"] as? String, "q")
    }

    func testFallsBackToRawDataAndValidation() throws {
        let compound = CompoundResponseSerializer(responseSerializers: [JSONResponseSerializer()])
        let data = Data("plain".utf8)
        XCTAssertEqual(try compound.responseObject(for: makeResponse(contentType: "text/plain"), data: data) as? Data, data)
        XCTAssertThrowsError(try compound.responseObject(for: makeResponse(status: 500, contentType: "text/plain"), data: data))
    }

    func testCopyAndCodingKeepComponents() throws {
        let compound = CompoundResponseSerializer(responseSerializers: [JSONResponseSerializer(), ImageResponseSerializer()])
        XCTAssertEqual((compound.copy() as? CompoundResponseSerializer)?.responseSerializers.count, 2)
        let decoded = try archiveRoundTrip(compound, as: CompoundResponseSerializer.self)
        XCTAssertEqual(decoded?.responseSerializers.count, 2)
        XCTAssertTrue(decoded?.responseSerializers.first is JSONResponseSerializer)
    }
}
