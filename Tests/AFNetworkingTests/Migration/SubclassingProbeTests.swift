import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

// AFNetworking 2.x's usual subclassing patterns, written against the public
// surface only: this file imports AFNetworking without `@testable` (a
// testable import would let it override `public` members too). Each class
// below overrides, calling `super`, every method a 2.x user overrides —
// both its 2.x spelling and its Swift one — so a method that stops being
// `open`, or moves into an extension, breaks the build here. The tests then
// show that the overrides run when the user calls the verbs.
//
// The 2.x spellings are deprecated: their overrides are deprecated too, and
// the tests call them through `LegacyProbeCalls`, so the build raises no
// deprecation warning (as in FixItTests).

final class SubclassingProbeTests: OperationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.respond("/probe", headers: [("Content-Type", "application/json")], body: Data(#"{"ok":1}"#.utf8))
    }

    private var legacy: LegacyProbeCalls { LegacyProbeSpellings() }

    /// Runs a callback verb and waits (bounded) for its success or failure block.
    private func call(_ start: (@escaping @Sendable (Any?) -> Void, @escaping @Sendable (Error) -> Void) -> AnyObject?) -> (object: Any?, error: Error?) {
        let result = Locked<(object: Any?, error: Error?)>((nil, nil))
        let done = expectation(description: "completion")
        let started = start({ object in result.withLock { $0.object = object }; done.fulfill() },
                            { failure in result.withLock { $0.error = failure }; done.fulfill() })
        XCTAssertNotNil(started, "the verb made its operation or task")
        wait(for: [done], timeout: 15)
        return result.value
    }

    // MARK: Initializers and copies

    /// 2.x subclasses override the designated initializers with a plain
    /// `override init` (they are not `required`); `copy()` still makes an
    /// instance of the subclass, through its initializer, with the whole request.
    func testSubclassesOverrideTheInitializersAndCopiesKeepTheirClass() throws {
        var request = URLRequest(url: url("probe"))
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.setValue("1", forHTTPHeaderField: "X-Copied")
        let operation = TaggedOperation(request: request)
        let copy = try XCTUnwrap(operation.copy() as? TaggedOperation, "a copy of a subclass is of the subclass")
        XCTAssertTrue(copy.madeByInit, "the subclass's init(request:) ran for the copy")
        XCTAssertEqual(copy.request.value(forHTTPHeaderField: "X-Copied"), "1")
        XCTAssertEqual(copy.request.cachePolicy, .reloadIgnoringLocalCacheData, "the whole request, not an archive's part of it")
        XCTAssertTrue(copy.isReady)

        let client = ProbeOperationClient(baseURL: server.baseURL)
        let clientCopy = try XCTUnwrap(client.copy() as? ProbeOperationClient)
        XCTAssertEqual(clientCopy.baseURL, client.baseURL)
        XCTAssertTrue(clientCopy.responseSerializer is JSONResponseSerializer, "the serializers are copied")
    }

    // MARK: Operation manager, request and response serializers

    func testOperationManagerVerbsRunTheSubclassOverrides() throws {
        let client = ProbeOperationClient(baseURL: server.baseURL)
        let requestSerializer = ProbeRequestSerializer()
        let responseSerializer = ProbeResponseSerializer()
        client.requestSerializer = requestSerializer
        client.responseSerializer = responseSerializer

        // The Swift spelling.
        let modern = call { ok, fail in
            client.get("probe", parameters: ["q": "1"], success: { _, object in ok(object) }, failure: { _, error in fail(error) })
        }
        XCTAssertNil(modern.error)
        XCTAssertEqual((modern.object as? [String: Any])?["ok"] as? Int, 1)
        XCTAssertEqual(client.calls.value, ["get", "httpRequestOperation(with:)"])
        XCTAssertEqual(requestSerializer.calls.value, ["request(withMethod:)", "requestBySerializingRequest"])
        XCTAssertEqual(responseSerializer.calls.value, ["responseObject(for:)", "validate"])
        XCTAssertEqual(try XCTUnwrap(server.requests.last).headers["X-Probe"], ["request(withMethod:)"])

        // The 2.x spelling: its override runs, and the verb it forwards to is the subclass's too.
        client.calls.value = []
        let old = call { ok, fail in
            legacy.GET(on: client, "probe", success: { _, object in ok(object) }, failure: { _, error in fail(error) })
        }
        XCTAssertNil(old.error)
        XCTAssertEqual(client.calls.value, ["GET", "get", "httpRequestOperation(with:)"])
    }

    // MARK: Session managers

    func testSessionManagerVerbsRunTheSubclassOverrides() throws {
        let client = ProbeSessionClient(baseURL: server.baseURL)
        defer { client.invalidateSessionCancelingTasks(true) }
        XCTAssertTrue(client.responseSerializer is ProbeResponseSerializer, "the overridden designated initializer ran")

        let completed = expectation(description: "urlSession(_:task:didCompleteWithError:) override")
        client.onTaskCompletion.value = { completed.fulfill() }
        let modern = call { ok, fail in
            client.get("probe", parameters: nil, success: { _, object in ok(object) }, failure: { _, error in fail(error) })
        }
        wait(for: [completed], timeout: 15)
        XCTAssertNil(modern.error)
        XCTAssertEqual((modern.object as? [String: Any])?["ok"] as? Int, 1)
        XCTAssertEqual(client.calls.value, ["get", "get(progress:)", "dataTask(with:uploadProgress:downloadProgress:)"])
        let delegateCalls = client.delegateCalls.value
        XCTAssertTrue(delegateCalls.contains("didReceive response"), "\(delegateCalls)")
        XCTAssertTrue(delegateCalls.contains("didReceive data"), "\(delegateCalls)")
        XCTAssertEqual(delegateCalls.last, "didCompleteWithError")

        client.calls.value = []
        client.onTaskCompletion.value = nil
        let old = call { ok, fail in
            legacy.GET(on: client, "probe", success: { _, object in ok(object) }, failure: { _, error in fail(error) })
        }
        XCTAssertNil(old.error)
        XCTAssertEqual(client.calls.value, ["GET", "get", "get(progress:)", "dataTask(with:uploadProgress:downloadProgress:)"])

        // The 2.x factory spelling reaches the Swift factories, overridden too.
        client.calls.value = []
        let task = legacy.dataTask(on: client, URLRequest(url: url("probe")))
        task.cancel()
        XCTAssertEqual(client.calls.value, ["dataTaskWithRequest", "dataTask(with:)", "dataTask(with:uploadProgress:downloadProgress:)"])
    }

    // MARK: Operations

    func testOperationSubclassOverridesRun() throws {
        let operation = ProbeOperation(request: request("probe"))
        let done = expectation(description: "completion")
        operation.setCompletionBlockWithSuccess({ _, _ in done.fulfill() }, failure: { _, error in
            XCTFail("\(error)")
            done.fulfill()
        })
        let queue = OperationQueue()
        queue.addOperation(operation)
        wait(for: [done], timeout: 15)
        XCTAssertEqual(operation.calls.value, ["setCompletionBlockWithSuccess", "start"])
    }

    // MARK: Security policy

    func testSecurityPolicySubclassInheritsTheInitializersAndIsAsked() {
        // A subclass that declares no initializer has every one of SecurityPolicy's.
        let policies = [ProbeSecurityPolicy(), ProbeSecurityPolicy(pinningMode: .none),
                        ProbeSecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [])]
        let decoding: (NSCoder) -> ProbeSecurityPolicy? = ProbeSecurityPolicy.init(coder:)
        _ = decoding
        XCTAssertEqual(policies.map(\.sslPinningMode), [SSLPinningMode.none, .none, .certificate])

        // An empty chain is refused; the overrides saw the question.
        let policy = policies[0]
        XCTAssertFalse(policy.evaluateServerTrust(ServerTrust(certificates: []), forDomain: "example.com"))
        XCTAssertEqual(policy.calls.value, ["evaluateServerTrust(_:forDomain:)", "evaluate(_:forDomain:)"])
    }
}

// MARK: - The deprecated spellings, called without a deprecation warning

/// The tests call the 2.x spellings through this protocol, whose requirements
/// are not deprecated; `LegacyProbeSpellings` implements them in deprecated
/// members, inside which deprecated declarations may be used.
private protocol LegacyProbeCalls {
    func GET(on manager: HTTPRequestOperationManager, _ url: String, success: HTTPRequestOperation.SuccessBlock?,
             failure: HTTPRequestOperationManager.FailureBlock?) -> HTTPRequestOperation?
    func GET(on manager: HTTPSessionManager, _ url: String, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
             failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask?
    func dataTask(on manager: URLSessionManager, _ request: URLRequest) -> URLSessionDataTask
}

private struct LegacyProbeSpellings: LegacyProbeCalls {
    @available(*, deprecated)
    func GET(on manager: HTTPRequestOperationManager, _ url: String, success: HTTPRequestOperation.SuccessBlock?,
             failure: HTTPRequestOperationManager.FailureBlock?) -> HTTPRequestOperation? {
        manager.GET(url, parameters: nil, success: success, failure: failure)
    }

    @available(*, deprecated)
    func GET(on manager: HTTPSessionManager, _ url: String, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
             failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        manager.GET(url, parameters: nil, success: success, failure: failure)
    }

    @available(*, deprecated)
    func dataTask(on manager: URLSessionManager, _ request: URLRequest) -> URLSessionDataTask {
        manager.dataTaskWithRequest(request, completionHandler: nil)
    }
}

// MARK: - An operation subclass with its own initializer

private final class TaggedOperation: HTTPRequestOperation, @unchecked Sendable {
    // @unchecked: `madeByInit` is written once, in the initializer.
    private(set) var madeByInit = false

    override init(request: URLRequest) {
        super.init(request: request)
        madeByInit = true
    }
}

// MARK: - 2.x's APIClient: AFHTTPRequestOperationManager

/// An `APIClient: AFHTTPRequestOperationManager` overriding `-initWithBaseURL:`,
/// `-HTTPRequestOperationWithRequest:success:failure:` and every verb.
private final class ProbeOperationClient: HTTPRequestOperationManager, @unchecked Sendable {
    // @unchecked: the only added state is `calls`, which is Locked.
    let calls = Locked<[String]>([])

    override init(baseURL: URL? = nil) {
        super.init(baseURL: baseURL)
        responseSerializer = JSONResponseSerializer()
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    override func httpRequestOperation(with request: URLRequest, success: HTTPRequestOperation.SuccessBlock?,
                                       failure: HTTPRequestOperation.FailureBlock?) -> HTTPRequestOperation {
        calls.append("httpRequestOperation(with:)")
        return super.httpRequestOperation(with: request, success: success, failure: failure)
    }

    @discardableResult
    override func get(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                      failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("get")
        return super.get(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func head(_ URLString: String, parameters: Any?, success: (@Sendable (HTTPRequestOperation) -> Void)?,
                       failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("head")
        return super.head(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func post(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                       failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("post")
        return super.post(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func post(_ URLString: String, parameters: Any?,
                       constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                       success: HTTPRequestOperation.SuccessBlock?, failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("post(constructingBodyWith:)")
        return super.post(URLString, parameters: parameters, constructingBodyWith: block, success: success, failure: failure)
    }

    @discardableResult
    override func put(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                      failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("put")
        return super.put(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func patch(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                        failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("patch")
        return super.patch(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func delete(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                         failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("delete")
        return super.delete(URLString, parameters: parameters, success: success, failure: failure)
    }

    // The 2.x spellings.

    @available(*, deprecated)
    override func HTTPRequestOperationWithRequest(_ request: URLRequest, success: HTTPRequestOperation.SuccessBlock?,
                                                  failure: HTTPRequestOperation.FailureBlock?) -> HTTPRequestOperation {
        calls.append("HTTPRequestOperationWithRequest")
        return super.HTTPRequestOperationWithRequest(request, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func GET(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                      failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("GET")
        return super.GET(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func HEAD(_ URLString: String, parameters: Any?, success: (@Sendable (HTTPRequestOperation) -> Void)?,
                       failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("HEAD")
        return super.HEAD(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func POST(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                       failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("POST")
        return super.POST(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func POST(_ URLString: String, parameters: Any?,
                       constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?,
                       success: HTTPRequestOperation.SuccessBlock?, failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("POST(constructingBodyWithBlock:)")
        return super.POST(URLString, parameters: parameters, constructingBodyWithBlock: block, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func PUT(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                      failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("PUT")
        return super.PUT(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func PATCH(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                        failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("PATCH")
        return super.PATCH(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func DELETE(_ URLString: String, parameters: Any?, success: HTTPRequestOperation.SuccessBlock?,
                         failure: FailureBlock?) -> HTTPRequestOperation? {
        calls.append("DELETE")
        return super.DELETE(URLString, parameters: parameters, success: success, failure: failure)
    }
}

// MARK: - 2.x's APIClient: AFHTTPSessionManager (and AFURLSessionManager)

/// An `APIClient: AFHTTPSessionManager` overriding `-initWithBaseURL:sessionConfiguration:`,
/// every verb, every task factory and every delegate method of AFURLSessionManager.
private final class ProbeSessionClient: HTTPSessionManager, @unchecked Sendable {
    // @unchecked: the added state is in Locked boxes.
    let calls = Locked<[String]>([])
    let delegateCalls = Locked<[String]>([])
    let onTaskCompletion = Locked<(@Sendable () -> Void)?>(nil)

    /// Overriding the one designated initializer keeps every convenience one.
    override init(baseURL url: URL?, sessionConfiguration configuration: URLSessionConfiguration?) {
        super.init(baseURL: url, sessionConfiguration: configuration)
        responseSerializer = ProbeResponseSerializer()
    }

    // Verbs.

    @discardableResult
    override func get(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("get")
        return super.get(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func get(_ URLString: String, parameters: Any?, progress: (@Sendable (Progress) -> Void)?,
                      success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("get(progress:)")
        return super.get(URLString, parameters: parameters, progress: progress, success: success, failure: failure)
    }

    @discardableResult
    override func head(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("head")
        return super.head(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func post(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("post")
        return super.post(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func post(_ URLString: String, parameters: Any?, progress: (@Sendable (Progress) -> Void)?,
                       success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("post(progress:)")
        return super.post(URLString, parameters: parameters, progress: progress, success: success, failure: failure)
    }

    @discardableResult
    override func post(_ URLString: String, parameters: Any?,
                       constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                       success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("post(constructingBodyWith:)")
        return super.post(URLString, parameters: parameters, constructingBodyWith: block, success: success, failure: failure)
    }

    @discardableResult
    override func post(_ URLString: String, parameters: Any?,
                       constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?,
                       progress: (@Sendable (Progress) -> Void)?,
                       success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("post(constructingBodyWith:progress:)")
        return super.post(URLString, parameters: parameters, constructingBodyWith: block, progress: progress,
                          success: success, failure: failure)
    }

    @discardableResult
    override func put(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("put")
        return super.put(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func patch(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                        failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("patch")
        return super.patch(URLString, parameters: parameters, success: success, failure: failure)
    }

    @discardableResult
    override func delete(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                         failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("delete")
        return super.delete(URLString, parameters: parameters, success: success, failure: failure)
    }

    // The verbs' 2.x spellings.

    @available(*, deprecated) @discardableResult
    override func GET(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("GET")
        return super.GET(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func HEAD(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("HEAD")
        return super.HEAD(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func POST(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("POST")
        return super.POST(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func POST(_ URLString: String, parameters: Any?,
                       constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?,
                       success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("POST(constructingBodyWithBlock:)")
        return super.POST(URLString, parameters: parameters, constructingBodyWithBlock: block, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func PUT(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("PUT")
        return super.PUT(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func PATCH(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                        failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("PATCH")
        return super.PATCH(URLString, parameters: parameters, success: success, failure: failure)
    }

    @available(*, deprecated) @discardableResult
    override func DELETE(_ URLString: String, parameters: Any?, success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                         failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        calls.append("DELETE")
        return super.DELETE(URLString, parameters: parameters, success: success, failure: failure)
    }

    // Task factories.

    override func dataTask(with request: URLRequest,
                           completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        calls.append("dataTask(with:)")
        return super.dataTask(with: request, completionHandler: completionHandler)
    }

    override func dataTask(with request: URLRequest, uploadProgress: (@Sendable (Progress) -> Void)?,
                           downloadProgress: (@Sendable (Progress) -> Void)?,
                           completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        calls.append("dataTask(with:uploadProgress:downloadProgress:)")
        return super.dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                              completionHandler: completionHandler)
    }

    override func uploadTask(with request: URLRequest, fromFile fileURL: URL, progress: (@Sendable (Progress) -> Void)?,
                             completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        calls.append("uploadTask(with:fromFile:)")
        return super.uploadTask(with: request, fromFile: fileURL, progress: progress, completionHandler: completionHandler)
    }

    override func uploadTask(with request: URLRequest, from bodyData: Data?, progress: (@Sendable (Progress) -> Void)?,
                             completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        calls.append("uploadTask(with:from:)")
        return super.uploadTask(with: request, from: bodyData, progress: progress, completionHandler: completionHandler)
    }

    override func uploadTask(withStreamedRequest request: URLRequest, progress: (@Sendable (Progress) -> Void)?,
                             completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        calls.append("uploadTask(withStreamedRequest:)")
        return super.uploadTask(withStreamedRequest: request, progress: progress, completionHandler: completionHandler)
    }

    override func downloadTask(with request: URLRequest, progress: (@Sendable (Progress) -> Void)?,
                               destination: (@Sendable (URL, URLResponse) -> URL)?,
                               completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        calls.append("downloadTask(with:)")
        return super.downloadTask(with: request, progress: progress, destination: destination, completionHandler: completionHandler)
    }

    override func downloadTask(withResumeData resumeData: Data, progress: (@Sendable (Progress) -> Void)?,
                               destination: (@Sendable (URL, URLResponse) -> URL)?,
                               completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        calls.append("downloadTask(withResumeData:)")
        return super.downloadTask(withResumeData: resumeData, progress: progress, destination: destination,
                                  completionHandler: completionHandler)
    }

    // The factories' 2.x spellings.

    @available(*, deprecated)
    override func dataTaskWithRequest(_ request: URLRequest,
                                      completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        calls.append("dataTaskWithRequest")
        return super.dataTaskWithRequest(request, completionHandler: completionHandler)
    }

    @available(*, deprecated)
    override func uploadTaskWithRequest(_ request: URLRequest, fromFile fileURL: URL, progress: (@Sendable (Progress) -> Void)?,
                                        completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        calls.append("uploadTaskWithRequest(fromFile:)")
        return super.uploadTaskWithRequest(request, fromFile: fileURL, progress: progress, completionHandler: completionHandler)
    }

    @available(*, deprecated)
    override func uploadTaskWithRequest(_ request: URLRequest, fromData bodyData: Data?, progress: (@Sendable (Progress) -> Void)?,
                                        completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        calls.append("uploadTaskWithRequest(fromData:)")
        return super.uploadTaskWithRequest(request, fromData: bodyData, progress: progress, completionHandler: completionHandler)
    }

    @available(*, deprecated)
    override func uploadTaskWithStreamedRequest(_ request: URLRequest, progress: (@Sendable (Progress) -> Void)?,
                                                completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        calls.append("uploadTaskWithStreamedRequest")
        return super.uploadTaskWithStreamedRequest(request, progress: progress, completionHandler: completionHandler)
    }

    @available(*, deprecated)
    override func downloadTaskWithRequest(_ request: URLRequest, progress: (@Sendable (Progress) -> Void)?,
                                          destination: (@Sendable (URL, URLResponse) -> URL)?,
                                          completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        calls.append("downloadTaskWithRequest")
        return super.downloadTaskWithRequest(request, progress: progress, destination: destination, completionHandler: completionHandler)
    }

    @available(*, deprecated)
    override func downloadTaskWithResumeData(_ resumeData: Data, progress: (@Sendable (Progress) -> Void)?,
                                             destination: (@Sendable (URL, URLResponse) -> URL)?,
                                             completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        calls.append("downloadTaskWithResumeData")
        return super.downloadTaskWithResumeData(resumeData, progress: progress, destination: destination,
                                                completionHandler: completionHandler)
    }

    // Delegate methods (AFURLSessionManager's NSURLSession delegate implementation).

    override func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {
        delegateCalls.append("didBecomeInvalidWithError")
        super.urlSession(session, didBecomeInvalidWithError: error)
    }

    override func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                             completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        delegateCalls.append("session didReceive challenge")
        super.urlSession(session, didReceive: challenge, completionHandler: completionHandler)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                             newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        delegateCalls.append("willPerformHTTPRedirection")
        super.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request, completionHandler: completionHandler)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                             completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        delegateCalls.append("task didReceive challenge")
        super.urlSession(session, task: task, didReceive: challenge, completionHandler: completionHandler)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask,
                             needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        delegateCalls.append("needNewBodyStream")
        super.urlSession(session, task: task, needNewBodyStream: completionHandler)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                             totalBytesExpectedToSend: Int64) {
        delegateCalls.append("didSendBodyData")
        super.urlSession(session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                         totalBytesExpectedToSend: totalBytesExpectedToSend)
    }

    override func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        delegateCalls.append("didCompleteWithError")
        super.urlSession(session, task: task, didCompleteWithError: error)
        onTaskCompletion.value?()
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                             completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        delegateCalls.append("didReceive response")
        super.urlSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler)
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        delegateCalls.append("didBecome downloadTask")
        super.urlSession(session, dataTask: dataTask, didBecome: downloadTask)
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        delegateCalls.append("didReceive data")
        super.urlSession(session, dataTask: dataTask, didReceive: data)
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                             completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        delegateCalls.append("willCacheResponse")
        super.urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse, completionHandler: completionHandler)
    }

    override func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        delegateCalls.append("didFinishEvents")
        super.urlSessionDidFinishEvents(forBackgroundURLSession: session)
    }

    override func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        delegateCalls.append("didFinishDownloadingTo")
        super.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
    }

    override func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                             totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        delegateCalls.append("didWriteData")
        super.urlSession(session, downloadTask: downloadTask, didWriteData: bytesWritten, totalBytesWritten: totalBytesWritten,
                         totalBytesExpectedToWrite: totalBytesExpectedToWrite)
    }

    override func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                             expectedTotalBytes: Int64) {
        delegateCalls.append("didResumeAtOffset")
        super.urlSession(session, downloadTask: downloadTask, didResumeAtOffset: fileOffset, expectedTotalBytes: expectedTotalBytes)
    }
}

// MARK: - Serializers

/// A request serializer subclass (2.x: of AFJSONRequestSerializer) that
/// signs or decorates every request it builds.
private final class ProbeRequestSerializer: JSONRequestSerializer, @unchecked Sendable {
    // @unchecked: the only added state is `calls`, which is Locked.
    let calls = Locked<[String]>([])

    override func request(withMethod method: String, urlString: String, parameters: Any?) throws -> URLRequest {
        calls.append("request(withMethod:)")
        var request = try super.request(withMethod: method, urlString: urlString, parameters: parameters)
        request.setValue("request(withMethod:)", forHTTPHeaderField: "X-Probe")
        return request
    }

    override func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        calls.append("requestBySerializingRequest")
        return try super.requestBySerializingRequest(request, withParameters: parameters)
    }

    override func multipartFormRequest(withMethod method: String, urlString: String, parameters: [String: Any]?,
                                       constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?) throws -> URLRequest {
        calls.append("multipartFormRequest")
        return try super.multipartFormRequest(withMethod: method, urlString: urlString, parameters: parameters, constructingBodyWith: block)
    }

    override func request(withMultipartForm request: URLRequest, writingStreamContentsToFile fileURL: URL,
                          completionHandler handler: (@Sendable (Error?) -> Void)?) -> URLRequest {
        calls.append("request(withMultipartForm:)")
        return super.request(withMultipartForm: request, writingStreamContentsToFile: fileURL, completionHandler: handler)
    }

    override func setValue(_ value: String?, forHTTPHeaderField field: String) {
        calls.append("setValue")
        super.setValue(value, forHTTPHeaderField: field)
    }

    override func value(forHTTPHeaderField field: String) -> String? {
        calls.append("value(forHTTPHeaderField:)")
        return super.value(forHTTPHeaderField: field)
    }

    override func setAuthorizationHeaderFieldWithUsername(_ username: String, password: String) {
        calls.append("setAuthorizationHeaderFieldWithUsername")
        super.setAuthorizationHeaderFieldWithUsername(username, password: password)
    }

    override func clearAuthorizationHeader() {
        calls.append("clearAuthorizationHeader")
        super.clearAuthorizationHeader()
    }

    override func setQueryStringSerializationWith(_ style: HTTPRequestQueryStringSerializationStyle) {
        calls.append("setQueryStringSerializationWith(style)")
        super.setQueryStringSerializationWith(style)
    }

    override func setQueryStringSerializationWith(_ block: (@Sendable (URLRequest, Any) throws -> String)?) {
        calls.append("setQueryStringSerializationWith(block)")
        super.setQueryStringSerializationWith(block)
    }

    // The 2.x spellings.

    @available(*, deprecated)
    override func requestWithMethod(_ method: String, URLString: String, parameters: Any?) throws -> URLRequest {
        calls.append("requestWithMethod")
        return try super.requestWithMethod(method, URLString: URLString, parameters: parameters)
    }

    @available(*, deprecated)
    override func multipartFormRequestWithMethod(_ method: String, URLString: String, parameters: [String: Any]?,
                                                 constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?) throws -> URLRequest {
        calls.append("multipartFormRequestWithMethod")
        return try super.multipartFormRequestWithMethod(method, URLString: URLString, parameters: parameters, constructingBodyWithBlock: block)
    }

    @available(*, deprecated)
    override func requestWithMultipartFormRequest(_ request: URLRequest, writingStreamContentsToFile fileURL: URL,
                                                  completionHandler handler: (@Sendable (Error?) -> Void)?) -> URLRequest {
        calls.append("requestWithMultipartFormRequest")
        return super.requestWithMultipartFormRequest(request, writingStreamContentsToFile: fileURL, completionHandler: handler)
    }

    @available(*, deprecated)
    override func valueForHTTPHeaderField(_ field: String) -> String? {
        calls.append("valueForHTTPHeaderField")
        return super.valueForHTTPHeaderField(field)
    }

    @available(*, deprecated)
    override func setQueryStringSerializationWithStyle(_ style: HTTPRequestQueryStringSerializationStyle) {
        calls.append("setQueryStringSerializationWithStyle")
        super.setQueryStringSerializationWithStyle(style)
    }

    @available(*, deprecated)
    override func setQueryStringSerializationWithBlock(_ block: (@Sendable (URLRequest, Any) throws -> String)?) {
        calls.append("setQueryStringSerializationWithBlock")
        super.setQueryStringSerializationWithBlock(block)
    }
}

/// A response serializer subclass (2.x: of AFJSONResponseSerializer) that
/// reads the server's error body or rejects more responses.
private final class ProbeResponseSerializer: JSONResponseSerializer, @unchecked Sendable {
    // @unchecked: the only added state is `calls`, which is Locked.
    let calls = Locked<[String]>([])

    override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        calls.append("responseObject(for:)")
        return try super.responseObject(for: response, data: data)
    }

    override func validate(_ response: HTTPURLResponse?, data: Data?) throws {
        calls.append("validate")
        try super.validate(response, data: data)
    }

    @available(*, deprecated)
    override func validateResponse(_ response: HTTPURLResponse?, data: Data?) throws {
        calls.append("validateResponse")
        try super.validateResponse(response, data: data)
    }
}

// MARK: - Security policy

/// A security policy subclass deciding server trust itself. It declares no
/// initializer, so it has SecurityPolicy's (the required `init?(coder:)` included).
private final class ProbeSecurityPolicy: SecurityPolicy, @unchecked Sendable {
    // @unchecked: the only added state is `calls`, which is Locked.
    let calls = Locked<[String]>([])

    override func evaluateServerTrust(_ trust: ServerTrust, forDomain domain: String?) -> Bool {
        calls.append("evaluateServerTrust(_:forDomain:)")
        return super.evaluateServerTrust(trust, forDomain: domain)
    }

    @available(*, deprecated)
    override func evaluateServerTrust(_ trust: ServerTrust) -> Bool {
        calls.append("evaluateServerTrust(_:)")
        return super.evaluateServerTrust(trust)
    }

    override func evaluate(_ trust: ServerTrust, forDomain domain: String?) -> Result<Void, SecurityPolicyError> {
        calls.append("evaluate(_:forDomain:)")
        return super.evaluate(trust, forDomain: domain)
    }
}

// MARK: - Operations

/// An AFHTTPRequestOperation subclass overriding the operation's life cycle.
private final class ProbeOperation: HTTPRequestOperation, @unchecked Sendable {
    // @unchecked: the only added state is `calls`, which is Locked.
    let calls = Locked<[String]>([])

    override func start() {
        calls.append("start")
        super.start()
    }

    override func cancel() {
        calls.append("cancel")
        super.cancel()
    }

    override func pause() {
        calls.append("pause")
        super.pause()
    }

    override func resume() {
        calls.append("resume")
        super.resume()
    }

    override func setCompletionBlockWithSuccess(_ success: SuccessBlock?, failure: FailureBlock?) {
        calls.append("setCompletionBlockWithSuccess")
        super.setCompletionBlockWithSuccess(success, failure: failure)
    }
}
