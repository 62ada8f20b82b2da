import Foundation
import XCTest
@testable import AFNetworking

final class SerializationErrorsTests: XCTestCase {
    func testConstantsHave27Values() {
        XCTAssertEqual(AFURLRequestSerializationErrorDomain, "com.alamofire.error.serialization.request")
        XCTAssertEqual(AFURLResponseSerializationErrorDomain, "com.alamofire.error.serialization.response")
        XCTAssertEqual(AFNetworkingOperationFailingURLRequestErrorKey, "com.alamofire.serialization.request.error.response")
        XCTAssertEqual(AFNetworkingOperationFailingURLResponseErrorKey, "com.alamofire.serialization.response.error.response")
        XCTAssertEqual(AFNetworkingOperationFailingURLResponseDataErrorKey, "com.alamofire.serialization.response.error.data")
    }

    func testChainingKeepsExistingUnderlyingError() {
        let first = NSError(domain: "a", code: 1)
        let second = NSError(domain: "b", code: 2)
        let chained = chainError(first, underlying: second)
        XCTAssertEqual((chained?.userInfo[NSUnderlyingErrorKey] as? NSError)?.domain, "b")
        let third = NSError(domain: "c", code: 3)
        let again = chainError(chained, underlying: third)
        XCTAssertEqual((again?.userInfo[NSUnderlyingErrorKey] as? NSError)?.domain, "b")
        XCTAssertEqual(chainError(nil, underlying: second), second)
        XCTAssertEqual(chainError(first, underlying: nil), first)
        XCTAssertTrue(errorChainContains(chained, code: 2, domain: "b"))
        XCTAssertFalse(errorChainContains(chained, code: 3, domain: "b"))
    }

    func testStatusReasonPhrasesAreLowerCaseLikeApple() {
        XCTAssertEqual(HTTPStatusReason.phrase(forStatusCode: 404), "not found")
        XCTAssertEqual(HTTPStatusReason.phrase(forStatusCode: 500), "internal server error")
        XCTAssertEqual(HTTPStatusReason.phrase(forStatusCode: 200), "no error")
        XCTAssertEqual(HTTPStatusReason.phrase(forStatusCode: 418), "client error")
        XCTAssertEqual(HTTPStatusReason.phrase(forStatusCode: 599), "server error")
        XCTAssertEqual(HTTPStatusReason.phrase(forStatusCode: 299), "success")
    }
}
