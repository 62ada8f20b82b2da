import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

// AFNetworking 2.7's serialization suites (AFHTTPRequestSerializationTests,
// AFHTTPResponseSerializationTests, AFJSONSerializationTests,
// AFPropertyListResponseSerializerTests) and the behaviours of
// AFURLRequestSerialization.m / AFURLResponseSerialization.m they rely on,
// where no suite under Serialization/ already covers them. Written against
// the public API only (a plain `import`, as an outside caller has), so each
// test also checks that API.md's names are the ones that ship.

// MARK: - Request serialization

final class SerializationPort27RequestTests: XCTestCase {
    let serializer = HTTPRequestSerializer()

    /// Nested dictionaries become `a[b]`, arrays `a[]`, sets repeat the key in
    /// sorted order, keys sort at every level, `true` is `1` and a null value
    /// is the bare key; the same text goes in the query and in a form body.
    func testNestedParametersFlattenInSortedOrderInQueryAndForm() throws {
        let user: [String: Any] = ["name": "A B", "roles": ["admin", "dev"], "address": ["city": "X"]]
        let parameters: [String: Any] = ["z": "last", "user": user, "ids": Set([3, 1, 2]), "flag": true, "none": NSNull()]
        let expected = "flag=1&ids=1&ids=2&ids=3&none"
            + "&user%5Baddress%5D%5Bcity%5D=X&user%5Bname%5D=A%20B&user%5Broles%5D%5B%5D=admin&user%5Broles%5D%5B%5D=dev"
            + "&z=last"
        let get = try serializer.request(withMethod: "GET", urlString: "http://example.com/search", parameters: parameters)
        XCTAssertEqual(get.url?.query, expected)
        let post = try serializer.request(withMethod: "POST", urlString: "http://example.com/search", parameters: parameters)
        XCTAssertEqual(post.httpBody.map { String(decoding: $0, as: UTF8.self) }, expected)
        XCTAssertEqual(post.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded")
    }

    /// Keys and values are escaped as UTF-8 the same way, with `/` and `?`
    /// left as they are; a grapheme made of several scalars that straddles
    /// 2.7's 50-character batch edge comes out whole.
    func testUnicodeKeysAndValuesAndAGraphemeAcrossTheBatchEdge() throws {
        let family = "\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}"
        let parameters: [String: Any] = ["na\u{EF}ve key": "caf\u{E9}/\u{20AC}?&=", "z": String(repeating: "a", count: 49) + family]
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: parameters)
        XCTAssertEqual(request.url?.query, "na%C3%AFve%20key=caf%C3%A9/%E2%82%AC?%26%3D&z=" + String(repeating: "a", count: 49)
            + "%F0%9F%91%A8%E2%80%8D%F0%9F%91%A9%E2%80%8D%F0%9F%91%A7")
    }

    /// The set of methods that carry parameters in the URL is the caller's to change,
    /// for the form serializer and for the JSON one alike.
    func testChangedMethodsEncodingParametersInURI() throws {
        serializer.httpMethodsEncodingParametersInURI = ["GET", "HEAD", "DELETE", "POST"]
        let post = try serializer.request(withMethod: "POST", urlString: "http://example.com/x", parameters: ["a": 1])
        XCTAssertEqual(post.url?.query, "a=1")
        XCTAssertNil(post.httpBody)
        XCTAssertNil(post.value(forHTTPHeaderField: "Content-Type"))

        serializer.httpMethodsEncodingParametersInURI = ["GET", "HEAD"]
        let delete = try serializer.request(withMethod: "DELETE", urlString: "http://example.com/x", parameters: ["a": 1])
        XCTAssertNil(delete.url?.query)
        XCTAssertEqual(delete.httpBody, Data("a=1".utf8))
        XCTAssertEqual(delete.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded")

        let json = JSONRequestSerializer()
        json.httpMethodsEncodingParametersInURI = ["GET", "HEAD"]
        let jsonDelete = try json.request(withMethod: "DELETE", urlString: "http://example.com/x", parameters: ["a": 1])
        XCTAssertNil(jsonDelete.url?.query)
        XCTAssertEqual(jsonDelete.httpBody, Data(#"{"a":1}"#.utf8))
        XCTAssertEqual(jsonDelete.value(forHTTPHeaderField: "Content-Type"), "application/json")
    }

    /// Basic credentials are the UTF-8 bytes of `user:password` in Base64.
    func testBasicAuthorizationEncodesUTF8Credentials() {
        serializer.setAuthorizationHeaderFieldWithUsername("Zo\u{EB}", password: "p\u{E4}ssw\u{F6}rd")
        XCTAssertEqual(serializer.value(forHTTPHeaderField: "Authorization"), "Basic Wm/Dqzpww6Rzc3fDtnJk")
    }

    /// 2.7's deprecated token helper sets `Token token="…"`, which
    /// `clearAuthorizationHeader()` removes like any other.
    func testTokenAuthorizationHeader() throws {
        let legacy: any LegacyTokenAuthorization = DeprecatedTokenAuthorization()
        legacy.setToken("abc123", on: serializer)
        XCTAssertEqual(serializer.value(forHTTPHeaderField: "Authorization"), #"Token token="abc123""#)
        let request = try serializer.request(withMethod: "GET", urlString: "http://example.com", parameters: nil)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Authorization"), #"Token token="abc123""#)
        serializer.clearAuthorizationHeader()
        XCTAssertNil(serializer.value(forHTTPHeaderField: "Authorization"))
    }

    /// `writingOptions` reach JSONSerialization.
    func testJSONWritingOptionsAreUsed() throws {
        let sorted = JSONRequestSerializer(writingOptions: .sortedKeys)
        let request = try sorted.request(withMethod: "POST", urlString: "http://example.com", parameters: ["b": 1, "a": 2])
        XCTAssertEqual(request.httpBody, Data(#"{"a":2,"b":1}"#.utf8))

        let pretty = JSONRequestSerializer(writingOptions: .prettyPrinted)
        let prettyRequest = try pretty.request(withMethod: "POST", urlString: "http://example.com", parameters: ["key": "value"])
        let body = try XCTUnwrap(prettyRequest.httpBody)
        XCTAssertTrue(body.contains(UInt8(ascii: "\n")), String(decoding: body, as: UTF8.self))
        XCTAssertEqual(try JSONSerialization.jsonObject(with: body) as? [String: String], ["key": "value"])
    }

    /// The JSON serializer sets the default headers too, as the form one does.
    func testJSONRequestCarriesTheDefaultHeaders() throws {
        let json = JSONRequestSerializer()
        json.setValue("yes", forHTTPHeaderField: "X-Default")
        let request = try json.request(withMethod: "PUT", urlString: "http://example.com", parameters: ["k": "v"])
        XCTAssertEqual(request.value(forHTTPHeaderField: "X-Default"), "yes")
        XCTAssertEqual(request.value(forHTTPHeaderField: "User-Agent"), json.value(forHTTPHeaderField: "User-Agent"))
    }

    /// Parameters JSON cannot hold throw, naming the request.
    func testJSONOfAValueJSONCannotHoldIsAnError() {
        // API.md: an error, where 2.7's NSJSONSerialization raised an exception.
        let error = assertThrowsNSError(try JSONRequestSerializer().request(withMethod: "POST", urlString: "http://example.com/json",
                                                                            parameters: ["when": Date()]))
        XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeRawData)
        let failing = error?.userInfo[AFNetworkingOperationFailingURLRequestErrorKey] as? URLRequest
        XCTAssertEqual(failing?.url?.absoluteString, "http://example.com/json")
    }

    /// The property-list serializer writes the format it is given (XML by default).
    func testPropertyListFormats() throws {
        let xml = try PropertyListRequestSerializer().request(withMethod: "POST", urlString: "http://example.com", parameters: ["a": "b"])
        XCTAssertTrue(String(decoding: xml.httpBody ?? Data(), as: UTF8.self).hasPrefix("<?xml"))

        let binary = PropertyListRequestSerializer(format: .binary, writeOptions: 0)
        XCTAssertEqual(binary.format, .binary)
        let request = try binary.request(withMethod: "POST", urlString: "http://example.com", parameters: ["a": "b", "n": 3] as [String: Any])
        let body = try XCTUnwrap(request.httpBody)
        XCTAssertTrue(body.starts(with: Data("bplist00".utf8)))
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Type"), "application/x-plist")
        var format = PropertyListSerialization.PropertyListFormat.xml
        let object = try PropertyListSerialization.propertyList(from: body, options: [], format: &format) as? [String: Any]
        XCTAssertEqual(format, .binary)
        XCTAssertEqual(object?["a"] as? String, "b")
        XCTAssertEqual((object?["n"] as? NSNumber)?.intValue, 3)
    }

    /// A GET through the property-list serializer still uses the query string.
    func testPropertyListGETUsesTheQueryString() throws {
        let request = try PropertyListRequestSerializer().request(withMethod: "GET", urlString: "http://example.com", parameters: ["a": "b"])
        XCTAssertEqual(request.url?.query, "a=b")
        XCTAssertNil(request.httpBody)
        XCTAssertNil(request.value(forHTTPHeaderField: "Content-Type"))
    }
}

/// The deprecated 2.7 token helper, called through a requirement that is not
/// deprecated so that the build raises no warning.
private protocol LegacyTokenAuthorization {
    func setToken(_ token: String, on serializer: HTTPRequestSerializer)
}

private struct DeprecatedTokenAuthorization: LegacyTokenAuthorization {
    @available(*, deprecated)
    func setToken(_ token: String, on serializer: HTTPRequestSerializer) {
        serializer.setAuthorizationHeaderFieldWithToken(token)
    }
}

// MARK: - Multipart forms

final class SerializationPort27MultipartTests: MultipartTestCase {
    /// The body stream read to its end; `largestRead` is the most one read returned.
    private func drain(_ request: URLRequest, chunk: Int = 4096) -> (body: Data, largestRead: Int) {
        guard let stream = request.httpBodyStream else {
            XCTFail("no body stream")
            return (Data(), 0)
        }
        stream.open()
        defer { stream.close() }
        var body = Data()
        var largest = 0
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = stream.read(&buffer, maxLength: chunk)
            if count < 0 {
                XCTFail("stream error \(String(describing: stream.streamError))")
                break
            }
            if count == 0 { break }
            largest = max(largest, count)
            body.append(contentsOf: buffer[0..<count])
        }
        return (body, largest)
    }

    private func boundary(of request: URLRequest) -> String {
        let type = request.value(forHTTPHeaderField: "Content-Type") ?? ""
        XCTAssertTrue(type.hasPrefix("multipart/form-data; boundary="), type)
        return type.components(separatedBy: "boundary=").last ?? ""
    }

    // 2.7: testThatAFHTTPRequestSerialiationSerializesMIMETypeCorrectly, read from the body
    // (2.7 looked into its private body parts; MultipartTests checks those).
    func testAFilePartsMIMETypeComesFromItsExtension() throws {
        let certificate = try file("adn_0.cer", Data([0x30, 0x82, 0x01, 0x0A]))
        let picture = try file("photo.PNG", Data([0x89, 0x50, 0x4E, 0x47]))
        let unknown = try file("blob.nosuchextension", Data("x".utf8))
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload", parameters: nil) { form in
            try form.appendPart(withFileURL: certificate, name: "test")
            try form.appendPart(withFileURL: picture, name: "picture")
            try form.appendPart(withFileURL: unknown, name: "other")
        }
        let text = String(decoding: drain(request).body, as: UTF8.self)
        XCTAssertTrue(text.contains("Content-Disposition: form-data; name=\"test\"; filename=\"adn_0.cer\"\r\n"
                                    + "Content-Type: application/x-x509-ca-cert\r\n\r\n"), text)
        XCTAssertTrue(text.contains("filename=\"photo.PNG\"\r\nContent-Type: image/png\r\n\r\n"), text)
        XCTAssertTrue(text.contains("filename=\"blob.nosuchextension\"\r\nContent-Type: application/octet-stream\r\n\r\n"), text)
    }

    /// Form fields are flattened as for a query string, but their names are
    /// not escaped; `Data` is sent as it is and a null as an empty part. The
    /// boundary is `Boundary+` and 16 hex digits, and the body's length is
    /// the `Content-Length`.
    func testNestedParametersBecomeFormPartsInSortedOrder() throws {
        let user: [String: Any] = ["name": "n", "tags": ["a", "b"]]
        let parameters: [String: Any] = ["user": user, "blob": Data([0x00, 0xFF]), "empty": NSNull()]
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com/upload",
                                                          parameters: parameters, constructingBodyWith: nil)
        let b = boundary(of: request)
        XCTAssertNotNil(b.range(of: "^Boundary\\+[0-9A-F]{16}$", options: .regularExpression), b)
        let body = drain(request).body
        var expected = Data("--\(b)\r\nContent-Disposition: form-data; name=\"blob\"\r\n\r\n".utf8)
        expected.append(contentsOf: [0x00, 0xFF])
        expected.append(Data("\r\n--\(b)\r\nContent-Disposition: form-data; name=\"empty\"\r\n\r\n".utf8))
        expected.append(Data("\r\n--\(b)\r\nContent-Disposition: form-data; name=\"user[name]\"\r\n\r\nn".utf8))
        expected.append(Data("\r\n--\(b)\r\nContent-Disposition: form-data; name=\"user[tags][]\"\r\n\r\na".utf8))
        expected.append(Data("\r\n--\(b)\r\nContent-Disposition: form-data; name=\"user[tags][]\"\r\n\r\nb".utf8))
        expected.append(Data("\r\n--\(b)--\r\n".utf8))
        XCTAssertEqual(body, expected, String(decoding: body, as: UTF8.self))
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Length"), String(body.count))
        XCTAssertNil(request.httpBody)
    }

    /// A form-data part, a part with no headers at all, and a file part with the
    /// caller's file name and MIME type, each laid out as 2.7 writes them.
    func testFormDataHeaderlessAndRenamedFileParts() throws {
        let contents = Data("file contents".utf8)
        let notes = try file("notes.txt", contents)
        let request = try serializer.multipartFormRequest(withMethod: "PUT", urlString: "http://example.com/upload", parameters: nil) { form in
            form.appendPart(withForm: Data("field value".utf8), name: "plain")
            form.appendPart(withHeaders: nil, body: Data("bare".utf8))
            try form.appendPart(withFileURL: notes, name: "doc", fileName: "renamed.bin", mimeType: "application/x-custom")
        }
        let b = boundary(of: request)
        let expected = "--\(b)\r\nContent-Disposition: form-data; name=\"plain\"\r\n\r\nfield value"
            + "\r\n--\(b)\r\n\r\nbare"
            + "\r\n--\(b)\r\nContent-Disposition: form-data; name=\"doc\"; filename=\"renamed.bin\"\r\nContent-Type: application/x-custom\r\n\r\nfile contents"
            + "\r\n--\(b)--\r\n"
        let body = drain(request).body
        XCTAssertEqual(String(decoding: body, as: UTF8.self), expected)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Length"), String(body.count))
    }

    /// GET and HEAD carry no body.
    func testAMultipartGETOrHEADIsRefused() {
        for method in ["GET", "HEAD"] {
            // API.md: thrown, where 2.7 asserted.
            let error = assertThrowsNSError(try serializer.multipartFormRequest(withMethod: method, urlString: "http://example.com",
                                                                                parameters: ["a": "b"], constructingBodyWith: nil))
            XCTAssertEqual(error?.domain, AFURLRequestSerializationErrorDomain, method)
            XCTAssertEqual(error?.code, NSURLErrorUnsupportedURL, method)
        }
    }

    /// A file part for a URL that is not a file URL, or for a missing file, fails
    /// with `NSURLErrorBadURL` and 2.7's failure reason.
    func testFilePartErrorsCarry27sDomainCodeAndFailureReason() throws {
        let remote = try XCTUnwrap(URL(string: "http://example.com/a.png"))
        let notAFile = assertThrowsNSError(try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com",
                                                                               parameters: nil) { form in
            try form.appendPart(withFileURL: remote, name: "f")
        })
        XCTAssertEqual(notAFile?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(notAFile?.code, NSURLErrorBadURL)
        XCTAssertEqual(notAFile?.localizedFailureReason, "Expected URL to be a file URL")

        let missing = directory.appendingPathComponent("missing.png")
        let unreachable = assertThrowsNSError(try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com",
                                                                                  parameters: nil) { form in
            try form.appendPart(withFileURL: missing, name: "f", fileName: "missing.png", mimeType: "image/png")
        })
        XCTAssertEqual(unreachable?.domain, AFURLRequestSerializationErrorDomain)
        XCTAssertEqual(unreachable?.code, NSURLErrorBadURL)
        XCTAssertEqual(unreachable?.localizedFailureReason, "File URL not reachable.")
    }

    /// With 2.7's suggested 3G throttle no read of the body returns more than
    /// 16 KiB, and the body is still whole.
    func testTheSuggested3GThrottleLimitsEachRead() throws {
        let request = try serializer.multipartFormRequest(withMethod: "POST", urlString: "http://example.com", parameters: nil) { form in
            form.appendPart(withFileData: Data(repeating: 0x61, count: 40_000), name: "d", fileName: "d.bin", mimeType: "application/octet-stream")
            // Migration.md: the delay is a timer between the transport's reads; `read` itself never sleeps.
            form.throttleBandwidth(withPacketSize: kAFUploadStream3GSuggestedPacketSize, delay: kAFUploadStream3GSuggestedDelay)
        }
        XCTAssertEqual(kAFUploadStream3GSuggestedPacketSize, 16 * 1024)
        XCTAssertEqual(kAFUploadStream3GSuggestedDelay, 0.2)
        let (body, largest) = drain(request, chunk: 64 * 1024)
        XCTAssertEqual(largest, kAFUploadStream3GSuggestedPacketSize)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Content-Length"), String(body.count))
        XCTAssertGreaterThan(body.count, 40_000)
    }
}

// MARK: - Response serialization

final class SerializationPort27ResponseTests: XCTestCase {
    private let json = Data(#"{"foo":"bar"}"#.utf8)

    /// Each serializer's default content types and status codes, as 2.7 sets them.
    func testDefaultAcceptableContentTypesAndStatusCodes() {
        XCTAssertNil(HTTPResponseSerializer().acceptableContentTypes)
        XCTAssertEqual(HTTPResponseSerializer().acceptableStatusCodes, IndexSet(integersIn: 200..<300))
        XCTAssertEqual(JSONResponseSerializer().acceptableContentTypes, ["application/json", "text/json", "text/javascript"])
        XCTAssertEqual(XMLParserResponseSerializer().acceptableContentTypes, ["application/xml", "text/xml"])
        XCTAssertEqual(XMLDocumentResponseSerializer().acceptableContentTypes, ["application/xml", "text/xml"])
        XCTAssertEqual(PropertyListResponseSerializer().acceptableContentTypes, ["application/x-plist"])
        // API.md: 2.7's image types plus image/webp.
        XCTAssertEqual(ImageResponseSerializer().acceptableContentTypes,
                       ["image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon",
                        "image/bmp", "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp"])
        XCTAssertNil(CompoundResponseSerializer(responseSerializers: [JSONResponseSerializer()]).acceptableContentTypes)
    }

    /// An unacceptable content type is `NSURLErrorCannotDecodeContentData` with
    /// the URL, the response and the body in `userInfo`, and nothing underneath.
    func testContentTypeErrorUserInfo() {
        let response = makeResponse(contentType: "text/html")
        let body = Data("<html></html>".utf8)
        guard let error = assertThrowsNSError(try JSONResponseSerializer().validate(response, data: body)) else { return }
        XCTAssertEqual(error.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error.code, NSURLErrorCannotDecodeContentData)
        XCTAssertEqual(error.localizedDescription, "Request failed: unacceptable content-type: text/html")
        XCTAssertEqual(error.userInfo[NSURLErrorFailingURLErrorKey] as? URL, testBaseURL)
        XCTAssertTrue(error.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse === response)
        XCTAssertEqual(error.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data, body)
        XCTAssertNil(error.userInfo[NSUnderlyingErrorKey])
    }

    /// A body without any Content-Type is not JSON's.
    func testABodyWithoutContentTypeIsUnacceptableToJSON() {
        let error = assertThrowsNSError(try JSONResponseSerializer().responseObject(for: makeResponse(contentType: nil), data: json))
        XCTAssertEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorCannotDecodeContentData)
    }

    /// `acceptableStatusCodes` is the caller's to change.
    func testCustomAcceptableStatusCodes() {
        let serializer = HTTPResponseSerializer()
        serializer.acceptableStatusCodes = IndexSet([200, 404])
        XCTAssertNoThrow(try serializer.validate(makeResponse(status: 404, contentType: "text/html"), data: Data("x".utf8)))
        let error = assertThrowsNSError(try serializer.validate(makeResponse(status: 201, contentType: "text/html"), data: Data("x".utf8)))
        XCTAssertEqual(error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(error?.localizedDescription, "Request failed: created (201)")
    }

    /// Any property-list format is read whatever `format` says, and a status
    /// failure is still the error when the body parses.
    func testPropertyListResponsesOfEitherFormat() throws {
        let serializer = PropertyListResponseSerializer()
        let binary = try PropertyListSerialization.data(fromPropertyList: ["k": "v", "n": 3] as [String: Any], format: .binary, options: 0)
        let object = try serializer.responseObject(for: makeResponse(contentType: "application/x-plist"), data: binary) as? [String: Any]
        XCTAssertEqual(object?["k"] as? String, "v")
        XCTAssertEqual((object?["n"] as? NSNumber)?.intValue, 3)

        let xml = try PropertyListSerialization.data(fromPropertyList: ["k": "v"], format: .xml, options: 0)
        let error = assertThrowsNSError(try serializer.responseObject(for: makeResponse(status: 500, contentType: "application/x-plist"), data: xml))
        XCTAssertEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorBadServerResponse)
    }

    /// The XML parser serializer hands back a parser for either XML type and
    /// reports a bad status.
    func testXMLParserSerializer() throws {
        let serializer = XMLParserResponseSerializer()
        let xml = Data("<?xml version=\"1.0\"?><root/>".utf8)
        let parser = try serializer.responseObject(for: makeResponse(contentType: "application/xml"), data: xml) as? XMLParser
        XCTAssertEqual(parser?.parse(), true)
        let error = assertThrowsNSError(try serializer.responseObject(for: makeResponse(status: 404, contentType: "text/xml"), data: xml))
        XCTAssertEqual(error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(error?.code, NSURLErrorBadServerResponse)
    }
}
