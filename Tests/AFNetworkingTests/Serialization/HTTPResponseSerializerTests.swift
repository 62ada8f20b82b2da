import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

final class HTTPResponseSerializerTests: XCTestCase {
    let serializer = HTTPResponseSerializer()

    // 2.7: testThatAFHTTPResponseSerializationHandlesAll2XXCodes
    func testAll2xxCodesAreAccepted() {
        for status in 200..<300 {
            XCTAssertTrue(serializer.acceptableStatusCodes?.contains(status) ?? false)
            XCTAssertNoThrow(try serializer.validate(makeResponse(status: status, contentType: "text/html"),
                                                     data: Data("text".utf8)), "status \(status)")
        }
    }

    // 2.7: testThatAFHTTPResponseSerializationFailsAll4XX5XXStatusCodes
    func testAll4xx5xxCodesFail() {
        for status in 400..<600 {
            XCTAssertFalse(serializer.acceptableStatusCodes?.contains(status) ?? true)
            XCTAssertThrowsError(try serializer.validate(makeResponse(status: status, contentType: "text/html"),
                                                         data: Data("text".utf8)), "status \(status)")
        }
    }

    func testStatusErrorCarries27DomainCodeKeysAndMessage() {
        let response = makeResponse(status: 404, contentType: "text/html")
        let body = Data("missing".utf8)
        guard let error = assertThrowsNSError(try serializer.validate(response, data: body)) else { return }
        XCTAssertEqual(error.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(error.localizedDescription, "Request failed: not found (404)")
        XCTAssertTrue(error.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse === response)
        XCTAssertEqual(error.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data, body)
        XCTAssertEqual(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL, testBaseURL)
        XCTAssertNil(error.userInfo[NSUnderlyingErrorKey])
    }

    func testContentTypeErrorMessageAndCode() {
        serializer.acceptableContentTypes = ["application/json"]
        guard let error = assertThrowsNSError(try serializer.validate(makeResponse(contentType: "text/html"),
                                                                      data: Data("<html>".utf8))) else { return }
        XCTAssertEqual(error.code, NSURLErrorCannotDecodeContentData)
        XCTAssertEqual(error.localizedDescription, "Request failed: unacceptable content-type: text/html")
    }

    func testStatusAndContentTypeErrorsAreChained() {
        serializer.acceptableContentTypes = ["application/json"]
        guard let error = assertThrowsNSError(try serializer.validate(makeResponse(status: 500, contentType: "text/html"),
                                                                      data: Data("x".utf8))) else { return }
        XCTAssertEqual(error.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(error.localizedDescription, "Request failed: internal server error (500)")
        let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
        XCTAssertEqual(underlying?.code, NSURLErrorCannotDecodeContentData)
    }

    func testWrongContentTypeWithoutBodyIsNotAnError() {
        serializer.acceptableContentTypes = ["application/json"]
        XCTAssertNoThrow(try serializer.validate(makeResponse(contentType: "text/html"), data: Data()))
        XCTAssertNoThrow(try serializer.validate(makeResponse(contentType: "text/html"), data: nil))
    }

    func testNilAcceptableSetsAcceptEverything() {
        serializer.acceptableStatusCodes = nil
        serializer.acceptableContentTypes = nil
        XCTAssertNoThrow(try serializer.validate(makeResponse(status: 503, contentType: "x/y"), data: Data("a".utf8)))
        XCTAssertNoThrow(try serializer.validate(nil, data: nil))
    }

    func testBaseResponseObjectReturnsData() throws {
        let data = Data("raw".utf8)
        XCTAssertEqual(try serializer.responseObject(for: makeResponse(), data: data) as? Data, data)
        XCTAssertNil(try serializer.responseObject(for: makeResponse(), data: nil))
        XCTAssertThrowsError(try serializer.responseObject(for: makeResponse(status: 404), data: data))
    }

    func testFactoryAndCopy() {
        let made = JSONResponseSerializer.serializer()
        XCTAssertTrue(type(of: made) == JSONResponseSerializer.self)
        serializer.acceptableStatusCodes = IndexSet([200, 201])
        serializer.acceptableContentTypes = ["a/b"]
        serializer.stringEncoding = .isoLatin1
        guard let copy = serializer.copy() as? HTTPResponseSerializer else { return XCTFail("copy type") }
        XCTAssertFalse(copy === serializer)
        XCTAssertEqual(copy.acceptableStatusCodes, IndexSet([200, 201]))
        XCTAssertEqual(copy.acceptableContentTypes, ["a/b"])
        XCTAssertEqual(copy.stringEncoding, .isoLatin1)
    }

    func testSecureCodingRoundTrip() throws {
        serializer.acceptableStatusCodes = IndexSet(integersIn: 200..<205).union(IndexSet([304]))
        serializer.acceptableContentTypes = ["text/plain", "text/html"]
        let decoded = try archiveRoundTrip(serializer, as: HTTPResponseSerializer.self)
        XCTAssertEqual(decoded?.acceptableStatusCodes, serializer.acceptableStatusCodes)
        XCTAssertEqual(decoded?.acceptableContentTypes, serializer.acceptableContentTypes)
        serializer.acceptableStatusCodes = nil
        let decodedNil = try archiveRoundTrip(serializer, as: HTTPResponseSerializer.self)
        XCTAssertNil(decodedNil?.acceptableStatusCodes)
    }

    func testEverySerializerCopiesAndArchivesAsItsClass() throws {
        let serializers: [HTTPResponseSerializer] = [
            HTTPResponseSerializer(), JSONResponseSerializer(), XMLParserResponseSerializer(),
            XMLDocumentResponseSerializer(), PropertyListResponseSerializer(), ImageResponseSerializer(),
            CompoundResponseSerializer(responseSerializers: [JSONResponseSerializer()]),
        ]
        for serializer in serializers {
            let copy = serializer.copy() as AnyObject
            XCTAssertTrue(type(of: copy) == type(of: serializer))
            let data = try NSKeyedArchiver.archivedData(withRootObject: serializer, requiringSecureCoding: true)
            let decoded = try NSKeyedUnarchiver.unarchivedObject(ofClasses: [type(of: serializer), NSArray.self, JSONResponseSerializer.self], from: data)
            XCTAssertTrue(type(of: decoded as AnyObject) == type(of: serializer), "\(type(of: serializer))")
            XCTAssertEqual((decoded as? HTTPResponseSerializer)?.acceptableContentTypes, serializer.acceptableContentTypes)
        }
    }
}
