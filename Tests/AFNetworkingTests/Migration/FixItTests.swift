@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif
import XCTest

/// Every deprecated Swift 2 spelling of the Compatibility+<area>.swift files, called
/// once (through `LegacyMethodSpellings`, so the build raises no deprecation
/// warning) and compared with the current API. Nothing is sent: operations are
/// cancelled before they start, session tasks before they are resumed, and the
/// only URL is a closed port on loopback.
final class FixItTests: XCTestCase {
    private var legacy: LegacyMethodSpellings { LegacyMethodCalls.current }
    private let url = "http://127.0.0.1:9/fixit"

    // MARK: HTTPRequestOperationManager

    func testOperationManagerSpellings() throws {
        let manager = legacy.operationManager()
        XCTAssertTrue(type(of: manager) == HTTPRequestOperationManager.self)
        XCTAssertNil(manager.baseURL)

        // Held in a suspended queue, then cancelled: they finish without sending anything.
        manager.operationQueue.isSuspended = true
        let operations = legacy.operationVerbs(on: manager, url: url)
        manager.operationQueue.cancelAllOperations()
        manager.operationQueue.isSuspended = false

        XCTAssertEqual(operations.map { $0?.request.httpMethod }, ["GET", "HEAD", "POST", "POST", "PUT", "PATCH", "DELETE"])
        XCTAssertEqual(operations.map { $0?.request.url?.absoluteString }, Array(repeating: Optional(url), count: 7))
        XCTAssertTrue(operations[3]?.request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("multipart/form-data") ?? false)
        for operation in operations {
            XCTAssertTrue(operation?.responseSerializer === manager.responseSerializer)
        }

        let request = URLRequest(url: try XCTUnwrap(URL(string: url)))
        let operation = legacy.operation(from: manager, for: request)
        XCTAssertEqual(operation.request.url, request.url)
        XCTAssertTrue(operation.responseSerializer === manager.responseSerializer)
        XCTAssertFalse(operation.isExecuting || operation.isFinished, "the operation is made, not started")
    }

    func testBatchSpelling() throws {
        let operation = HTTPRequestOperation(request: URLRequest(url: try XCTUnwrap(URL(string: url))))
        operation.cancel() // finishes at once when started, sending nothing
        let progress = Locked<[String]>([])
        let done = expectation(description: "batch completion")
        let batch = legacy.batch(of: [operation], progress: { finished, total in
            progress.append("\(finished)/\(total)")
        }, completion: { operations in
            XCTAssertEqual(operations.count, 1)
            done.fulfill()
        })
        XCTAssertEqual(batch.count, 2)
        XCTAssertTrue(batch.first === operation)
        XCTAssertTrue((batch.last?.dependencies ?? []).contains { $0 === operation })
        let queue = OperationQueue()
        queue.addOperations(batch, waitUntilFinished: false)
        wait(for: [done], timeout: 10)
        XCTAssertEqual(progress.value, ["1/1"])
    }

    // MARK: Session managers

    func testSessionManagerSpellings() throws {
        let plain = legacy.sessionManager()
        XCTAssertTrue(type(of: plain) == HTTPSessionManager.self)
        XCTAssertNil(plain.baseURL)
        plain.invalidateSessionCancelingTasks(true)

        let manager = CancellingSessionManager()
        defer { manager.invalidateSessionCancelingTasks(true) }
        let tasks = legacy.sessionVerbs(on: manager, url: url)
        XCTAssertEqual(tasks.map { $0?.originalRequest?.httpMethod }, ["GET", "HEAD", "POST", "POST", "PUT", "PATCH", "DELETE"])
        XCTAssertEqual(tasks.map { $0?.originalRequest?.url?.absoluteString }, Array(repeating: Optional(url), count: 7))
        XCTAssertTrue(tasks[3] is URLSessionUploadTask, "a multipart POST streams from an upload task")
    }

    func testURLSessionManagerTaskSpellings() throws {
        let manager = URLSessionManager(sessionConfiguration: nil)
        defer { manager.invalidateSessionCancelingTasks(true) }
        var request = URLRequest(url: try XCTUnwrap(URL(string: url)))
        request.httpMethod = "PUT"
        request.httpBodyStream = InputStream(data: Data("streamed".utf8))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("fixit-\(UUID().uuidString).txt")
        let junk = Data("not resume data".utf8)

        let tasks = legacy.sessionTasks(on: manager, request: request, file: file, resumeData: junk)
        defer { tasks.forEach { $0.cancel() } }
        XCTAssertEqual(tasks.count, 6)
        XCTAssertTrue(tasks[0] is URLSessionDataTask && !(tasks[0] is URLSessionUploadTask))
        XCTAssertTrue(tasks[1] is URLSessionUploadTask)
        XCTAssertTrue(tasks[2] is URLSessionUploadTask)
        XCTAssertTrue(tasks[3] is URLSessionUploadTask)
        XCTAssertTrue(tasks[4] is URLSessionDownloadTask)
        XCTAssertTrue(tasks[5] is URLSessionDownloadTask)
        for task in tasks.prefix(5) {
            XCTAssertEqual(task.originalRequest?.url, request.url)
            XCTAssertNotEqual(task.state, .running, "made, not resumed")
        }
        let current = manager.downloadTask(withResumeData: junk, progress: nil, destination: nil, completionHandler: nil)
        defer { current.cancel() }
        XCTAssertEqual(tasks[5].originalRequest?.url, current.originalRequest?.url)

        let (upload, download) = legacy.progress(of: tasks[1], in: manager)
        XCTAssertNotNil(upload)
        XCTAssertNotNil(download)
        XCTAssertTrue(upload === manager.uploadProgress(for: tasks[1]))
        XCTAssertTrue(download === manager.downloadProgress(for: tasks[1]))
    }

    // MARK: Reachability

    func testReachabilitySpellings() {
        XCTAssertTrue(legacy.sharedReachabilityManager() === NetworkReachabilityManager.shared())

        let domain = legacy.reachabilityManager(forDomain: "localhost")
        XCTAssertEqual(domain.networkReachabilityStatus, .unknown)
        XCTAssertEqual(legacy.reachability(of: domain), [domain.isReachable, domain.isReachableViaWWAN, domain.isReachableViaWiFi])
        XCTAssertEqual(legacy.string(for: domain.networkReachabilityStatus), domain.localizedNetworkReachabilityStatusString())

        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let loopback = withUnsafePointer(to: &address) { legacy.reachabilityManager(forAddress: UnsafeRawPointer($0)) }
        let statuses = Locked<[NetworkReachabilityStatus]>([])
        let changed = expectation(description: "status block")
        changed.assertForOverFulfill = false
        legacy.setStatusChangeBlock(on: loopback) { status in
            statuses.append(status)
            changed.fulfill()
        }
        loopback.startMonitoring()
        wait(for: [changed], timeout: 10)
        loopback.stopMonitoring()
        XCTAssertEqual(statuses.value.first, loopback.networkReachabilityStatus)
        XCTAssertEqual(legacy.reachability(of: loopback), [loopback.isReachable, loopback.isReachableViaWWAN, loopback.isReachableViaWiFi])
        XCTAssertEqual(legacy.string(for: loopback.networkReachabilityStatus), loopback.localizedNetworkReachabilityStatusString())

        let all: [NetworkReachabilityStatus] = [.unknown, .notReachable, .reachableViaWWAN, .reachableViaWiFi]
        XCTAssertEqual(legacy.reachabilityStatuses, all)
        XCTAssertEqual(all.map { legacy.string(for: $0) }, ["Unknown", "Not Reachable", "Reachable via WWAN", "Reachable via WiFi"])
        XCTAssertEqual(all.map { legacy.string(for: $0) }, all.map { $0.localizedString })
    }

    // MARK: Security

    func testSecurityPolicySpellings() {
        let policy = legacy.defaultPolicy()
        let current = SecurityPolicy.default()
        XCTAssertEqual(policy.sslPinningMode, current.sslPinningMode)
        XCTAssertEqual(policy.allowInvalidCertificates, current.allowInvalidCertificates)
        XCTAssertEqual(policy.validatesDomainName, current.validatesDomainName)
        XCTAssertEqual(policy.pinnedCertificates, current.pinnedCertificates)

        let pinning = legacy.policy(pinningMode: .publicKey)
        XCTAssertEqual(pinning.sslPinningMode, .publicKey)
        XCTAssertEqual(pinning.pinnedCertificates, SecurityPolicy(pinningMode: .publicKey).pinnedCertificates)
        XCTAssertEqual(legacy.pinningModes, [SSLPinningMode.none, SSLPinningMode.publicKey, SSLPinningMode.certificate])
    }

    // MARK: Request serialization

    func testRequestSerializerSpellings() throws {
        let serializer = HTTPRequestSerializer()
        serializer.setValue("1", forHTTPHeaderField: "X-Fix-It")
        XCTAssertEqual(legacy.headerValue(of: serializer, field: "x-fix-it"), "1")
        XCTAssertEqual(legacy.headerValue(of: serializer, field: "x-fix-it"), serializer.value(forHTTPHeaderField: "x-fix-it"))

        legacy.setProperties(of: serializer, handlesCookies: false, usesPipelining: true, methodsInURI: ["GET"])
        XCTAssertFalse(serializer.httpShouldHandleCookies)
        XCTAssertTrue(serializer.httpShouldUsePipelining)
        XCTAssertEqual(serializer.httpMethodsEncodingParametersInURI, ["GET"])
        let properties = legacy.properties(of: serializer)
        XCTAssertEqual(properties.handlesCookies, serializer.httpShouldHandleCookies)
        XCTAssertEqual(properties.usesPipelining, serializer.httpShouldUsePipelining)
        XCTAssertEqual(properties.methodsInURI, serializer.httpMethodsEncodingParametersInURI)
        XCTAssertEqual(properties.headers, serializer.httpRequestHeaders)

        let query = HTTPRequestSerializer()
        legacy.useQueryBlock(on: query) { _, _ in "custom=1" }
        XCTAssertEqual(try query.request(withMethod: "GET", urlString: url, parameters: ["a": "b"]).url?.query, "custom=1")
        legacy.useDefaultQueryStyle(on: query)
        XCTAssertEqual(query.queryStringSerializationStyle, .defaultStyle)
        XCTAssertEqual(try query.request(withMethod: "GET", urlString: url, parameters: ["a": "b"]).url?.query, "a=b")

        let plain = HTTPRequestSerializer()
        let old = try legacy.request(from: plain, method: "POST", url: url, parameters: ["a": "b"])
        let new = try plain.request(withMethod: "POST", urlString: url, parameters: ["a": "b"])
        XCTAssertEqual(old.httpMethod, "POST")
        XCTAssertEqual(old.url, new.url)
        XCTAssertEqual(old.httpBody, new.httpBody)
        XCTAssertEqual(old.allHTTPHeaderFields, new.allHTTPHeaderFields)

        let bare = URLRequest(url: try XCTUnwrap(URL(string: url)))
        let serialized = legacy.serialize(bare, with: plain, parameters: ["q": "1"])
        XCTAssertNil(serialized.error)
        XCTAssertEqual(serialized.request?.url, try plain.requestBySerializingRequest(bare, withParameters: ["q": "1"]).url)

        let refusing = HTTPRequestSerializer()
        refusing.setQueryStringSerializationWith { _, _ in throw FixItTestError.refused }
        let refused = legacy.serialize(bare, with: refusing, parameters: ["q": "1"])
        XCTAssertNil(refused.request)
        var thrown: NSError?
        XCTAssertThrowsError(try refusing.requestBySerializingRequest(bare, withParameters: ["q": "1"])) { thrown = $0 as NSError }
        XCTAssertNotNil(refused.error)
        XCTAssertEqual(refused.error?.domain, thrown?.domain)
        XCTAssertEqual(refused.error?.code, thrown?.code)
    }

    func testMultipartSpellings() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fixit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("part.txt")
        try Data("file contents".utf8).write(to: file)

        let serializer = HTTPRequestSerializer()
        let request = try legacy.multipartRequest(from: serializer, url: url, file: file)
        XCTAssertEqual(request.httpMethod, "POST")
        XCTAssertTrue(request.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("multipart/form-data; boundary=") ?? false)
        var largestRead = 0
        let body = drain(request.httpBodyStream, largestRead: &largestRead)
        XCTAssertEqual(String(body.count), request.value(forHTTPHeaderField: "Content-Length"))
        XCTAssertEqual(largestRead, 100, "throttleBandwidthWithPacketSize(100, delay: 0) limits each read")
        let text = String(decoding: body, as: UTF8.self)
        for expected in ["name=\"field\"", "value",
                         "name=\"file1\"; filename=\"part.txt\"", "file contents",
                         "name=\"file2\"; filename=\"renamed.txt\"", "Content-Type: text/x-fixit",
                         "name=\"stream\"; filename=\"s.bin\"", "streamed",
                         "name=\"data\"; filename=\"d.bin\"", "filedata",
                         "name=\"form\"", "formdata",
                         "X-Part: fixit", "headersbody"] {
            XCTAssertTrue(text.contains(expected), "\(expected) is not in the body")
        }

        // A body with no stream part, so the copy written to the file reads the same bytes.
        let formRequest = try serializer.multipartFormRequest(withMethod: "POST", urlString: url, parameters: ["k": "v"]) { form in
            try form.appendPart(withFileURL: file, name: "f")
        }
        let target = directory.appendingPathComponent("body.out")
        let written = expectation(description: "written")
        let writeError = Locked<Error?>(nil)
        let stripped = legacy.requestWritingBody(of: formRequest, with: serializer, to: target) { error in
            writeError.value = error
            written.fulfill()
        }
        wait(for: [written], timeout: 10)
        XCTAssertNil(writeError.value)
        XCTAssertNil(stripped.httpBodyStream)
        let formBody = drain(formRequest.httpBodyStream, largestRead: &largestRead)
        XCTAssertFalse(formBody.isEmpty)
        XCTAssertEqual(try Data(contentsOf: target), formBody)
    }

    // MARK: Response serialization

    func testResponseSerializerSpellings() throws {
        let json = JSONResponseSerializer()
        let address = try XCTUnwrap(URL(string: url))
        let ok = try XCTUnwrap(HTTPURLResponse(url: address, statusCode: 200, httpVersion: "HTTP/1.1",
                                               headerFields: ["Content-Type": "application/json"]))
        let notFound = try XCTUnwrap(HTTPURLResponse(url: address, statusCode: 404, httpVersion: "HTTP/1.1",
                                                     headerFields: ["Content-Type": "application/json"]))
        let data = Data(#"{"a":1}"#.utf8)

        let parsed = legacy.responseObject(from: json, response: ok, data: data)
        XCTAssertNil(parsed.error)
        XCTAssertEqual((parsed.object as? [String: Any])?["a"] as? Int, 1)
        XCTAssertEqual((try json.responseObject(for: ok, data: data) as? [String: Any])?["a"] as? Int, 1)

        let failed = legacy.responseObject(from: json, response: notFound, data: data)
        XCTAssertNil(failed.object)
        var thrown: NSError?
        XCTAssertThrowsError(try json.responseObject(for: notFound, data: data)) { thrown = $0 as NSError }
        XCTAssertNotNil(failed.error)
        XCTAssertEqual(failed.error?.domain, thrown?.domain)
        XCTAssertEqual(failed.error?.code, thrown?.code)

        XCTAssertNoThrow(try legacy.validate(ok, data: data, with: json))
        var validationError: NSError?
        XCTAssertThrowsError(try json.validate(notFound, data: data)) { validationError = $0 as NSError }
        XCTAssertThrowsError(try legacy.validate(notFound, data: data, with: json)) { error in
            XCTAssertEqual((error as NSError).domain, validationError?.domain)
            XCTAssertEqual((error as NSError).code, validationError?.code)
        }
    }

    func testSerializerFactorySpellings() {
        let jsonRequest = legacy.jsonRequestSerializer(.prettyPrinted)
        XCTAssertTrue(type(of: jsonRequest) == JSONRequestSerializer.self)
        XCTAssertEqual(jsonRequest.writingOptions, .prettyPrinted)

        let plistRequest = legacy.propertyListRequestSerializer(.binary)
        XCTAssertEqual(plistRequest.format, .binary)

        let jsonResponse = legacy.jsonResponseSerializer(.mutableContainers)
        XCTAssertTrue(type(of: jsonResponse) == JSONResponseSerializer.self)
        XCTAssertEqual(jsonResponse.readingOptions, .mutableContainers)

        let xml = legacy.xmlDocumentResponseSerializer([.nodePreserveWhitespace])
        XCTAssertEqual(xml.options, [.nodePreserveWhitespace])

        let plistResponse = legacy.propertyListResponseSerializer(.binary, .mutableContainers)
        XCTAssertEqual(plistResponse.format, .binary)
        XCTAssertEqual(plistResponse.readOptions, .mutableContainers)

        let parts = [JSONResponseSerializer(), XMLParserResponseSerializer()]
        let compound = legacy.compoundResponseSerializer(parts)
        XCTAssertEqual(compound.responseSerializers.count, 2)
        XCTAssertTrue(compound.responseSerializers[0] === parts[0])
        XCTAssertTrue(compound.responseSerializers[1] === parts[1])
    }

    // MARK: NetworkActivityIndicatorManager

    func testActivityIndicatorSpellings() {
        XCTAssertTrue(legacy.sharedActivityIndicatorManager() === NetworkActivityIndicatorManager.shared())
        let manager = NetworkActivityIndicatorManager()
        legacy.setEnabled(true, on: manager)
        XCTAssertTrue(manager.isEnabled)
        XCTAssertEqual(legacy.isEnabled(manager), manager.isEnabled)
        legacy.setEnabled(false, on: manager)
        XCTAssertFalse(manager.isEnabled)
        XCTAssertEqual(legacy.isEnabled(manager), manager.isEnabled)
    }

    // MARK: Helpers

    /// Reads `stream` to its end, noting the largest single read.
    private func drain(_ stream: InputStream?, largestRead: inout Int) -> Data {
        guard let stream else {
            XCTFail("no body stream")
            return Data()
        }
        stream.open()
        defer { stream.close() }
        var result = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count < 0 {
                XCTFail("stream error \(String(describing: stream.streamError))")
                break
            }
            if count == 0 { break }
            largestRead = max(largestRead, count)
            result.append(contentsOf: buffer[0..<count])
        }
        return result
    }
}

private enum FixItTestError: Error {
    case refused
}

/// Cancels each task it makes before the verb method resumes it, so nothing is sent.
private final class CancellingSessionManager: HTTPSessionManager, @unchecked Sendable {
    // @unchecked: no state of its own.
    override func dataTask(with request: URLRequest,
                           uploadProgress: (@Sendable (Progress) -> Void)?,
                           downloadProgress: (@Sendable (Progress) -> Void)?,
                           completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        let task = super.dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                                  completionHandler: completionHandler)
        task.cancel()
        return task
    }

    override func uploadTask(withStreamedRequest request: URLRequest,
                             progress: (@Sendable (Progress) -> Void)?,
                             completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        let task = super.uploadTask(withStreamedRequest: request, progress: progress, completionHandler: completionHandler)
        task.cancel()
        return task
    }
}

/// The deprecated spellings, one call each. The test calls them through this
/// protocol, whose requirements are not deprecated, so the build raises no
/// deprecation warning; `LegacyMethodCalls` implements them in deprecated
/// members, inside which deprecated declarations may be used freely.
protocol LegacyMethodSpellings {
    func operationManager() -> HTTPRequestOperationManager
    /// GET, HEAD, POST, multipart POST, PUT, PATCH, DELETE, in this order.
    func operationVerbs(on manager: HTTPRequestOperationManager, url: String) -> [HTTPRequestOperation?]
    func operation(from manager: HTTPRequestOperationManager, for request: URLRequest) -> HTTPRequestOperation
    func batch(of operations: [URLConnectionOperation],
               progress: @escaping @Sendable (Int, Int) -> Void,
               completion: @escaping @Sendable ([URLConnectionOperation]) -> Void) -> [Operation]

    func sessionManager() -> HTTPSessionManager
    /// GET, HEAD, POST, multipart POST, PUT, PATCH, DELETE, in this order.
    func sessionVerbs(on manager: HTTPSessionManager, url: String) -> [URLSessionDataTask?]
    /// Data, upload from file, upload from data, streamed upload, download, download from resume data.
    func sessionTasks(on manager: URLSessionManager, request: URLRequest, file: URL, resumeData: Data) -> [URLSessionTask]
    func progress(of task: URLSessionTask, in manager: URLSessionManager) -> (upload: Progress?, download: Progress?)

    func sharedReachabilityManager() -> NetworkReachabilityManager
    func reachabilityManager(forDomain domain: String) -> NetworkReachabilityManager
    func reachabilityManager(forAddress address: UnsafeRawPointer) -> NetworkReachabilityManager
    func setStatusChangeBlock(on manager: NetworkReachabilityManager, _ block: @escaping @Sendable (NetworkReachabilityStatus) -> Void)
    /// `reachable`, `reachableViaWWAN`, `reachableViaWiFi`.
    func reachability(of manager: NetworkReachabilityManager) -> [Bool]
    func string(for status: NetworkReachabilityStatus) -> String
    /// `.Unknown`, `.NotReachable`, `.ReachableViaWWAN`, `.ReachableViaWiFi`.
    var reachabilityStatuses: [NetworkReachabilityStatus] { get }

    func defaultPolicy() -> SecurityPolicy
    func policy(pinningMode: SSLPinningMode) -> SecurityPolicy
    /// `.None`, `.PublicKey`, `.Certificate`.
    var pinningModes: [SSLPinningMode] { get }

    func headerValue(of serializer: HTTPRequestSerializer, field: String) -> String?
    func setProperties(of serializer: HTTPRequestSerializer, handlesCookies: Bool, usesPipelining: Bool, methodsInURI: Set<String>)
    func properties(of serializer: HTTPRequestSerializer)
        -> (handlesCookies: Bool, usesPipelining: Bool, headers: [String: String], methodsInURI: Set<String>)
    func useQueryBlock(on serializer: HTTPRequestSerializer, _ block: @escaping @Sendable (URLRequest, Any) throws -> String)
    func useDefaultQueryStyle(on serializer: HTTPRequestSerializer)
    func request(from serializer: HTTPRequestSerializer, method: String, url: String, parameters: Any?) throws -> URLRequest
    func serialize(_ request: URLRequest, with serializer: URLRequestSerialization, parameters: Any?) -> (request: URLRequest?, error: NSError?)
    /// Every multipart spelling, and a 100-byte throttle without delay.
    func multipartRequest(from serializer: HTTPRequestSerializer, url: String, file: URL) throws -> URLRequest
    func requestWritingBody(of request: URLRequest, with serializer: HTTPRequestSerializer, to file: URL,
                            handler: @escaping @Sendable (Error?) -> Void) -> URLRequest

    func responseObject(from serializer: URLResponseSerialization, response: URLResponse?, data: Data?) -> (object: Any?, error: NSError?)
    func validate(_ response: HTTPURLResponse?, data: Data?, with serializer: HTTPResponseSerializer) throws
    func jsonRequestSerializer(_ options: JSONSerialization.WritingOptions) -> JSONRequestSerializer
    func propertyListRequestSerializer(_ format: PropertyListSerialization.PropertyListFormat) -> PropertyListRequestSerializer
    func jsonResponseSerializer(_ options: JSONSerialization.ReadingOptions) -> JSONResponseSerializer
    func xmlDocumentResponseSerializer(_ options: XMLNode.Options) -> XMLDocumentResponseSerializer
    func propertyListResponseSerializer(_ format: PropertyListSerialization.PropertyListFormat,
                                        _ options: PropertyListSerialization.ReadOptions) -> PropertyListResponseSerializer
    func compoundResponseSerializer(_ serializers: [HTTPResponseSerializer]) -> CompoundResponseSerializer

    func sharedActivityIndicatorManager() -> NetworkActivityIndicatorManager
    func setEnabled(_ enabled: Bool, on manager: NetworkActivityIndicatorManager)
    func isEnabled(_ manager: NetworkActivityIndicatorManager) -> Bool
}

struct LegacyMethodCalls: LegacyMethodSpellings {
    /// Through the protocol, so callers see no deprecation.
    static var current: LegacyMethodSpellings { LegacyMethodCalls() }

    @available(*, deprecated)
    func operationManager() -> HTTPRequestOperationManager {
        AFHTTPRequestOperationManager.manager()
    }

    @available(*, deprecated)
    func operationVerbs(on manager: HTTPRequestOperationManager, url: String) -> [HTTPRequestOperation?] {
        [manager.GET(url, parameters: nil, success: nil, failure: nil),
         manager.HEAD(url, parameters: nil, success: nil, failure: nil),
         manager.POST(url, parameters: nil, success: nil, failure: nil),
         manager.POST(url, parameters: nil, constructingBodyWithBlock: { form in
             form.appendPart(withForm: Data("v".utf8), name: "k")
         }, success: nil, failure: nil),
         manager.PUT(url, parameters: nil, success: nil, failure: nil),
         manager.PATCH(url, parameters: nil, success: nil, failure: nil),
         manager.DELETE(url, parameters: nil, success: nil, failure: nil)]
    }

    @available(*, deprecated)
    func operation(from manager: HTTPRequestOperationManager, for request: URLRequest) -> HTTPRequestOperation {
        manager.HTTPRequestOperationWithRequest(request, success: nil, failure: nil)
    }

    @available(*, deprecated)
    func batch(of operations: [URLConnectionOperation],
               progress: @escaping @Sendable (Int, Int) -> Void,
               completion: @escaping @Sendable ([URLConnectionOperation]) -> Void) -> [Operation] {
        AFURLConnectionOperation.batchOfRequestOperations(operations, progressBlock: progress, completionBlock: completion)
    }

    @available(*, deprecated)
    func sessionManager() -> HTTPSessionManager {
        AFHTTPSessionManager.manager()
    }

    @available(*, deprecated)
    func sessionVerbs(on manager: HTTPSessionManager, url: String) -> [URLSessionDataTask?] {
        [manager.GET(url, parameters: nil, success: nil, failure: nil),
         manager.HEAD(url, parameters: nil, success: nil, failure: nil),
         manager.POST(url, parameters: nil, success: nil, failure: nil),
         manager.POST(url, parameters: nil, constructingBodyWithBlock: { form in
             form.appendPart(withForm: Data("v".utf8), name: "k")
         }, success: nil, failure: nil),
         manager.PUT(url, parameters: nil, success: nil, failure: nil),
         manager.PATCH(url, parameters: nil, success: nil, failure: nil),
         manager.DELETE(url, parameters: nil, success: nil, failure: nil)]
    }

    @available(*, deprecated)
    func sessionTasks(on manager: URLSessionManager, request: URLRequest, file: URL, resumeData: Data) -> [URLSessionTask] {
        [manager.dataTaskWithRequest(request, completionHandler: nil),
         manager.uploadTaskWithRequest(request, fromFile: file, progress: nil, completionHandler: nil),
         manager.uploadTaskWithRequest(request, fromData: Data("body".utf8), progress: nil, completionHandler: nil),
         manager.uploadTaskWithStreamedRequest(request, progress: nil, completionHandler: nil),
         manager.downloadTaskWithRequest(request, progress: nil, destination: nil, completionHandler: nil),
         manager.downloadTaskWithResumeData(resumeData, progress: nil, destination: nil, completionHandler: nil)]
    }

    @available(*, deprecated)
    func progress(of task: URLSessionTask, in manager: URLSessionManager) -> (upload: Progress?, download: Progress?) {
        (manager.uploadProgressForTask(task), manager.downloadProgressForTask(task))
    }

    @available(*, deprecated)
    func sharedReachabilityManager() -> NetworkReachabilityManager {
        AFNetworkReachabilityManager.sharedManager()
    }

    @available(*, deprecated)
    func reachabilityManager(forDomain domain: String) -> NetworkReachabilityManager {
        NetworkReachabilityManager.managerForDomain(domain)
    }

    @available(*, deprecated)
    func reachabilityManager(forAddress address: UnsafeRawPointer) -> NetworkReachabilityManager {
        NetworkReachabilityManager.managerForAddress(address)
    }

    @available(*, deprecated)
    func setStatusChangeBlock(on manager: NetworkReachabilityManager, _ block: @escaping @Sendable (NetworkReachabilityStatus) -> Void) {
        manager.setReachabilityStatusChangeBlock(block)
    }

    @available(*, deprecated)
    func reachability(of manager: NetworkReachabilityManager) -> [Bool] {
        [manager.reachable, manager.reachableViaWWAN, manager.reachableViaWiFi]
    }

    @available(*, deprecated)
    func string(for status: NetworkReachabilityStatus) -> String {
        AFStringFromNetworkReachabilityStatus(status)
    }

    @available(*, deprecated)
    var reachabilityStatuses: [NetworkReachabilityStatus] {
        [.Unknown, .NotReachable, .ReachableViaWWAN, .ReachableViaWiFi]
    }

    @available(*, deprecated)
    func defaultPolicy() -> SecurityPolicy {
        AFSecurityPolicy.defaultPolicy()
    }

    @available(*, deprecated)
    func policy(pinningMode: SSLPinningMode) -> SecurityPolicy {
        AFSecurityPolicy.policyWithPinningMode(pinningMode)
    }

    @available(*, deprecated)
    var pinningModes: [SSLPinningMode] {
        [.None, .PublicKey, .Certificate]
    }

    @available(*, deprecated)
    func headerValue(of serializer: HTTPRequestSerializer, field: String) -> String? {
        serializer.valueForHTTPHeaderField(field)
    }

    @available(*, deprecated)
    func setProperties(of serializer: HTTPRequestSerializer, handlesCookies: Bool, usesPipelining: Bool, methodsInURI: Set<String>) {
        serializer.HTTPShouldHandleCookies = handlesCookies
        serializer.HTTPShouldUsePipelining = usesPipelining
        serializer.HTTPMethodsEncodingParametersInURI = methodsInURI
    }

    @available(*, deprecated)
    func properties(of serializer: HTTPRequestSerializer)
        -> (handlesCookies: Bool, usesPipelining: Bool, headers: [String: String], methodsInURI: Set<String>) {
        (serializer.HTTPShouldHandleCookies, serializer.HTTPShouldUsePipelining, serializer.HTTPRequestHeaders,
         serializer.HTTPMethodsEncodingParametersInURI)
    }

    @available(*, deprecated)
    func useQueryBlock(on serializer: HTTPRequestSerializer, _ block: @escaping @Sendable (URLRequest, Any) throws -> String) {
        serializer.setQueryStringSerializationWithBlock(block)
    }

    @available(*, deprecated)
    func useDefaultQueryStyle(on serializer: HTTPRequestSerializer) {
        serializer.setQueryStringSerializationWithStyle(.DefaultStyle)
    }

    @available(*, deprecated)
    func request(from serializer: HTTPRequestSerializer, method: String, url: String, parameters: Any?) throws -> URLRequest {
        try serializer.requestWithMethod(method, URLString: url, parameters: parameters)
    }

    @available(*, deprecated)
    func serialize(_ request: URLRequest, with serializer: URLRequestSerialization, parameters: Any?) -> (request: URLRequest?, error: NSError?) {
        var error: NSError?
        let serialized = serializer.requestBySerializingRequest(request, withParameters: parameters, error: &error)
        return (serialized, error)
    }

    @available(*, deprecated)
    func multipartRequest(from serializer: HTTPRequestSerializer, url: String, file: URL) throws -> URLRequest {
        try serializer.multipartFormRequestWithMethod("POST", URLString: url, parameters: ["field": "value"],
                                                      constructingBodyWithBlock: { form in
            try form.appendPartWithFileURL(file, name: "file1")
            try form.appendPartWithFileURL(file, name: "file2", fileName: "renamed.txt", mimeType: "text/x-fixit")
            form.appendPartWithInputStream(InputStream(data: Data("streamed".utf8)), name: "stream", fileName: "s.bin",
                                           length: 8, mimeType: "application/octet-stream")
            form.appendPartWithFileData(Data("filedata".utf8), name: "data", fileName: "d.bin", mimeType: "application/octet-stream")
            form.appendPartWithFormData(Data("formdata".utf8), name: "form")
            form.appendPartWithHeaders(["Content-Disposition": "form-data; name=\"headers\"", "X-Part": "fixit"],
                                       body: Data("headersbody".utf8))
            form.throttleBandwidthWithPacketSize(100, delay: 0)
        })
    }

    @available(*, deprecated)
    func requestWritingBody(of request: URLRequest, with serializer: HTTPRequestSerializer, to file: URL,
                            handler: @escaping @Sendable (Error?) -> Void) -> URLRequest {
        serializer.requestWithMultipartFormRequest(request, writingStreamContentsToFile: file, completionHandler: handler)
    }

    @available(*, deprecated)
    func responseObject(from serializer: URLResponseSerialization, response: URLResponse?, data: Data?) -> (object: Any?, error: NSError?) {
        var error: NSError?
        let object = serializer.responseObjectForResponse(response, data: data, error: &error)
        return (object, error)
    }

    @available(*, deprecated)
    func validate(_ response: HTTPURLResponse?, data: Data?, with serializer: HTTPResponseSerializer) throws {
        try serializer.validateResponse(response, data: data)
    }

    @available(*, deprecated)
    func jsonRequestSerializer(_ options: JSONSerialization.WritingOptions) -> JSONRequestSerializer {
        AFJSONRequestSerializer.serializerWithWritingOptions(options)
    }

    @available(*, deprecated)
    func propertyListRequestSerializer(_ format: PropertyListSerialization.PropertyListFormat) -> PropertyListRequestSerializer {
        AFPropertyListRequestSerializer.serializerWithFormat(format, writeOptions: 0)
    }

    @available(*, deprecated)
    func jsonResponseSerializer(_ options: JSONSerialization.ReadingOptions) -> JSONResponseSerializer {
        AFJSONResponseSerializer.serializerWithReadingOptions(options)
    }

    @available(*, deprecated)
    func xmlDocumentResponseSerializer(_ options: XMLNode.Options) -> XMLDocumentResponseSerializer {
        AFXMLDocumentResponseSerializer.serializerWithXMLDocumentOptions(options)
    }

    @available(*, deprecated)
    func propertyListResponseSerializer(_ format: PropertyListSerialization.PropertyListFormat,
                                        _ options: PropertyListSerialization.ReadOptions) -> PropertyListResponseSerializer {
        AFPropertyListResponseSerializer.serializerWithFormat(format, readOptions: options)
    }

    @available(*, deprecated)
    func compoundResponseSerializer(_ serializers: [HTTPResponseSerializer]) -> CompoundResponseSerializer {
        AFCompoundResponseSerializer.compoundSerializerWithResponseSerializers(serializers)
    }

    @available(*, deprecated)
    func sharedActivityIndicatorManager() -> NetworkActivityIndicatorManager {
        AFNetworkActivityIndicatorManager.sharedManager()
    }

    @available(*, deprecated)
    func setEnabled(_ enabled: Bool, on manager: NetworkActivityIndicatorManager) {
        manager.enabled = enabled
    }

    @available(*, deprecated)
    func isEnabled(_ manager: NetworkActivityIndicatorManager) -> Bool {
        manager.enabled
    }
}
