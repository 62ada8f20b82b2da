import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The manager facade against httpbin, and its URL resolution.
final class HTTPRequestOperationManagerTests: XCTestCase {
    private func manager() throws -> HTTPRequestOperationManager {
        HTTPRequestOperationManager(baseURL: try SharedServers.httpbin().baseURL)
    }

    /// Runs one verb and waits for its success or failure block.
    private func call(_ start: (@escaping @Sendable (Any?) -> Void, @escaping HTTPRequestOperationManager.FailureBlock) -> HTTPRequestOperation?)
        -> (HTTPRequestOperation?, Any?, Error?) {
        let result = Locked<(object: Any?, failure: Error?)>((nil, nil))
        let done = expectation(description: "completion")
        let operation = start({ object in result.withLock { $0.object = object }; done.fulfill() },
                              { _, error in result.withLock { $0.failure = error }; done.fulfill() })
        wait(for: [done], timeout: 15)
        let (object, failure) = result.value
        return (operation, object, failure)
    }

    func testBaseURLGetsATrailingSlashAndResolvesLike2_7() {
        XCTAssertEqual(HTTPRequestOperationManager(baseURL: URL(string: "http://h/api")).baseURL?.absoluteString, "http://h/api/")
        XCTAssertEqual(HTTPRequestOperationManager(baseURL: URL(string: "http://h/api/")).baseURL?.absoluteString, "http://h/api/")
        XCTAssertEqual(HTTPRequestOperationManager(baseURL: URL(string: "http://h")).baseURL?.absoluteString, "http://h")
        let base = HTTPRequestOperationManager(baseURL: URL(string: "http://h/v1/"))
        let cases = [("foo", "http://h/v1/foo"), ("foo?bar=baz", "http://h/v1/foo?bar=baz"), ("/foo", "http://h/foo"),
                     ("foo/", "http://h/v1/foo/"), ("../foo", "http://h/foo"), ("http://other/x", "http://other/x")]
        for (relative, expected) in cases {
            let operation = base.httpRequestOperation(with: try! base.requestSerializer.request(
                withMethod: "GET", urlString: URL(string: relative, relativeTo: base.baseURL)!.absoluteString, parameters: nil),
                success: nil, failure: nil)
            XCTAssertEqual(operation.request.url?.absoluteString, expected, relative)
        }
    }

    func testGETWithParametersParsesJSON() throws {
        let manager = try manager()
        let (operation, object, error) = call { success, failure in
            manager.get("get", parameters: ["name": "value", "list": [1, 2]], success: { _, object in success(object) }, failure: failure)
        }
        XCTAssertNil(error)
        let args = (object as? [String: Any])?["args"] as? [String: Any]
        XCTAssertEqual(args?["name"] as? String, "value")
        XCTAssertNotNil(operation)
        XCTAssertTrue(operation?.responseSerializer is JSONResponseSerializer)
    }

    func testEveryVerb() throws {
        let manager = try manager()
        manager.requestSerializer = JSONRequestSerializer()
        for (verb, path) in [("POST", "post"), ("PUT", "put"), ("PATCH", "patch"), ("DELETE", "delete")] {
            let (_, object, error) = call { success, failure in
                let done: HTTPRequestOperation.SuccessBlock = { _, object in success(object) }
                switch verb {
                case "POST": return manager.post(path, parameters: ["k": "v"], success: done, failure: failure)
                case "PUT": return manager.put(path, parameters: ["k": "v"], success: done, failure: failure)
                case "PATCH": return manager.patch(path, parameters: ["k": "v"], success: done, failure: failure)
                default: return manager.delete(path, parameters: ["k": "v"], success: done, failure: failure)
                }
            }
            XCTAssertNil(error, verb)
            let json = object as? [String: Any]
            if verb == "DELETE" {
                XCTAssertEqual((json?["args"] as? [String: String])?["k"], "v", "DELETE puts parameters in the URI")
            } else {
                XCTAssertEqual((json?["json"] as? [String: String])?["k"], "v", verb)
            }
        }
        let (_, _, headError) = call { success, failure in
            manager.head("get", parameters: nil, success: { _ in success(nil) }, failure: failure)
        }
        XCTAssertNil(headError)
    }

    func testMultipartPOST() throws {
        let manager = try manager()
        let (_, object, error) = call { success, failure in
            manager.post("post", parameters: ["field": "value"], constructingBodyWith: { form in
                form.appendPart(withFileData: Data("file contents".utf8), name: "upload", fileName: "a.txt", mimeType: "text/plain")
            }, success: { _, object in success(object) }, failure: failure)
        }
        XCTAssertNil(error)
        let json = object as? [String: Any]
        XCTAssertEqual((json?["form"] as? [String: String])?["field"], "value")
        XCTAssertEqual((json?["files"] as? [String: String])?["upload"], "file contents")
    }

    func testSettingsAreCopiedOntoOperations() throws {
        let manager = try manager()
        let queue = DispatchQueue(label: "manager.completion")
        let group = DispatchGroup()
        let policy = SecurityPolicy(pinningMode: .none)
        let credential = URLCredential(user: "u", password: "p", persistence: .none)
        manager.completionQueue = queue
        manager.completionGroup = group
        manager.securityPolicy = policy
        manager.credential = credential
        manager.shouldUseCredentialStorage = false
        let operation = manager.httpRequestOperation(with: URLRequest(url: manager.baseURL!), success: nil, failure: nil)
        XCTAssertTrue(operation.completionQueue === queue)
        XCTAssertTrue(operation.completionGroup === group)
        XCTAssertTrue(operation.securityPolicy === policy)
        XCTAssertEqual(operation.credential?.user, "u")
        XCTAssertFalse(operation.shouldUseCredentialStorage)
        XCTAssertTrue(operation.responseSerializer === manager.responseSerializer)
    }

    func testUnserializableRequestCallsFailureWithNilAndReturnsNil() throws {
        let manager = try manager()
        manager.requestSerializer = JSONRequestSerializer()
        let called = Locked(false)
        let done = expectation(description: "failure")
        let operation = manager.post("post", parameters: ["date": Date()], success: { _, _ in XCTFail("no success") }, failure: { operation, error in
            XCTAssertNil(operation)
            XCTAssertEqual((error as NSError).domain, AFURLRequestSerializationErrorDomain)
            XCTAssertTrue(Thread.isMainThread)
            called.value = true
            done.fulfill()
        })
        XCTAssertNil(operation)
        wait(for: [done], timeout: 5)
        XCTAssertTrue(called.value)
        XCTAssertEqual(manager.operationQueue.operationCount, 0)
    }

    func testHTTPErrorReachesFailureWithTheOperation() throws {
        let manager = try manager()
        let failedOperation = Locked<HTTPRequestOperation?>(nil)
        let (_, _, error) = call { success, failure in
            manager.get("status/404", parameters: nil, success: { _, object in success(object) }, failure: { operation, error in
                failedOperation.value = operation
                failure(operation, error)
            })
        }
        XCTAssertEqual((error as NSError?)?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(failedOperation.value?.response?.statusCode, 404)
    }

    func testCopyAndSecureCoding() throws {
        let manager = HTTPRequestOperationManager(baseURL: URL(string: "http://example.test/api"))
        manager.responseSerializer = HTTPResponseSerializer()
        let copy = manager.copy() as! HTTPRequestOperationManager
        XCTAssertEqual(copy.baseURL, manager.baseURL)
        XCTAssertFalse(copy.requestSerializer === manager.requestSerializer)
        let archive = try NSKeyedArchiver.archivedData(withRootObject: manager, requiringSecureCoding: true)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPRequestOperationManager.self, from: archive))
        XCTAssertEqual(restored.baseURL?.absoluteString, "http://example.test/api/")
        XCTAssertFalse(restored.responseSerializer is JSONResponseSerializer)
    }
}
