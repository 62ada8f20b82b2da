@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// Inputs `make fuzz` found, kept as regression tests.
final class FuzzFindingsTests: XCTestCase {
    /// FoundationXML's XMLDocument crashed (NULL root) on bytes libxml2 takes
    /// for an empty document; the serializer must throw instead.
    func testXMLDocumentWithoutARootElementThrows() {
        let inputs: [[UInt8]] = [[0x00, 0x86], [0x00, 0xDC, 0xBF], [0x00], [0x00, 0x00, 0x00], Array("<?xml version=\"1.0\"?>".utf8), Array("<!-- c -->".utf8)]
        for bytes in inputs {
            let response = makeResponse(contentType: "application/xml")
            XCTAssertThrowsError(try XMLDocumentResponseSerializer().responseObject(for: response, data: Data(bytes)), "\(bytes)")
        }
    }

    func testAWellFormedDocumentStillParses() throws {
        let response = makeResponse(contentType: "application/xml")
        let document = try XMLDocumentResponseSerializer().responseObject(for: response, data: Data("<a><b/></a>".utf8)) as? XMLDocument
        XCTAssertEqual(document?.rootElement()?.name, "a")
    }

    /// FoundationXML's parser callbacks crashed on an element name with
    /// invalid UTF-8 and an embedded NUL; both serializers must refuse it.
    func testInvalidUTF8ElementNamesAreRefusedBeforeFoundationXMLSeesThem() throws {
        let bytes = try XCTUnwrap(Data(base64Encoded: "PNJ4bWwgdmVyc2lvbj0iMS4wIj8+MTxhIGI9ImMiPjxkAD48L2E+"))
        let response = makeResponse(contentType: "application/xml")
        XCTAssertThrowsError(try XMLDocumentResponseSerializer().responseObject(for: response, data: bytes))
        XCTAssertThrowsError(try XMLParserResponseSerializer().responseObject(for: response, data: bytes))
        XCTAssertThrowsError(try XMLParserResponseSerializer().responseObject(for: response, data: Data("<\u{FF}a/>".utf8) + Data([0xFF])))
    }

    func testDeclaredLatin1AndUTF16DocumentsStillParse() throws {
        let response = makeResponse(contentType: "application/xml")
        let latin1 = try XCTUnwrap("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><caf\u{E9}/>".data(using: .isoLatin1))
        XCTAssertNotNil(try XMLDocumentResponseSerializer().responseObject(for: response, data: latin1))
        let utf16 = try XCTUnwrap("<?xml version=\"1.0\" encoding=\"UTF-16\"?><a>\u{263A}</a>".data(using: .utf16))
        XCTAssertNotNil(try XMLDocumentResponseSerializer().responseObject(for: response, data: utf16))
    }

    /// A processing instruction without data is valid XML, but FoundationXML's
    /// delegate callback for it crashes; the document serializer's strict
    /// parse must not trip over it.
    func testProcessingInstructionWithoutDataParses() throws {
        let response = makeResponse(contentType: "application/xml")
        let bytes = Data("<?xml version=\"1.0\"?><a><?target?></a>".utf8)
        let document = try XMLDocumentResponseSerializer().responseObject(for: response, data: bytes) as? XMLDocument
        XCTAssertEqual(document?.rootElement()?.name, "a")
        let fuzzed = try XCTUnwrap(Data(base64Encoded: "PD94bWwgdmVyc2lvbj0iMS4wIj8+PGEgYi4wIjw/ZXJzaT8+PGEgYj0iYyI+PGQvPj0iPj4vIjxkYz0vYSwyLH8iPg=="))
        XCTAssertThrowsError(try XMLDocumentResponseSerializer().responseObject(for: response, data: fuzzed))
    }
}
