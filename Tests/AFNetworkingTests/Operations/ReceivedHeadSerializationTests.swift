@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The library's own serializers validate from the received head (no
/// HTTPURLResponse built for a response that passes); a subclass takes the
/// public path. Both must give the same object and the same error.
final class ReceivedHeadSerializationTests: OperationTestCase {
    /// Forces the public `responseObject(for:data:)` path.
    final class PublicPathJSON: JSONResponseSerializer, @unchecked Sendable {}
    final class PublicPathHTTP: HTTPResponseSerializer, @unchecked Sendable {}

    func testBothPathsAgree() {
        let cases: [(String, Int, [(String, String)], String)] = [
            ("/ok", 200, [("Content-Type", "application/json")], #"{"a":1}"#),
            ("/charset", 200, [("Content-Type", "application/json; charset=\"ISO-8859-1\"")], "{\"n\":\"\u{E9}\"}"),
            ("/type", 200, [("Content-Type", "text/html")], "<html/>"),
            ("/status", 404, [("Content-Type", "application/json")], #"{"error":"nf"}"#),
            ("/both", 500, [("Content-Type", "text/plain")], "oops"),
            ("/empty", 200, [("Content-Type", "text/html")], ""),
            ("/space", 200, [("Content-Type", "application/json")], " "),
            ("/bad", 200, [("Content-Type", "application/json")], "{nope"),
            ("/notype", 200, [], #"[1,2]"#),
            ("/upper", 200, [("Content-Type", "Application/JSON ; Charset=UTF-8")], #"[true]"#),
        ]
        for (path, status, headers, body) in cases {
            let bytes = path == "/charset" ? body.data(using: .isoLatin1)! : Data(body.utf8)
            server.respond(path, status: status, headers: headers, body: bytes)
            for (fast, slow) in [(JSONResponseSerializer() as HTTPResponseSerializer, PublicPathJSON() as HTTPResponseSerializer),
                                 (HTTPResponseSerializer(), PublicPathHTTP())] {
                XCTAssertTrue(fast.readsReceivedHeads)
                XCTAssertFalse(slow.readsReceivedHeads)
                let (a, b) = (HTTPRequestOperation(request: request(path)), HTTPRequestOperation(request: request(path)))
                a.responseSerializer = fast
                b.responseSerializer = slow
                let (x, y) = (run(a), run(b))
                XCTAssertEqual(x.calls, 1)
                XCTAssertEqual(String(describing: x.object), String(describing: y.object), "\(path) \(type(of: fast))")
                XCTAssertEqual(x.error?.domain, y.error?.domain, path)
                XCTAssertEqual(x.error?.code, y.error?.code, path)
                XCTAssertEqual(x.error?.localizedDescription, y.error?.localizedDescription, path)
                let failing = { (error: NSError?) in
                    (error?.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse)?.statusCode
                }
                XCTAssertEqual(failing(x.error), failing(y.error), "the failing response is in the error either way: \(path)")
                XCTAssertEqual(a.response?.statusCode, status, "and `response` is still there when asked for")
            }
        }
    }
}
