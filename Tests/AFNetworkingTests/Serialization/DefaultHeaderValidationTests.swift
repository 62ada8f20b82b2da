import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest
@testable import AFNetworking

/// A default header the serializer cannot send as it is (a CR, LF or NUL in
/// its value, a name that is not an RFC 9110 token) makes building a request
/// throw `NSURLErrorBadURL` naming the field, as a bad per-call header does.
/// corelibs' `URLRequest.setValue` drops such a value without a word: with
/// `"Bearer token\n"` the request went out with no Authorization at all.
final class DefaultHeaderValidationTests: XCTestCase {
    private let urlString = "http://example.com/resource"

    /// `build` throws `NSURLErrorBadURL` in `NSURLErrorDomain`, naming `field`
    /// when given, and never quoting `secret` (a value may be a credential).
    private func assertRefused(_ build: @autoclosure () throws -> URLRequest, field: String?, secret: String? = nil, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        let error = assertThrowsNSError(try build(), file: file, line: line)
        XCTAssertEqual(error?.domain, NSURLErrorDomain, what, file: file, line: line)
        XCTAssertEqual(error?.code, NSURLErrorBadURL, what, file: file, line: line)
        let message = error?.localizedDescription ?? ""
        if let field { XCTAssertTrue(message.contains("\"\(field)\""), "\(what): \(message)", file: file, line: line) }
        if let secret { XCTAssertFalse(message.contains(secret), "\(what): the value is not quoted", file: file, line: line) }
    }

    func testAValueWithCROrLFOrNULThrowsNamingTheField() {
        let serializer = HTTPRequestSerializer()
        serializer.setValue("a\r\nX: y", forHTTPHeaderField: "X-Test")
        assertRefused(try serializer.request(withMethod: "GET", urlString: urlString, parameters: nil), field: "X-Test", "CR LF")
        serializer.setValue(nil, forHTTPHeaderField: "X-Test")
        for value in ["Bearer s3cr3t\n", "Bearer s3cr3t\r", "Bearer s3cr3t\u{0}", "Bearer\r\n s3cr3t"] {
            serializer.setValue(value, forHTTPHeaderField: "Authorization")
            assertRefused(try serializer.request(withMethod: "GET", urlString: urlString, parameters: ["q": "1"]),
                          field: "Authorization", secret: "s3cr3t", value.debugDescription)
        }
    }

    func testANameThatIsNotATokenThrows() {
        for name in ["X Test", "X:Test", "X(Test)", "X-Test\r\nInjected", ""] {
            let serializer = HTTPRequestSerializer()
            serializer.setValue("v", forHTTPHeaderField: name)
            let printable = name.contains("\r") ? nil : name
            assertRefused(try serializer.request(withMethod: "GET", urlString: urlString, parameters: nil), field: printable, name.debugDescription)
        }
    }

    /// Every way of building a request applies the defaults, so every one refuses.
    func testEveryBuilderRefuses() {
        let serializers: [HTTPRequestSerializer] = [HTTPRequestSerializer(), JSONRequestSerializer(), PropertyListRequestSerializer()]
        for serializer in serializers {
            serializer.setValue("a\nb", forHTTPHeaderField: "X-Test")
            let kind = "\(type(of: serializer))"
            assertRefused(try serializer.request(withMethod: "GET", urlString: urlString, parameters: ["a": "b"]), field: "X-Test", kind + " GET")
            assertRefused(try serializer.request(withMethod: "POST", urlString: urlString, parameters: ["a": "b"]), field: "X-Test", kind + " POST")
            var request = URLRequest(url: URL(string: urlString)!)
            request.httpMethod = "PUT"
            assertRefused(try serializer.requestBySerializingRequest(request, withParameters: nil), field: "X-Test", kind + " serializing")
            assertRefused(try serializer.multipartFormRequest(withMethod: "POST", urlString: urlString, parameters: ["a": "b"],
                                                              constructingBodyWith: { form in form.appendPart(withForm: Data("v".utf8), name: "f") }),
                          field: "X-Test", kind + " multipart")
        }
    }

    func testValidValuesAreSentAndABadOneCanBeReplaced() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setValue("Bearer token\n", forHTTPHeaderField: "Authorization")
        XCTAssertThrowsError(try serializer.request(withMethod: "GET", urlString: urlString, parameters: nil))
        serializer.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        serializer.setValue("a,\tb", forHTTPHeaderField: "X-Test")
        let request = try serializer.request(withMethod: "GET", urlString: urlString, parameters: nil)
        XCTAssertEqual(request.value(forHTTPHeaderField: "Authorization"), "Bearer token")
        XCTAssertEqual(request.value(forHTTPHeaderField: "X-Test"), "a,\tb", "a tab is a valid field value")
        XCTAssertNotNil(request.value(forHTTPHeaderField: "User-Agent"))
    }

    /// A default the request already sets is not sent, so it is not checked.
    func testADefaultTheRequestOverridesIsNotChecked() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setValue("a\r\nb", forHTTPHeaderField: "X-Test")
        var request = URLRequest(url: URL(string: urlString)!)
        request.setValue("mine", forHTTPHeaderField: "x-test")
        let serialized = try serializer.requestBySerializingRequest(request, withParameters: nil)
        XCTAssertEqual(serialized.value(forHTTPHeaderField: "X-Test"), "mine")
    }
}
