import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest
@testable import AFNetworking

/// Property-style robustness tests: seeded random corruption of valid bodies, bounded in
/// count, must end in a value or a thrown error, never a trap or a hang.
final class BadInputPropertyTests: XCTestCase {
    private var generator = SeededGenerator(seed: 0xAF27)

    private func mutate(_ data: Data) -> Data {
        var bytes = [UInt8](data)
        switch Int.random(in: 0..<5, using: &generator) {
        case 0 where !bytes.isEmpty: // truncate
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
        case 1 where !bytes.isEmpty: // flip bytes
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
        case 2: // insert random bytes
            let insert = (0..<Int.random(in: 1...8, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes.insert(contentsOf: insert, at: Int.random(in: 0...bytes.count, using: &generator))
        case 3 where bytes.count > 1: // duplicate a slice
            let start = Int.random(in: 0..<bytes.count, using: &generator)
            let end = Int.random(in: start...bytes.count, using: &generator)
            bytes.insert(contentsOf: bytes[start..<end], at: start)
        default: // pure noise
            bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        return Data(bytes)
    }

    /// Runs `serializer` over `count` mutations of each seed; only outcome is value or throw.
    private func fuzz(_ serializer: HTTPResponseSerializer, contentType: String, seeds: [Data], count: Int) {
        let response = makeResponse(contentType: contentType)
        for seed in seeds {
            for _ in 0..<count {
                _ = try? serializer.responseObject(for: response, data: mutate(seed))
            }
        }
    }

    func testJSONMutations() {
        let seeds = [#"{"a":[1,2.5,-3e10,true,false,null,"x\u00e9\n"],"b":{"c":{}}}"#, "[]", #"[{"k":"v"}]"#].map { Data($0.utf8) }
        let serializer = JSONResponseSerializer()
        serializer.removesKeysWithNullValues = true
        fuzz(serializer, contentType: "application/json; charset=utf-8", seeds: seeds, count: 1000)
        fuzz(DecodableResponseSerializer<[String: [Int]]>(), contentType: "application/json", seeds: seeds, count: 100)
    }

    func testJSONHostileShapes() {
        let serializer = JSONResponseSerializer()
        let response = makeResponse()
        let hostile: [String] = [
            String(repeating: "[", count: 100_000),
            String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000),
            String(repeating: #"{"a":"#, count: 10_000),
            "[1e99999]", "[-1e99999]", "[1e-99999]", "[123456789012345678901234567890123456789]",
            "[" + String(repeating: "9", count: 10_000) + "]", #"["\ud800"]"#, #"["\u"]"#, "[\"" + String(repeating: "\\", count: 1001) + "\"]",
        ]
        for body in hostile {
            _ = try? serializer.responseObject(for: response, data: Data(body.utf8))
        }
        for _ in 0..<200 { // invalid UTF-8 in every position
            var bytes = Array(#"{"key":"value"}"#.utf8)
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0x80...0xFF, using: &generator)
            XCTAssertThrowsError(try serializer.responseObject(for: response, data: Data(bytes)))
        }
    }

    func testPropertyListMutations() throws {
        let xml = try PropertyListSerialization.data(fromPropertyList: ["a": [1, "two", 3.5, true], "d": Data([1, 2, 3]), "t": Date(timeIntervalSince1970: 0)],
                                                     format: .xml, options: 0)
        let binary = try PropertyListSerialization.data(fromPropertyList: ["a": [1, "two", 3.5, true], "n": ["x": "y"]],
                                                        format: .binary, options: 0)
        fuzz(PropertyListResponseSerializer(), contentType: "application/x-plist", seeds: [xml, binary], count: 1000)
        let deep = "<plist><array>" + String(repeating: "<array>", count: 50_000) + "</array></plist>"
        XCTAssertThrowsError(try PropertyListResponseSerializer().responseObject(for: makeResponse(contentType: "application/x-plist"),
                                                                                data: Data(deep.utf8)))
    }

    func testXMLMutations() {
        let seeds = [Data("<?xml version=\"1.0\" encoding=\"UTF-8\"?><a x=\"1\"><b>t&amp;t</b><![CDATA[c]]><!-- c --></a>".utf8)]
        fuzz(XMLDocumentResponseSerializer(), contentType: "text/xml", seeds: seeds, count: 400)
        let deep = String(repeating: "<a>", count: 20_000) + String(repeating: "</a>", count: 20_000)
        XCTAssertThrowsError(try XMLDocumentResponseSerializer().responseObject(for: makeResponse(contentType: "text/xml"), data: Data(deep.utf8)))
    }

    func testXMLEntityExpansionIsRefused() {
        var doctype = "<!DOCTYPE lolz [<!ENTITY lol \"lollollollollollollollollollol\">"
        var previous = "lol"
        for level in 1...9 {
            let name = "lol\(level)"
            doctype += "<!ENTITY \(name) \"" + String(repeating: "&\(previous);", count: 10) + "\">"
            previous = name
        }
        doctype += "]>"
        let body = Data((doctype + "<lolz>&\(previous);</lolz>").utf8)
        // Refused with a parse error, not expanded to a billion "lol"s (nor a document holding them).
        XCTAssertThrowsError(try XMLDocumentResponseSerializer().responseObject(for: makeResponse(contentType: "text/xml"), data: body)) {
            XCTAssertEqual(($0 as NSError).domain, XMLParser.errorDomain, "\($0)")
        }
    }

    func testImageMutations() {
        let seeds = [ImageSamples.png(3, 4), ImageSamples.jpeg(5, 6), ImageSamples.gif(7, 8), ImageSamples.webpLossy(9, 10),
                     ImageSamples.webpLossless(11, 12), ImageSamples.webpExtended(13, 14), ImageSamples.bmp(15, 16)]
        fuzz(ImageResponseSerializer(), contentType: "image/png", seeds: seeds, count: 1000)
        // A JPEG made only of markers with no frame header must end, not loop.
        let markers = Data([0xFF, 0xD8] + Array(repeating: [0xFF, 0xE1, 0x00, 0x02], count: 10_000).joined())
        XCTAssertNil(Image(data: markers))
    }

    func testQueryBuilderWithRandomValues() {
        let serializer = HTTPRequestSerializer()
        for _ in 0..<200 {
            let scalars = (0..<Int.random(in: 0...20, using: &generator)).compactMap { _ in
                Unicode.Scalar(UInt32.random(in: 0...0x10FFFF, using: &generator))
            }
            let text = String(String.UnicodeScalarView(scalars))
            let parameters: [String: Any] = [text: [text: [text, 1, true, NSNull()]], "s": Set([text, "x"])]
            for method in ["GET", "POST"] {
                XCTAssertNoThrow(try serializer.request(withMethod: method, urlString: "http://example.com/p", parameters: parameters))
            }
        }
    }
}
