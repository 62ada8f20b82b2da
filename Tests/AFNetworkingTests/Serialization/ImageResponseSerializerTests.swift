import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// Minimal headers for each format, built by hand so the tests need no fixtures.
enum ImageSamples {
    static func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
    static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func le32(_ v: Int) -> [UInt8] { le16(v & 0xFFFF) + le16((v >> 16) & 0xFFFF) }
    static func be32(_ v: Int) -> [UInt8] { be16((v >> 16) & 0xFFFF) + be16(v & 0xFFFF) }
    static func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

    static func png(_ w: Int, _ h: Int) -> Data {
        Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + ascii("IHDR") + be32(w) + be32(h) + [8, 6, 0, 0, 0])
    }
    static func gif(_ w: Int, _ h: Int) -> Data { Data(ascii("GIF89a") + le16(w) + le16(h) + [0, 0, 0]) }
    static func jpeg(_ w: Int, _ h: Int) -> Data {
        let app0: [UInt8] = [0xFF, 0xE0] + be16(16) + ascii("JFIF") + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        let sof: [UInt8] = [0xFF, 0xC0] + be16(17) + [8] + be16(h) + be16(w) + [3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]
        return Data([0xFF, 0xD8] + app0 + sof + [0xFF, 0xD9])
    }
    static func webpLossy(_ w: Int, _ h: Int) -> Data {
        Data(ascii("RIFF") + le32(30) + ascii("WEBP") + ascii("VP8 ") + le32(10) + [0, 0, 0, 0x9D, 0x01, 0x2A] + le16(w) + le16(h))
    }
    static func webpLossless(_ w: Int, _ h: Int) -> Data {
        let bits = (w - 1) | ((h - 1) << 14)
        return Data(ascii("RIFF") + le32(20) + ascii("WEBP") + ascii("VP8L") + le32(5) + [0x2F] + le32(bits))
    }
    static func webpExtended(_ w: Int, _ h: Int) -> Data {
        let wm = w - 1, hm = h - 1
        return Data(ascii("RIFF") + le32(22) + ascii("WEBP") + ascii("VP8X") + le32(10) + [0, 0, 0, 0]
            + [UInt8(wm & 0xFF), UInt8((wm >> 8) & 0xFF), UInt8((wm >> 16) & 0xFF)]
            + [UInt8(hm & 0xFF), UInt8((hm >> 8) & 0xFF), UInt8((hm >> 16) & 0xFF)])
    }
    static func bmp(_ w: Int, _ h: Int) -> Data {
        Data(ascii("BM") + le32(54) + [0, 0, 0, 0] + le32(54) + le32(40) + le32(w) + le32(h) + le16(1) + le16(24))
    }
}

final class ImageResponseSerializerTests: XCTestCase {
    let serializer = ImageResponseSerializer()

    func testParsesEachFormat() {
        let cases: [(Data, Image.Format, Int, Int)] = [
            (ImageSamples.png(640, 480), .png, 640, 480),
            (ImageSamples.gif(32, 16), .gif, 32, 16),
            (ImageSamples.jpeg(1024, 768), .jpeg, 1024, 768),
            (ImageSamples.webpLossy(300, 200), .webp, 300, 200),
            (ImageSamples.webpLossless(5000, 3), .webp, 5000, 3),
            (ImageSamples.webpExtended(70000, 9), .webp, 70000, 9),
            (ImageSamples.bmp(12, -34), .bmp, 12, 34),
        ]
        for (data, format, width, height) in cases {
            let image = Image(data: data)
            XCTAssertEqual(image?.format, format)
            XCTAssertEqual(image?.pixelWidth, width, "\(format)")
            XCTAssertEqual(image?.pixelHeight, height, "\(format)")
            XCTAssertEqual(image?.data, data)
        }
    }

    func testSerializerReturnsImageForImageTypes() throws {
        let image = try serializer.responseObject(for: makeResponse(contentType: "image/png"), data: ImageSamples.png(2, 3)) as? Image
        XCTAssertEqual(image?.pixelWidth, 2)
        XCTAssertEqual(image?.pixelHeight, 3)
        XCTAssertNotNil(try serializer.responseObject(for: makeResponse(contentType: "image/webp"), data: ImageSamples.webpLossy(1, 1)))
        XCTAssertNil(try serializer.responseObject(for: makeResponse(contentType: "image/png"), data: Data()))
    }

    func testSerializerRejectsNonImageContentTypeAndGarbage() {
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(contentType: "text/html"), data: ImageSamples.png(1, 1)))
        let error = assertThrowsNSError(try serializer.responseObject(for: makeResponse(contentType: "image/png"), data: Data("nope".utf8)))
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
        XCTAssertNotNil(error?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey])
    }

    func testTruncatedHeadersReturnNil() {
        for sample in [ImageSamples.png(5, 5), ImageSamples.jpeg(5, 5), ImageSamples.gif(5, 5), ImageSamples.webpLossy(5, 5),
                       ImageSamples.webpExtended(5, 5), ImageSamples.bmp(5, 5)] {
            for length in 0..<min(sample.count, 22) {
                let image = Image(data: sample.prefix(length))
                if let image = image { XCTAssertEqual(image.pixelWidth, 5) }
            }
        }
        XCTAssertNil(Image(data: ImageSamples.png(0, 5)))
    }
}

private struct Widget: Decodable, Equatable {
    let id: Int
    let createdAt: Date
}

final class DecodableResponseSerializerTests: XCTestCase {
    func testDecodesWithConfiguredDecoder() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .secondsSince1970
        let serializer = DecodableResponseSerializer<Widget>(decoder: decoder)
        let body = Data(#"{"id":7,"created_at":100}"#.utf8)
        let widget = try serializer.decodedObject(for: makeResponse(), data: body)
        XCTAssertEqual(widget, Widget(id: 7, createdAt: Date(timeIntervalSince1970: 100)))
        XCTAssertEqual(try serializer.responseObject(for: makeResponse(), data: body) as? Widget, widget)
    }

    func testDecodingErrorKeepsResponseAndData() {
        let serializer = DecodableResponseSerializer<Widget>()
        let response = makeResponse()
        let body = Data(#"{"id":"seven"}"#.utf8)
        let error = assertThrowsNSError(try serializer.decodedObject(for: response, data: body))
        XCTAssertEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
        XCTAssertTrue(error?.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse === response)
        XCTAssertEqual(error?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data, body)
        XCTAssertNotNil(error?.userInfo[NSUnderlyingErrorKey])
    }

    func testValidationAndEmptyBody() throws {
        let serializer = DecodableResponseSerializer<[Int]>()
        XCTAssertEqual(try serializer.decodedObject(for: makeResponse(), data: Data("[1,2]".utf8)), [1, 2])
        XCTAssertNil(try serializer.decodedObject(for: makeResponse(), data: Data(" ".utf8)))
        let error = assertThrowsNSError(try serializer.decodedObject(for: makeResponse(status: 404), data: Data("[1]".utf8)))
        XCTAssertEqual(error?.code, NSURLErrorBadServerResponse)
        XCTAssertThrowsError(try serializer.decodedObject(for: makeResponse(contentType: "text/html"), data: Data("[1]".utf8)))
    }

    func testCopyIsIndependentAndArchivingDoesNotTrap() throws {
        let serializer = DecodableResponseSerializer<[Int]>()
        serializer.decoder.keyDecodingStrategy = .convertFromSnakeCase
        let copy = serializer.copy() as? DecodableResponseSerializer<[Int]>
        XCTAssertNotNil(copy)
        XCTAssertFalse(copy?.decoder === serializer.decoder)
        let data = try NSKeyedArchiver.archivedData(withRootObject: serializer, requiringSecureCoding: true)
        let decoded = try NSKeyedUnarchiver.unarchivedObject(ofClass: JSONResponseSerializer.self, from: data)
        XCTAssertEqual(decoded?.acceptableContentTypes, serializer.acceptableContentTypes)
    }
}
