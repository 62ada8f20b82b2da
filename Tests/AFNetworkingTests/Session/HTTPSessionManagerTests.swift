@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// HTTPSessionManager against the local httpbin (AFNetworking 2.7's and
/// 3.2.1's AFHTTPSessionManagerTests), plus its URL rules, coding, copying and
/// the security policy enforced in the handshake.
final class HTTPSessionManagerTests: SessionTasksTestCase {
    private func httpbinManager() throws -> HTTPSessionManager {
        makeHTTPManager(baseURL: try SharedServers.httpbin().baseURL)
    }

    /// Waits for the verb's success or failure block.
    @discardableResult
    private func finish(_ call: VerbCallProbe, timeout: TimeInterval = 20) -> VerbCallProbe.Outcome {
        wait(for: [call.expectation], timeout: timeout)
        return call.outcome.value
    }

    // MARK: Data and download tasks made through the manager

    func testDataTaskInvokesTheCompletionHandlerWithTheResponseObject() throws {
        let manager = try httpbinManager()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: URL(string: "get", relativeTo: manager.baseURL)!), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.stateInHandler, .completed)
        XCTAssertEqual(task.state, .completed)
        XCTAssertNil(outcome.error)
        XCTAssertNotNil(outcome.object)
    }

    func testDataTaskInvokesTheCompletionHandlerWithAnErrorOnFailure() throws {
        let manager = try httpbinManager()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: URL(string: "status/404", relativeTo: manager.baseURL)!),
                                    completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.stateInHandler, .completed)
        XCTAssertNotNil(outcome.error)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 404)
    }

    func testRedirectBlockIsCalledFor302() throws {
        let manager = try httpbinManager()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: URL(string: "redirect/1", relativeTo: manager.baseURL)!),
                                    completionHandler: probe.data)
        let sawResponse = Locked(false)
        manager.setTaskWillPerformHTTPRedirectionBlock { _, _, response, request in
            if (response as? HTTPURLResponse)?.statusCode == 302 { sawResponse.value = true }
            return request
        }
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.stateInHandler, .completed)
        XCTAssertNil(outcome.error)
        XCTAssertTrue(sawResponse.value)
    }

    func testDownloadUsesTheManagerLevelFinishBlock() throws {
        let manager = try httpbinManager()
        let destination = temporaryFileURL("manager-level")
        let locations = Locked<[URL]>([])
        manager.setDownloadTaskDidFinishDownloadingBlock { _, _, location in
            locations.append(location)
            return destination
        }
        let probe = makeProbe()
        let task = manager.downloadTask(with: URLRequest(url: manager.baseURL!), progress: nil, destination: nil,
                                        completionHandler: probe.download)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.fileURL, destination)
        XCTAssertEqual(locations.value.count, 1)
        let body = try Data(contentsOf: destination)
        XCTAssertFalse(body.isEmpty)
        XCTAssertTrue(String(decoding: body, as: UTF8.self).lowercased().contains("<html"), "httpbin's front page")
        if let location = locations.value.first {
            let temporary = URL(fileURLWithPath: NSTemporaryDirectory()).resolvingSymlinksInPath().path
            XCTAssertTrue(location.resolvingSymlinksInPath().path.hasPrefix(temporary), "written in NSTemporaryDirectory(): \(location.path)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: location.path), "the file was moved away")
        }
    }

    func testManagerLevelFinishBlockTakesPrecedenceOverTheTasksDestination() throws {
        let manager = try httpbinManager()
        let destination = temporaryFileURL("manager-level")
        let other = temporaryFileURL("task-level")
        let asked = Locked(0)
        manager.setDownloadTaskDidFinishDownloadingBlock { _, _, _ in destination }
        let probe = makeProbe()
        let task = manager.downloadTask(with: URLRequest(url: URL(string: "bytes/1024", relativeTo: manager.baseURL)!), progress: nil,
                                        destination: { _, _ in asked.increment(); return other }, completionHandler: probe.download)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.fileURL, destination)
        XCTAssertEqual(asked.value, 0, "2.7: the task's destination is not asked when the manager's block answered")
        XCTAssertEqual((try? Data(contentsOf: destination))?.count, 1024)
        XCTAssertFalse(FileManager.default.fileExists(atPath: other.path))
    }

    func testDownloadUsesTheTasksDestination() throws {
        let manager = try httpbinManager()
        let destination = temporaryFileURL("task-level")
        let asked = Locked<[Int]>([])
        let probe = makeProbe()
        let task = manager.downloadTask(with: URLRequest(url: URL(string: "bytes/4096", relativeTo: manager.baseURL)!), progress: nil,
                                        destination: { _, response in
                                            asked.append((response as? HTTPURLResponse)?.statusCode ?? 0)
                                            return destination
                                        }, completionHandler: probe.download)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.fileURL, destination)
        XCTAssertEqual(asked.value, [200], "the destination block gets the response")
        XCTAssertEqual((try? Data(contentsOf: destination))?.count, 4096)
    }

    // MARK: Requests that cannot be built

    func testASerializationErrorGivesANilTaskAndFailureWithANilTask() throws {
        let manager = try httpbinManager()
        manager.requestSerializer.setQueryStringSerializationWith { _, _ in
            throw NSError(domain: "Custom", code: -1, userInfo: [NSLocalizedDescriptionKey: "Custom Error"])
        }
        let call = verbCall()
        let task = manager.get("test", parameters: ["key": "value"], success: call.success, failure: call.failure)
        XCTAssertNil(task)
        let outcome = finish(call, timeout: 10)
        XCTAssertEqual(outcome.failures, 1)
        XCTAssertEqual(outcome.successes, 0)
        XCTAssertNil(outcome.task)
        XCTAssertEqual(outcome.error?.domain, "Custom")
        XCTAssertEqual(outcome.error?.code, -1)
        XCTAssertTrue(outcome.onMainThread, "completionQueue nil: the main queue")
        XCTAssertTrue(manager.tasks.isEmpty)
    }

    func testASerializationErrorReachesFailureOnTheCompletionQueue() throws {
        let manager = try httpbinManager()
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "session-tests.verb-completion")
        queue.setSpecific(key: key, value: 1)
        manager.completionQueue = queue
        manager.requestSerializer.setQueryStringSerializationWith { _, _ in throw NSError(domain: "Custom", code: -2) }
        let onQueue = Locked(false)
        let done = expectation(description: "failure")
        let task = manager.post("post", parameters: ["key": "value"], progress: nil, success: { _, _ in
            XCTFail("no success")
        }, failure: { task, _ in
            XCTAssertNil(task)
            onQueue.value = DispatchQueue.getSpecific(key: key) == 1
            done.fulfill()
        })
        XCTAssertNil(task)
        wait(for: [done], timeout: 10)
        XCTAssertTrue(onQueue.value)
    }

    func testAURLStringThatDoesNotResolveGivesBadURL() {
        let manager = makeHTTPManager(baseURL: nil)
        let call = verbCall()
        let task = manager.get("http://[bad", parameters: nil, success: call.success, failure: call.failure)
        XCTAssertNil(task)
        let outcome = finish(call, timeout: 10)
        XCTAssertNil(outcome.task)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadURL)
        XCTAssertEqual(outcome.failures, 1)
    }

    // MARK: Coding, copying, instances

    func testSupportsSecureCodingAndRoundTrips() throws {
        XCTAssertTrue(HTTPSessionManager.supportsSecureCoding)
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 42
        configuration.httpAdditionalHeaders = ["X-Archived": "yes"]
        let manager = makeHTTPManager(baseURL: URL(string: "http://example.test/api"), configuration: configuration)
        manager.requestSerializer = JSONRequestSerializer()
        manager.responseSerializer = HTTPResponseSerializer()
        let policy = SecurityPolicy(pinningMode: .none)
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = false
        manager.securityPolicy = policy

        let archive = try NSKeyedArchiver.archivedData(withRootObject: manager, requiringSecureCoding: true)
        XCTAssertFalse(archive.isEmpty)
        let restored = track(try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPSessionManager.self, from: archive)))
        XCTAssertEqual(restored.baseURL?.absoluteString, "http://example.test/api/")
        XCTAssertNotNil(restored.session)
        XCTAssertNotNil(restored.session.configuration)
        XCTAssertTrue(restored.requestSerializer is JSONRequestSerializer)
        XCTAssertFalse(restored.responseSerializer is JSONResponseSerializer, "the archived serializer, not the default")
        XCTAssertTrue(restored.securityPolicy.allowInvalidCertificates)
        XCTAssertFalse(restored.securityPolicy.validatesDomainName)
        XCTAssertEqual(restored.session.configuration.timeoutIntervalForRequest, 42)
        XCTAssertEqual(restored.session.configuration.httpAdditionalHeaders?["X-Archived"] as? String, "yes")
        XCTAssertFalse(restored.session === manager.session)
    }

    func testCopyIsANewManagerWithTheSameSettings() throws {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 42
        let manager = makeHTTPManager(baseURL: URL(string: "http://example.test/api/"), configuration: configuration)
        manager.requestSerializer = JSONRequestSerializer()
        manager.responseSerializer = HTTPResponseSerializer()
        let copy = track(try XCTUnwrap(manager.copy() as? HTTPSessionManager))
        XCTAssertFalse(copy === manager)
        XCTAssertEqual(copy.baseURL, manager.baseURL)
        XCTAssertFalse(copy.session === manager.session, "a copy has its own session")
        XCTAssertEqual(copy.session.configuration.timeoutIntervalForRequest, 42)
        XCTAssertTrue(copy.requestSerializer is JSONRequestSerializer)
        XCTAssertFalse(copy.requestSerializer === manager.requestSerializer, "serializers are copied")
        XCTAssertFalse(copy.responseSerializer is JSONResponseSerializer)
        XCTAssertFalse(copy.securityPolicy === manager.securityPolicy)
    }

    func testEveryInitMakesANewManager() {
        let first = track(HTTPSessionManager())
        let second = track(HTTPSessionManager())
        XCTAssertFalse(first === second)
        XCTAssertFalse(first.session === second.session)
        XCTAssertNil(first.baseURL)
        XCTAssertTrue(type(of: first.requestSerializer) == HTTPRequestSerializer.self)
        XCTAssertTrue(first.responseSerializer is JSONResponseSerializer)
        let fromConfiguration = track(HTTPSessionManager(sessionConfiguration: .default))
        XCTAssertNil(fromConfiguration.baseURL)
        let fromURL = track(HTTPSessionManager(baseURL: URL(string: "http://example.test")))
        XCTAssertEqual(fromURL.baseURL?.absoluteString, "http://example.test")
    }

    // MARK: Progress (3.x)

    func testDownloadProgressIsReportedForGET() throws {
        let manager = try httpbinManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let fractions = Locked<[Double]>([])
        let call = verbCall()
        manager.get("bytes/102400", parameters: nil, progress: { progress in fractions.append(progress.fractionCompleted) },
                    success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1)
        XCTAssertTrue(spin(until: { fractions.value.last == 1.0 }))
        drain(manager.operationQueue)
        XCTAssertEqual(fractions.value.filter { $0 == 1.0 }.count, 1)
    }

    func testUploadProgressIsReportedForPOST() throws {
        let manager = try httpbinManager()
        var payload = ""
        while payload.utf8.count < 20000 { payload += "AFNetworking" }
        let fractions = Locked<[Double]>([])
        let call = verbCall()
        manager.post("post", parameters: payload, progress: { progress in fractions.append(progress.fractionCompleted) },
                     success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertTrue(spin(until: { fractions.value.last == 1.0 }))
        drain(manager.operationQueue)
        XCTAssertEqual(fractions.value.filter { $0 == 1.0 }.count, 1)
    }

    func testUploadProgressIsReportedForAStreamingMultipartPOST() throws {
        let manager = try httpbinManager()
        let payload = Data(String(repeating: "AFNetworking", count: 2000).utf8)
        let fractions = Locked<[Double]>([])
        let call = verbCall()
        let task = manager.post("post", parameters: nil, constructingBodyWith: { form in
            form.appendPart(withFileData: payload, name: "AFNetworking", fileName: "AFNetworking", mimeType: "text/html")
        }, progress: { progress in fractions.append(progress.fractionCompleted) }, success: call.success, failure: call.failure)
        XCTAssertNotNil(task)
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertTrue(spin(until: { fractions.value.last == 1.0 }))
        drain(manager.operationQueue)
        XCTAssertEqual(fractions.value.filter { $0 == 1.0 }.count, 1)
        XCTAssertEqual((json(outcome.object)?["files"] as? [String: String])?["AFNetworking"]?.utf8.count, payload.count)
    }

    // MARK: Status codes

    func testSuccessFor200WithAnEmptyBody() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        manager.get("status/200", parameters: nil, success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertEqual(outcome.failures, 0)
    }

    func testFailureFor404() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.get("status/404", parameters: nil, success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(outcome.failures, 1)
        XCTAssertEqual(outcome.error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual(outcome.stateInBlock, .completed)
        XCTAssertTrue(outcome.task === task, "failure gets the task the verb returned")
        XCTAssertTrue(outcome.onMainThread)
    }

    func testSuccessWithANilObjectFor204() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        manager.get("status/204", parameters: nil, success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertNil(outcome.object)
    }

    // MARK: Verbs

    func testGET() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.get("get", parameters: ["key": "value"], success: call.success, failure: call.failure)
        XCTAssertNotNil(task)
        XCTAssertNotEqual(task?.state, .suspended, "the verb resumes the task")
        XCTAssertEqual(task?.originalRequest?.httpMethod, "GET")
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1)
        XCTAssertEqual(args(outcome.object)?["key"], "value")
        XCTAssertTrue(outcome.task === task, "success gets the task the verb returned")
        XCTAssertEqual(outcome.stateInBlock, .completed)
        XCTAssertTrue(outcome.onMainThread)
        let dataTask: URLSessionTask? = task
        XCTAssertFalse(dataTask is URLSessionUploadTask, "GET makes a data task")
    }

    func testGETWithProgressBlockForm() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.get("get", parameters: ["key": "value"], progress: nil, success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(args(outcome.object)?["key"], "value")
        XCTAssertTrue(outcome.task === task)
    }

    func testHEAD() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.head("get", parameters: nil, success: call.headSuccess, failure: call.failure)
        XCTAssertEqual(task?.originalRequest?.httpMethod, "HEAD")
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertNotNil(outcome.task)
        XCTAssertTrue(outcome.task === task)
    }

    func testPOST() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.post("post", parameters: ["key": "value"], success: call.success, failure: call.failure)
        XCTAssertEqual(task?.originalRequest?.httpMethod, "POST")
        let outcome = finish(call)
        XCTAssertEqual(form(outcome.object)?["key"], "value")
        let dataTask: URLSessionTask? = task
        XCTAssertFalse(dataTask is URLSessionUploadTask, "a plain POST makes a data task")
    }

    func testPOSTWithProgressBlockForm() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        manager.post("post", parameters: ["key": "value"], progress: nil, success: call.success, failure: call.failure)
        XCTAssertEqual(form(finish(call).object)?["key"], "value")
    }

    func testPUT() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.put("put", parameters: ["key": "value"], success: call.success, failure: call.failure)
        XCTAssertEqual(task?.originalRequest?.httpMethod, "PUT")
        XCTAssertEqual(form(finish(call).object)?["key"], "value")
    }

    func testPATCH() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.patch("patch", parameters: ["key": "value"], success: call.success, failure: call.failure)
        XCTAssertEqual(task?.originalRequest?.httpMethod, "PATCH")
        XCTAssertEqual(form(finish(call).object)?["key"], "value")
    }

    func testDELETE() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.delete("delete", parameters: ["key": "value"], success: call.success, failure: call.failure)
        XCTAssertEqual(task?.originalRequest?.httpMethod, "DELETE")
        XCTAssertEqual(args(finish(call).object)?["key"], "value", "DELETE puts the parameters in the query")
    }

    func testMultipartPOSTWithAFilePart() throws {
        let manager = try httpbinManager()
        let call = verbCall()
        let task = manager.post("post", parameters: ["key": "value"], constructingBodyWith: { form in
            form.appendPart(withFileData: Data("Data".utf8), name: "DataName", fileName: "DataFileName", mimeType: "data")
        }, success: call.success, failure: call.failure)
        let uploadTask: URLSessionTask? = task
        XCTAssertTrue(uploadTask is URLSessionUploadTask, "multipart POST returns an upload task")
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertEqual((json(outcome.object)?["files"] as? [String: String])?["DataName"], "Data")
        XCTAssertEqual(form(outcome.object)?["key"], "value")
        XCTAssertTrue(outcome.task === task)
    }

    func testHiddenBasicAuthentication() throws {
        let manager = try httpbinManager()
        manager.requestSerializer.setAuthorizationHeaderFieldWithUsername("user", password: "password")
        let call = verbCall()
        manager.get("hidden-basic-auth/user/password", parameters: nil, success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertEqual(json(outcome.object)?["authenticated"] as? Bool, true)
    }

    // MARK: Base URL

    func testBaseURLGetsATrailingSlashWhenItHasAPath() {
        XCTAssertEqual(makeHTTPManager(baseURL: URL(string: "http://h/api")).baseURL?.absoluteString, "http://h/api/")
        XCTAssertEqual(makeHTTPManager(baseURL: URL(string: "http://h/api/")).baseURL?.absoluteString, "http://h/api/")
        XCTAssertEqual(makeHTTPManager(baseURL: URL(string: "http://h")).baseURL?.absoluteString, "http://h")
        XCTAssertNil(makeHTTPManager(baseURL: nil).baseURL)
    }

    func testRelativeURLStringsResolveAgainstTheBaseURL() {
        let base = server.baseURL.appendingPathComponent("v1")
        let manager = makeHTTPManager(baseURL: base)
        manager.responseSerializer = HTTPResponseSerializer()
        let port = server.port
        let cases = [("x", "http://127.0.0.1:\(port)/v1/x"),
                     ("x?y=z", "http://127.0.0.1:\(port)/v1/x?y=z"),
                     ("/x", "http://127.0.0.1:\(port)/x"),
                     ("http://127.0.0.1:\(port)/absolute", "http://127.0.0.1:\(port)/absolute")]
        for (string, expected) in cases {
            let task = manager.get(string, parameters: nil, success: nil, failure: nil)
            XCTAssertEqual(task?.originalRequest?.url?.absoluteString, expected, string)
        }
        XCTAssertTrue(spin(until: { self.server.requests.count == cases.count }, timeout: 10))
        XCTAssertEqual(Set(server.requests.map(\.uri)), ["/v1/x", "/v1/x?y=z", "/x", "/absolute"])
    }

    // MARK: Security policy

    func testAPinningPolicyIsAcceptedWithAnHTTPOrNilBaseURL() {
        for mode in [SSLPinningMode.certificate, .publicKey] {
            let policy = SecurityPolicy(pinningMode: mode, withPinnedCertificates: [TestPKI.leaf])
            let plain = makeHTTPManager(baseURL: URL(string: "http://example.test/"))
            plain.securityPolicy = policy
            XCTAssertTrue(plain.securityPolicy === policy)
            let none = makeHTTPManager(baseURL: nil)
            none.securityPolicy = policy
            XCTAssertTrue(none.securityPolicy === policy)
            let secure = makeHTTPManager(baseURL: URL(string: "https://example.test/"))
            secure.securityPolicy = policy
            XCTAssertTrue(secure.securityPolicy === policy)
        }
    }

    private func pinningManager(_ mode: SSLPinningMode, pinning certificate: Data) throws -> (HTTPSessionManager, NginxFixture) {
        let nginx = try SharedServers.pkiNginx()
        let manager = makeHTTPManager(baseURL: nginx.httpsURL)
        manager.responseSerializer = HTTPResponseSerializer()
        let policy = SecurityPolicy(pinningMode: mode, withPinnedCertificates: [certificate])
        // Only the pins decide: the chain's private root alone would not be the reason.
        policy.allowInvalidCertificates = true
        manager.securityPolicy = policy
        return (manager, nginx)
    }

    private func assertRejectedWithoutARequest(_ mode: SSLPinningMode, pinning certificate: Data,
                                               file: StaticString = #filePath, line: UInt = #line) throws {
        let (manager, nginx) = try pinningManager(mode, pinning: certificate)
        let marker = "pinning-\(UUID().uuidString)"
        let call = verbCall()
        let task = manager.get(marker, parameters: nil, success: call.success, failure: call.failure)
        XCTAssertNotNil(task, file: file, line: line)
        let outcome = finish(call)
        XCTAssertEqual(outcome.failures, 1, file: file, line: line)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain, file: file, line: line)
        XCTAssertEqual(outcome.error?.code, NSURLErrorServerCertificateUntrusted, "not 3.x's NSURLErrorCancelled", file: file, line: line)
        XCTAssertTrue(outcome.task === task, file: file, line: line)
        XCTAssertFalse(nginx.logShows(marker, timeout: 0.5), "a rejected server receives no request", file: file, line: line)
    }

    func testInvalidServerTrustFailsCertificatePinningWithUntrusted() throws {
        try assertRejectedWithoutARequest(.certificate, pinning: TestPKI.unrelatedRoot)
    }

    func testInvalidServerTrustFailsPublicKeyPinningWithUntrusted() throws {
        try assertRejectedWithoutARequest(.publicKey, pinning: TestPKI.unrelatedLeaf)
    }

    func testValidPinningSucceeds() throws {
        let (manager, nginx) = try pinningManager(.certificate, pinning: TestPKI.root)
        let call = verbCall()
        let marker = "pinned-\(UUID().uuidString)"
        manager.get("1k.bin", parameters: ["marker": marker], success: call.success, failure: call.failure)
        let outcome = finish(call)
        XCTAssertEqual(outcome.successes, 1, "\(String(describing: outcome.error))")
        XCTAssertEqual((outcome.object as? Data)?.count, 1024)
        XCTAssertTrue(nginx.logShows("/1k.bin?marker=\(marker) HTTP/"), "this request's own log line")
    }

    /// A session manager's subclass policy judges its tasks' connections too.
    func testASubclassPolicysOverrideJudgesTheManagersTasks() throws {
        let nginx = try SharedServers.pkiNginx()
        for accept in [true, false] {
            let manager = makeHTTPManager(baseURL: nginx.httpsURL)
            manager.responseSerializer = HTTPResponseSerializer()
            let policy = DecidingSecurityPolicy(accept: accept)
            manager.securityPolicy = policy
            let call = verbCall()
            manager.get("1k.bin", parameters: ["marker": "subclass-\(accept)-\(UUID().uuidString)"], success: call.success, failure: call.failure)
            let outcome = finish(call)
            XCTAssertGreaterThan(policy.asked.value, 0, "the override was asked")
            if accept {
                XCTAssertEqual(outcome.successes, 1, "a private root the override accepts: \(String(describing: outcome.error))")
            } else {
                XCTAssertEqual(outcome.error?.code, NSURLErrorServerCertificateUntrusted)
            }
        }
    }

    func testInvalidServerTrustFailsADownloadTaskToo() throws {
        let (manager, nginx) = try pinningManager(.certificate, pinning: TestPKI.unrelatedRoot)
        let marker = "pinning-download-\(UUID().uuidString)"
        let destinationAsked = Locked(false)
        let probe = makeProbe()
        let task = manager.downloadTask(with: URLRequest(url: nginx.httpsURL.appendingPathComponent(marker)), progress: nil,
                                        destination: { _, _ in destinationAsked.value = true; return URL(fileURLWithPath: "/nonexistent/x") },
                                        completionHandler: probe.download)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.error?.code, NSURLErrorServerCertificateUntrusted)
        XCTAssertNil(outcome.fileURL)
        XCTAssertFalse(destinationAsked.value)
        XCTAssertFalse(nginx.logShows(marker, timeout: 0.5))
    }
}
