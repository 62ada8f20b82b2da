import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// Both XML serializers accept any encoding libxml2 reads (ISO-8859-15,
/// KOI8-R, EUC-KR …), not only the names in the package's own table; bytes
/// invalid in the declared encoding, NUL, and encodings nobody knows stay
/// clear errors.
final class XMLEncodingTests: OperationTestCase {
    private func document(_ encoding: String, _ text: [UInt8]) -> Data {
        Data("<?xml version=\"1.0\" encoding=\"\(encoding)\"?><r>".utf8) + Data(text) + Data("</r>".utf8)
    }

    /// "€" in ISO-8859-15, "Привет" in KOI8-R, "한" in EUC-KR.
    private var samples: [(String, Data, String)] {
        [("ISO-8859-15", document("ISO-8859-15", [0xA4]), "€"),
         ("koi8-r", document("koi8-r", [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4]), "Привет"),
         ("EUC-KR", document("EUC-KR", [0xC7, 0xD1]), "한")]
    }

    private func fetch(_ body: Data, with serializer: HTTPResponseSerializer) -> Outcome {
        server.respond("/doc", headers: [("Content-Type", "text/xml")], body: body)
        let operation = HTTPRequestOperation(request: request("doc"))
        operation.responseSerializer = serializer
        return run(operation)
    }

    func testDocumentSerializerReadsEncodingsLibxml2Supports() throws {
        for (name, body, text) in samples {
            let outcome = fetch(body, with: XMLDocumentResponseSerializer())
            XCTAssertNil(outcome.error, name)
            XCTAssertEqual((outcome.object as? XMLDocument)?.rootElement()?.stringValue, text, name)
        }
    }

    func testParserSerializerReadsEncodingsLibxml2Supports() throws {
        for (name, body, text) in samples {
            let outcome = fetch(body, with: XMLParserResponseSerializer())
            let parser = try XCTUnwrap(outcome.object as? XMLParser, "\(name): \(String(describing: outcome.error))")
            let collector = TextCollector()
            parser.delegate = collector
            XCTAssertTrue(parser.parse(), name)
            XCTAssertEqual(collector.text, text, name)
        }
    }

    func testUnknownEncodingsAndInvalidBytesAreClearErrors() {
        let cases: [(Data, String)] = [
            (document("x-no-such-encoding", Array("abc".utf8)), "not supported"),
            (document("ISO-8859-15//IGNORE", Array("abc".utf8)), "not supported"),
            (document("EUC-KR", [0xC7]), "not valid EUC-KR"),
            (document("KOI8-R", [0x61, 0x00, 0x62]), "bytes XML cannot contain"),
        ]
        for (body, reason) in cases {
            for serializer in [XMLDocumentResponseSerializer(), XMLParserResponseSerializer()] as [HTTPResponseSerializer] {
                let outcome = fetch(body, with: serializer)
                XCTAssertNil(outcome.object, reason)
                XCTAssertEqual(outcome.error?.domain, XMLParser.errorDomain, reason)
                XCTAssertTrue(outcome.error?.localizedDescription.contains(reason) == true,
                              "\(reason): \(String(describing: outcome.error?.localizedDescription))")
            }
        }
    }

    /// Only the XML declaration names the encoding: one named in a comment or
    /// an attribute names nothing (for libxml2 the document stays UTF-8), so
    /// invalid UTF-8 in an element name is still refused before FoundationXML
    /// sees it. Blanks around the declaration's `=` are XML.
    func testOnlyTheXMLDeclarationNamesTheEncoding() throws {
        let hostile = [Data("<?xml version=\"1.0\"?><!--encoding=\"latin1\"--><".utf8) + Data([0xD2, 0x78]) + Data("/>".utf8),
                       Data("<?xml version=\"1.0\"?><a encoding='latin1'><".utf8) + Data([0xD2, 0x78]) + Data("/></a>".utf8)]
        for body in hostile {
            for serializer in [XMLDocumentResponseSerializer(), XMLParserResponseSerializer()] as [HTTPResponseSerializer] {
                let outcome = fetch(body, with: serializer)
                XCTAssertNil(outcome.object)
                XCTAssertEqual(outcome.error?.domain, XMLParser.errorDomain, String(describing: outcome.error))
            }
        }
        let spaced = Data("<?xml version=\"1.0\" encoding = 'ISO-8859-1' ?><r>caf".utf8) + Data([0xE9]) + Data("</r>".utf8)
        let outcome = fetch(spaced, with: XMLDocumentResponseSerializer())
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.object as? XMLDocument)?.rootElement()?.stringValue, "café")
    }

    /// Collects the characters a parse reports.
    private final class TextCollector: NSObject, XMLParserDelegate {
        var text = ""
        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
    }
}
