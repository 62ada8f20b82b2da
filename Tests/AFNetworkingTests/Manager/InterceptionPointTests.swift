import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// 2.x's interception points are `open`: a subclass overriding
/// `httpRequestOperation(with:success:failure:)` (operation manager) or the
/// task factories (session manager) sees, and may rewrite, the request of every verb.
final class InterceptionPointTests: OperationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.respond("/i", headers: [("Content-Type", "application/json")], body: Data(#"{"ok":1}"#.utf8))
    }

    /// Runs a callback verb and waits (bounded) for its success or failure block.
    private func call(_ start: (@escaping @Sendable () -> Void, @escaping @Sendable (Error) -> Void) -> AnyObject?) -> Error? {
        let error = Locked<Error?>(nil)
        let done = expectation(description: "completion")
        _ = start({ done.fulfill() }, { failure in error.withLock { $0 = failure }; done.fulfill() })
        wait(for: [done], timeout: 15)
        return error.value
    }

    private let part: @Sendable (MultipartFormData) throws -> Void = { form in
        form.appendPart(withFileData: Data("x".utf8), name: "f", fileName: "f.txt", mimeType: "text/plain")
    }

    func testOperationManagerSubclassSeesEveryVerbsRequest() throws {
        let manager = MarkingOperationManager(baseURL: server.baseURL)
        let verbs = ["GET", "POST", "MULTIPART", "PUT", "DELETE"]
        for verb in verbs {
            let error = call { ok, fail in
                let success: HTTPRequestOperation.SuccessBlock = { _, _ in ok() }
                let failure: HTTPRequestOperationManager.FailureBlock = { _, error in fail(error) }
                switch verb {
                case "GET": return manager.get("i", parameters: ["q": "1"], success: success, failure: failure)
                case "POST": return manager.post("i", parameters: ["q": "1"], headers: ["X-A": "1"], success: success, failure: failure)
                case "MULTIPART": return manager.post("i", parameters: nil, constructingBodyWith: part, success: success, failure: failure)
                case "PUT": return manager.put("i", parameters: nil, success: success, failure: failure)
                default: return manager.delete("i", parameters: nil, success: success, failure: failure)
                }
            }
            XCTAssertNil(error, verb)
            let received = try XCTUnwrap(server.requests.last, verb)
            XCTAssertEqual(received.headers["X-Intercepted"], ["yes"], verb)
        }
        XCTAssertEqual(manager.seen.value, ["GET", "POST", "POST", "PUT", "DELETE"])
    }

    func testSessionManagerSubclassSeesEveryVerbsRequest() throws {
        let manager = MarkingSessionManager(baseURL: server.baseURL)
        defer { manager.invalidateSessionCancelingTasks(true) }
        let verbs = ["GET", "POST", "MULTIPART", "PUT", "DELETE"]
        for verb in verbs {
            let error = call { ok, fail in
                let success: @Sendable (URLSessionDataTask, Any?) -> Void = { _, _ in ok() }
                let failure: @Sendable (URLSessionDataTask?, Error) -> Void = { _, error in fail(error) }
                switch verb {
                case "GET": return manager.get("i", parameters: ["q": "1"], success: success, failure: failure)
                case "POST": return manager.post("i", parameters: ["q": "1"], headers: ["X-A": "1"], success: success, failure: failure)
                case "MULTIPART": return manager.post("i", parameters: nil, constructingBodyWith: part, success: success, failure: failure)
                case "PUT": return manager.put("i", parameters: nil, success: success, failure: failure)
                default: return manager.delete("i", parameters: nil, success: success, failure: failure)
                }
            }
            XCTAssertNil(error, verb)
            let received = try XCTUnwrap(server.requests.last, verb)
            XCTAssertEqual(received.headers["X-Intercepted"], ["yes"], verb)
        }
        XCTAssertEqual(manager.seen.value, ["GET", "POST", "POST", "PUT", "DELETE"])
    }
}

/// Marks every request its verbs make and records their methods.
private final class MarkingOperationManager: HTTPRequestOperationManager, @unchecked Sendable {
    // @unchecked: the only added state is `seen`, which is Locked.
    let seen = Locked<[String]>([])

    override func httpRequestOperation(with request: URLRequest, success: HTTPRequestOperation.SuccessBlock?,
                                       failure: HTTPRequestOperation.FailureBlock?) -> HTTPRequestOperation {
        var marked = request
        marked.setValue("yes", forHTTPHeaderField: "X-Intercepted")
        seen.withLock { $0.append(request.httpMethod ?? "") }
        return super.httpRequestOperation(with: marked, success: success, failure: failure)
    }
}

/// The session manager's interception points: the data-task factory the verbs
/// use, and the streamed-upload one multipart POSTs use.
private final class MarkingSessionManager: HTTPSessionManager, @unchecked Sendable {
    // @unchecked: the only added state is `seen`, which is Locked.
    let seen = Locked<[String]>([])

    override func dataTask(with request: URLRequest, uploadProgress: (@Sendable (Progress) -> Void)?,
                           downloadProgress: (@Sendable (Progress) -> Void)?,
                           completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        seen.withLock { $0.append(request.httpMethod ?? "") }
        return super.dataTask(with: mark(request), uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                              completionHandler: completionHandler)
    }

    override func uploadTask(withStreamedRequest request: URLRequest, progress: (@Sendable (Progress) -> Void)?,
                             completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        seen.withLock { $0.append(request.httpMethod ?? "") }
        return super.uploadTask(withStreamedRequest: mark(request), progress: progress, completionHandler: completionHandler)
    }

    private func mark(_ request: URLRequest) -> URLRequest {
        var marked = request
        marked.setValue("yes", forHTTPHeaderField: "X-Intercepted")
        return marked
    }
}
