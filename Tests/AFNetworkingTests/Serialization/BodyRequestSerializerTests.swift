import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

final class JSONRequestSerializerTests: XCTestCase {
    let serializer = JSONRequestSerializer()

    // 2.7: testThatJSONRequestSerializationHandlesParametersDictionary
    func testDictionaryBody() throws {
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: ["key": "value"])
        XCTAssertEqual(String(data: request.httpBody ?? Data(), encoding: .utf8), #"{"key":"value"}"#)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Type"), "application/json")
    }

    // 2.7: testThatJSONRequestSerializationHandlesParametersArray
    func testArrayBody() throws {
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: [["key": "value"]])
        XCTAssertEqual(String(data: request.httpBody ?? Data(), encoding: .utf8), #"[{"key":"value"}]"#)
    }

    func testGETStillUsesQueryString() throws {
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: ["a": "b"])
        XCTAssertEqual(request.url?.query, "a=b")
        XCTAssertNil(request.httpBody)
    }

    func testNoParametersMeansNoBodyAndNoContentType() throws {
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: nil)
        XCTAssertNil(request.httpBody)
        XCTAssertNil(request.value(forHTTPHeaderField: "Content-Type"))
    }

    func testCallerContentTypeKept() throws {
        var request = URLRequest(url: URL(string: "http://example.com")!)
        request.httpMethod = "PUT"
        request.setValue("application/vnd.api+json", forHTTPHeaderField: "Content-Type")
        let serialized = try serializer.requestBySerializingRequest(request, withParameters: ["a": 1])
        XCTAssertEqual(serialized.value(forHTTPHeaderField: "Content-Type"), "application/vnd.api+json")
    }

    func testInvalidObjectsThrowInsteadOfTrapping() {
        let invalid: [Any] = [["d": Date()], ["n": Double.nan], ["i": Double.infinity], "bare string", 42, ["u": URL(string: "http://x")!]]
        for parameters in invalid {
            let error = assertThrowsNSError(try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: parameters))
            XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain, "\(parameters)")
        }
    }

    func testFragmentsWithOption() throws {
        let lenient = JSONRequestSerializer(writingOptions: .fragmentsAllowed)
        let request = try lenient.request(withMethod: "POST", urlString: "http://example.com", parameters: "hi")
        XCTAssertEqual(request.httpBody, Data(#""hi""#.utf8))
    }
}

final class PropertyListRequestSerializerTests: XCTestCase {
    func testWritesPlistBody() throws {
        let serializer = PropertyListRequestSerializer()
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: ["a": "b"])
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Type"), "application/x-plist")
        let object = try PropertyListSerialization.propertyList(from: request.httpBody ?? Data(), options: [], format: nil)
        XCTAssertEqual((object as? [String: Any])?["a"] as? String, "b")
    }

    func testInvalidObjectThrows() {
        let serializer = PropertyListRequestSerializer()
        let error = assertThrowsNSError(try serializer.request(withMethod: "POST", urlString: "http://example.com",
                                                               parameters: ["n": NSNull()]))
        XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain)
    }
}
