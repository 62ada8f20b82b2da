import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

final class HTTPRequestSerializerTests: XCTestCase {
    var serializer = HTTPRequestSerializer()

    override func setUp() {
        super.setUp()
        serializer = HTTPRequestSerializer.serializer()
    }

    private func post(_ url: String = "http://example.com") -> URLRequest {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        return request
    }

    // 2.7: testThatAFHTTPRequestSerializationSerializesPOSTRequestsProperly
    func testPOSTEncodesFormBody() throws {
        let request = try serializer.requestBySerializingRequest(post(), withParameters: ["key": "value"])
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded")
        XCTAssertEqual(request.httpBody, Data("key=value".utf8))
    }

    // 2.7: ...SerializesPOSTRequestsProperlyWhenNoParameterIsProvided
    func testPOSTWithoutParametersHasEmptyFormBody() throws {
        let request = try serializer.requestBySerializingRequest(post(), withParameters: nil)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded")
        XCTAssertEqual(request.httpBody, Data())
    }

    func testCallerContentTypeIsKept() throws {
        var request = post()
        request.setValue("text/plain", forHTTPHeaderField: "Content-Type")
        let serialized = try serializer.requestBySerializingRequest(request, withParameters: ["a": "b"])
        XCTAssertEqual(serialized.value(forHTTPHeaderField: "Content-Type"), "text/plain")
    }

    // 2.7: testThatAFHTTPRequestSerialiationSerializesQueryParametersCorrectly
    func testGETEncodesQuery() throws {
        let request = try serializer.requestBySerializingRequest(URLRequest(url: URL(string: "http://example.com")!),
                                                                 withParameters: ["key": "value"])
        XCTAssertEqual(request.url?.query, "key=value")
        XCTAssertNil(request.httpBody)
    }

    // 2.7: ...SerializesURLEncodableQueryParametersCorrectly
    func testReservedCharactersAreEscapedExceptSlashAndQuestionMark() throws {
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com",
                                             parameters: ["key": " :#[]@!$&'()*+,;=/?"])
        XCTAssertEqual(request.url?.query, "key=%20%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D/?")
    }

    // 2.7: ...SerializesURLEncodedQueryParametersCorrectly
    func testAlreadyEncodedValuesAreEscapedAgain() throws {
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com",
                                             parameters: ["key": "%20%21%22%23%24%25%26%27%28%29%2A%2B%2C%2F"])
        XCTAssertEqual(request.url?.query, "key=%2520%2521%2522%2523%2524%2525%2526%2527%2528%2529%252A%252B%252C%252F")
    }

    // 2.7: ...FromQuerySerializationBlock
    func testCustomQueryBlock() throws {
        serializer.setQueryStringSerializationWith { _, parameters in
            guard let dictionary = parameters as? [String: String] else { return "" }
            return dictionary.map { "\($0.key)**\($0.value)" }.joined()
        }
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: ["key": "value"])
        XCTAssertEqual(request.url?.query, "key**value")
        serializer.setQueryStringSerializationWith(.defaultStyle)
        let plain = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: ["key": "value"])
        XCTAssertEqual(plain.url?.query, "key=value")
    }

    // 2.7: testQueryStringSerializationCanFailWithError
    func testQueryBlockErrorIsThrownUnchanged() {
        let expected = NSError(domain: "TestDomain", code: 0)
        serializer.setQueryStringSerializationWith { _, _ in throw expected }
        let error = assertThrowsNSError(try serializer.request(withMethod: "GET", urlString: "url", parameters: [String: Any]()))
        XCTAssertEqual(error, expected)
    }

    // 2.7: testThatValueForHTTPHeaderFieldReturnsSetValue / ...ReturnsNilForUnsetHeader
    func testHeaderAccessors() {
        serializer.setValue("Actual Value", forHTTPHeaderField: "Set-Header")
        XCTAssertEqual(serializer.value(forHTTPHeaderField: "Set-Header"), "Actual Value")
        XCTAssertEqual(serializer.value(forHTTPHeaderField: "set-header"), "Actual Value")
        XCTAssertNil(serializer.value(forHTTPHeaderField: "Unset-Header"))
        serializer.setValue(nil, forHTTPHeaderField: "SET-HEADER")
        XCTAssertNil(serializer.value(forHTTPHeaderField: "Set-Header"))
    }

    // 2.7: testThatEmojiIsProperlyEncoded
    func testEmojiIsEncodedWhole() throws {
        var parameter = "!"
        while parameter.utf16.count < 50 { parameter += "👴🏿👷🏻👮🏽" }
        let request = try serializer.request(withMethod: "GET", urlString: "http://test.com", parameters: ["test": parameter])
        let group = "%F0%9F%91%B4%F0%9F%8F%BF%F0%9F%91%B7%F0%9F%8F%BB%F0%9F%91%AE%F0%9F%8F%BD"
        XCTAssertEqual(request.url?.query, "test=%21" + String(repeating: group, count: 5))
    }

    func testDefaultHeaders() {
        let headers = serializer.httpRequestHeaders
        XCTAssertNotNil(headers["Accept-Language"])
        let agent = headers["User-Agent"] ?? ""
        XCTAssertTrue(agent.contains("(Linux; "), agent)
        XCTAssertTrue(agent.unicodeScalars.allSatisfy { $0.isASCII })
        XCTAssertEqual(DefaultHeaders.acceptLanguage(preferredLanguages: ["en-US", "fr", "de", "es", "it", "nl", "sv"]),
                       "en-US;q=1, fr;q=0.9, de;q=0.8, es;q=0.7, it;q=0.6, nl;q=0.5")
        XCTAssertEqual(DefaultHeaders.acceptLanguage(preferredLanguages: ["en"]), "en;q=1")
        XCTAssertEqual(DefaultHeaders.asciiOnly("Café\r\nX: 😀"), "CafeX: ")
    }

    func testDefaultHeadersDoNotOverrideRequestHeaders() throws {
        serializer.setValue("default", forHTTPHeaderField: "X-Thing")
        var request = URLRequest(url: URL(string: "http://example.com")!)
        request.setValue("mine", forHTTPHeaderField: "x-thing")
        let serialized = try serializer.requestBySerializingRequest(request, withParameters: nil)
        XCTAssertEqual(serialized.value(forHTTPHeaderField: "X-Thing"), "mine")
    }

    func testBasicAuthorization() {
        serializer.setAuthorizationHeaderFieldWithUsername("Aladdin", password: "open sesame")
        XCTAssertEqual(serializer.value(forHTTPHeaderField: "Authorization"), "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        serializer.clearAuthorizationHeader()
        XCTAssertNil(serializer.value(forHTTPHeaderField: "Authorization"))
    }

    /// RFC 7617 §2: Basic cannot carry a user name holding ":". The 2.7
    /// setter cannot throw, so building a request with that default throws
    /// (also from a copy and an archived serializer); a user name without one,
    /// or a request's own Authorization, is unaffected.
    func testBasicAuthorizationWithAColonInTheUserNameIsRefusedWhenARequestIsBuilt() throws {
        serializer.setAuthorizationHeaderFieldWithUsername("team:alice", password: "pw")
        func refused(_ serializer: HTTPRequestSerializer, _ note: String) {
            XCTAssertThrowsError(try serializer.request(withMethod: "GET", urlString: "http://example.com/x", parameters: nil), note) { error in
                let error = error as NSError
                XCTAssertEqual(error.domain, NSURLErrorDomain, note)
                XCTAssertEqual(error.code, NSURLErrorBadURL, note)
                XCTAssertTrue(error.localizedDescription.contains("RFC 7617"), error.localizedDescription)
            }
        }
        refused(serializer, "the serializer")
        refused(try XCTUnwrap(serializer.copy() as? HTTPRequestSerializer), "a copy")
        let archive = try NSKeyedArchiver.archivedData(withRootObject: serializer, requiringSecureCoding: true)
        refused(try XCTUnwrap(try NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPRequestSerializer.self, from: archive)), "an archived copy")

        var own = URLRequest(url: URL(string: "http://example.com/own")!)
        own.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        let kept = try serializer.requestBySerializingRequest(own, withParameters: nil)
        XCTAssertEqual(kept.value(forHTTPHeaderField: "Authorization"), "Bearer t", "the request's own field wins, as before")

        serializer.setAuthorizationHeaderFieldWithUsername("alice", password: "pass:word")
        let fine = try serializer.request(withMethod: "GET", urlString: "http://example.com/x", parameters: nil)
        XCTAssertEqual(fine.value(forHTTPHeaderField: "Authorization"), "Basic " + Data("alice:pass:word".utf8).base64EncodedString(),
                       "a colon in the password is fine")
        serializer.setAuthorizationHeaderFieldWithUsername("a:b", password: "c")
        serializer.clearAuthorizationHeader()
        XCTAssertNoThrow(try serializer.request(withMethod: "GET", urlString: "http://example.com/x", parameters: nil))
    }

    func testMethodsEncodingParametersInURI() throws {
        XCTAssertEqual(serializer.httpMethodsEncodingParametersInURI, ["GET", "HEAD", "DELETE"])
        for method in ["GET", "HEAD", "DELETE", "delete"] {
            let request = try serializer.request(withMethod: method, urlString: "http://example.com/x", parameters: ["a": 1])
            XCTAssertEqual(request.url?.query, "a=1", method)
            XCTAssertNil(request.httpBody, method)
        }
        for method in ["POST", "PUT", "PATCH"] {
            let request = try serializer.request(withMethod: method, urlString: "http://example.com/x", parameters: ["a": 1])
            XCTAssertNil(request.url?.query, method)
            XCTAssertEqual(request.httpBody, Data("a=1".utf8), method)
        }
    }

    func testQueryIsAppendedToExistingQueryAndBeforeFragment() throws {
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com/p?x=1#frag", parameters: ["y": 2])
        XCTAssertEqual(request.url?.absoluteString, "http://example.com/p?x=1&y=2#frag")
        let empty = try serializer.request(withMethod: "GET", urlString: "http://example.com/p", parameters: [String: Any]())
        XCTAssertEqual(empty.url?.absoluteString, "http://example.com/p")
    }

    func testInvalidURLStringThrows() {
        let error = assertThrowsNSError(try serializer.request(withMethod: "GET", urlString: "http://exa mple.com/\u{0}", parameters: nil))
        XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorBadURL)
    }

    func testRequestPropertiesAppliedOnlyOnceSet() throws {
        let untouched = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: nil)
        XCTAssertEqual(untouched.timeoutInterval, URLRequest(url: URL(string: "http://example.com")!).timeoutInterval)
        serializer.timeoutInterval = 12
        serializer.cachePolicy = .reloadIgnoringLocalCacheData
        serializer.httpShouldHandleCookies = false
        serializer.httpShouldUsePipelining = true
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: nil)
        XCTAssertEqual(request.timeoutInterval, 12)
        XCTAssertEqual(request.cachePolicy, .reloadIgnoringLocalCacheData)
        XCTAssertFalse(request.httpShouldHandleCookies)
        XCTAssertTrue(Self.usesPipelining(request))
    }

    func testStringEncodingAppliesToBody() throws {
        serializer.setQueryStringSerializationWith { _, _ in "name=café" }
        serializer.stringEncoding = .isoLatin1
        let request = try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: ["x": 1])
        XCTAssertEqual(request.httpBody, Data([0x6E, 0x61, 0x6D, 0x65, 0x3D, 0x63, 0x61, 0x66, 0xE9]))
        serializer.stringEncoding = .ascii
        let error = assertThrowsNSError(try serializer.request(withMethod: "POST", urlString: "http://example.com", parameters: ["x": 1]))
        XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain)
    }

    func testCopyAndSecureCoding() throws {
        serializer.setValue("v", forHTTPHeaderField: "X-A")
        serializer.timeoutInterval = 5
        serializer.setQueryStringSerializationWith { _, _ in "custom" }
        let copy = serializer.copy() as? HTTPRequestSerializer
        XCTAssertEqual(copy?.value(forHTTPHeaderField: "X-A"), "v")
        XCTAssertEqual(copy?.timeoutInterval, 5)
        XCTAssertEqual(try copy?.request(withMethod: "GET", urlString: "http://e.com", parameters: ["a": 1]).url?.query, "custom")
        let decoded = try archiveRoundTrip(serializer, as: HTTPRequestSerializer.self)
        XCTAssertEqual(decoded?.value(forHTTPHeaderField: "X-A"), "v")
        XCTAssertEqual(decoded?.httpRequestHeaders, serializer.httpRequestHeaders)
        XCTAssertEqual(decoded?.queryStringSerializationStyle, .defaultStyle)
        let json = JSONRequestSerializer(writingOptions: .sortedKeys)
        XCTAssertEqual((json.copy() as? JSONRequestSerializer)?.writingOptions, .sortedKeys)
        XCTAssertEqual(try archiveRoundTrip(json, as: JSONRequestSerializer.self)?.writingOptions, .sortedKeys)
        let plist = PropertyListRequestSerializer(format: .binary, writeOptions: 0)
        XCTAssertEqual((plist.copy() as? PropertyListRequestSerializer)?.format, .binary)
        XCTAssertEqual(try archiveRoundTrip(plist, as: PropertyListRequestSerializer.self)?.format, .binary)
    }

    /// `URLRequest.httpShouldUsePipelining`, read through a protocol requirement:
    /// FoundationNetworking deprecates the property, and the test only checks it is copied.
    private static func usesPipelining(_ request: some PipeliningReadable) -> Bool { request.httpShouldUsePipelining }
}

private protocol PipeliningReadable {
    var httpShouldUsePipelining: Bool { get }
}

extension URLRequest: PipeliningReadable {}
