@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The head kept beside a stored response survives swift-corelibs-foundation's
/// disk cache, which archives `userInfo`: kept as an array of strings, reading
/// the entry back trapped in `NSKeyedUnarchiver` ("Value was of unexpected
/// class NSArray"), in any process with a disk cache, on the second request.
final class CachedHeadArchivingTests: XCTestCase {
    func testTheKeptHeadIsArchivedAndReadBack() throws {
        let url = try XCTUnwrap(URL(string: "http://127.0.0.1:9/cached"))
        let head = ReceivedResponse(url: url, statusCode: 200, statusLine: "HTTP/1.1 200 Fine Thanks",
                                    fields: [("X-Zeta", "1"), ("ETag", "\"s1\""), ("Empty", ""), ("X-Colon", "a: b")])
        let response = try XCTUnwrap(HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["ETag": "\"s1\""]))
        var userInfo: [AnyHashable: Any] = [:]
        CacheRules.keepReceivedHead(head, of: response, in: &userInfo)
        // As URLCache's disk storage writes and reads an entry's userInfo.
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(userInfo as NSDictionary, forKey: "userInfo")
        archiver.finishEncoding()
        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
        let restoredInfo = unarchiver.decodeObject(of: NSDictionary.self, forKey: "userInfo") as? [AnyHashable: Any]
        let restored = CachedURLResponse(response: response, data: Data("stored".utf8), userInfo: restoredInfo, storagePolicy: .allowed)
        let read = try XCTUnwrap(CacheRules.receivedHead(of: restored))
        XCTAssertEqual(read.statusLine, "HTTP/1.1 200 Fine Thanks")
        XCTAssertEqual(read.fields.map { "\($0.name): \($0.value)" }, ["X-Zeta: 1", "ETag: \"s1\"", "Empty: ", "X-Colon: a: b"])
    }
}
