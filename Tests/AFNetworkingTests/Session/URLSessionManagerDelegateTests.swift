@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// URLSessionManager's delegate blocks (redirects, response dispositions,
/// body chunks, caching, upload progress, completion, HTTP authentication)
/// and subclass overrides of the delegate methods.
final class URLSessionManagerDelegateTests: SessionTasksTestCase {

    // MARK: Redirects

    func testRedirectBlockSeesEveryHop() throws {
        let url = try httpbinURL("redirect/3")
        let manager = makeManager()
        let queue = manager.operationQueue
        let hops = Locked<[String]>([])
        let offQueue = Locked(0)
        manager.setTaskWillPerformHTTPRedirectionBlock { _, _, response, request in
            if OperationQueue.current !== queue { offQueue.increment() }
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            hops.append("\(status) \(response.url?.path ?? "?") -> \(request.url?.path ?? "?")")
            return request
        }
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: url), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(hops.value, ["302 /redirect/3 -> /relative-redirect/2",
                                    "302 /relative-redirect/2 -> /relative-redirect/1",
                                    "302 /relative-redirect/1 -> /get"])
        XCTAssertEqual(offQueue.value, 0, "the block runs on operationQueue")
        XCTAssertEqual(outcome.response?.url?.path, "/get")
        XCTAssertEqual(task.originalRequest?.url?.path, "/redirect/3")
        XCTAssertEqual(task.currentRequest?.url?.path, "/get")
    }

    func testRedirectBlockSetAfterTaskCreationApplies() throws {
        let url = try httpbinURL("redirect/1")
        let manager = makeManager()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: url), completionHandler: probe.data)
        let sawResponse = Locked(0)
        manager.setTaskWillPerformHTTPRedirectionBlock { _, redirected, response, request in
            if (response as? HTTPURLResponse)?.statusCode == 302 && redirected === task { sawResponse.increment() }
            return request
        }
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertNotNil(outcome.object)
        XCTAssertEqual(sawResponse.value, 1)
        XCTAssertEqual(outcome.stateInHandler, .completed)
    }

    func testRedirectBlockReturningNilStopsAtTheRedirect() {
        let port = server.port
        server.route("/hop") { _ in
            [.head(status: 302, headers: [("Location", "http://127.0.0.1:\(port)/target"), ("Content-Length", "0")]), .end]
        }
        server.respond("/target", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let manager = makeManager()
        let calls = Locked(0)
        manager.setTaskWillPerformHTTPRedirectionBlock { _, _, _, _ in
            calls.increment()
            return nil
        }
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/hop"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(calls.value, 1)
        let response = outcome.response as? HTTPURLResponse
        XCTAssertEqual(response?.statusCode, 302, "the redirect is the response")
        XCTAssertEqual(response?.allHeaderFields["Location"] as? String, "http://127.0.0.1:\(port)/target")
        XCTAssertEqual(outcome.error?.domain, AFURLResponseSerializationErrorDomain, "302 is not an acceptable status")
        XCTAssertFalse(server.requests.contains { $0.uri == "/target" }, "the redirect is not followed")
    }

    func testRedirectBlockCanRewriteTheNextHop() {
        let port = server.port
        server.route("/hop") { _ in
            [.head(status: 302, headers: [("Location", "http://127.0.0.1:\(port)/target"), ("Content-Length", "0")]), .end]
        }
        server.respond("/elsewhere", headers: [("Content-Type", "application/json")], body: Data("{\"where\":\"elsewhere\"}".utf8))
        let manager = makeManager()
        manager.setTaskWillPerformHTTPRedirectionBlock { _, _, _, proposed in
            var rewritten = proposed
            rewritten.url = URL(string: "http://127.0.0.1:\(port)/elsewhere")
            return rewritten
        }
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/hop"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(json(outcome.object)?["where"] as? String, "elsewhere")
        XCTAssertEqual(server.requests.map(\.uri), ["/hop", "/elsewhere"])
    }

    // MARK: Response disposition

    /// The status of every response the did-receive-response block is asked
    /// about, which it allows.
    private func recordResponseStatuses(of manager: URLSessionManager) -> Locked<[Int]> {
        let statuses = Locked<[Int]>([])
        manager.setDataTaskDidReceiveResponseBlock { _, _, response in
            statuses.append((response as? HTTPURLResponse)?.statusCode ?? 0)
            return .allow
        }
        return statuses
    }

    func testDidReceiveResponseAllow() {
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":true}".utf8))
        let manager = makeManager()
        let statuses = recordResponseStatuses(of: manager)
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/ok"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(json(outcome.object)?["ok"] as? Bool, true)
        XCTAssertEqual(statuses.value, [200])
    }

    func testDidReceiveResponseCancelCompletesWithCancelled() {
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":true}".utf8))
        let manager = makeManager()
        let chunks = Locked(0)
        manager.setDataTaskDidReceiveResponseBlock { _, _, _ in .cancel }
        manager.setDataTaskDidReceiveDataBlock { _, _, _ in chunks.increment() }
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/ok"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertNil(outcome.object)
        XCTAssertEqual(chunks.value, 0, "no body is delivered after .cancel")
        drainMainQueue()
        XCTAssertEqual(probe.outcome.value.calls, 1)
    }

    /// `URLSession` asks about a cached answer too; so does this package (the
    /// head never went through the transfer as it arrived).
    func testDidReceiveResponseIsAskedAboutAnAnswerFromTheCache() {
        server.respond("/fresh", headers: [("Cache-Control", "max-age=600"), ("Content-Type", "application/json")],
                       body: Data(#"{"ok":true}"#.utf8))
        let manager = makeManager(configuration: privateCacheConfiguration())
        let statuses = recordResponseStatuses(of: manager)
        for _ in 0..<2 {
            let probe = makeProbe()
            let outcome = run(manager.dataTask(with: request("/fresh"), completionHandler: probe.data), probe)
            XCTAssertNil(outcome.error)
            XCTAssertEqual(json(outcome.object)?["ok"] as? Bool, true)
        }
        XCTAssertEqual(server.requests.count, 1, "the second answer came from the cache")
        XCTAssertEqual(statuses.value, [200, 200], "asked once per task, also for the cached answer")
    }

    func testDidReceiveResponseCancelRefusesAnAnswerFromTheCache() {
        server.respond("/fresh", headers: [("Cache-Control", "max-age=600"), ("Content-Type", "application/json")],
                       body: Data(#"{"ok":true}"#.utf8))
        let manager = makeManager(configuration: privateCacheConfiguration())
        let first = makeProbe()
        XCTAssertNil(run(manager.dataTask(with: request("/fresh"), completionHandler: first.data), first).error)
        manager.setDataTaskDidReceiveResponseBlock { _, _, _ in .cancel }
        let chunks = Locked(0)
        manager.setDataTaskDidReceiveDataBlock { _, _, _ in chunks.increment() }
        let probe = makeProbe()
        let outcome = run(manager.dataTask(with: request("/fresh"), completionHandler: probe.data), probe)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertNil(outcome.object)
        XCTAssertEqual(chunks.value, 0, "a refused answer's body is not delivered")
        XCTAssertEqual(server.requests.count, 1)
    }

    /// An error answer held back for a retry and then kept (the policy gave
    /// up) is the task's response: its delegate is asked about it.
    func testDidReceiveResponseIsAskedAboutAnErrorAnswerARetryPolicyKept() {
        server.respond("/busy", status: 503, headers: [("Content-Type", "text/plain")], body: Data("busy".utf8))
        let manager = makeManager()
        var policy = RetryPolicy()
        policy.maximumAttempts = 2
        policy.baseDelay = 0.01
        policy.maximumDelay = 0.05
        policy.jitter = 0
        manager.retryPolicy = policy
        let statuses = recordResponseStatuses(of: manager)
        let probe = makeProbe()
        let outcome = run(manager.dataTask(with: request("/busy"), completionHandler: probe.data), probe)
        XCTAssertEqual(server.requests.count, 2, "sent twice")
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 503)
        XCTAssertEqual(statuses.value, [503], "asked once, about the answer the task ends with")
    }

    /// An error answer the interceptor's retrier decided to keep is held
    /// back while the retrier decides; it is asked about once it is the answer.
    func testDidReceiveResponseIsAskedAboutAnErrorAnswerTheRetrierKept() {
        server.respond("/denied", status: 401, headers: [("Content-Type", "text/plain")], body: Data("no".utf8))
        struct KeepEverything: RequestInterceptor {
            func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
                       completion: @escaping @Sendable (RetryResult) -> Void) {
                completion(.doNotRetry)
            }
        }
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        manager.requestInterceptor = KeepEverything()
        let statuses = recordResponseStatuses(of: manager)
        let probe = makeProbe()
        let outcome = run(manager.dataTask(with: request("/denied"), completionHandler: probe.data), probe)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 401)
        XCTAssertEqual(statuses.value, [401], "asked about the answer the task ends with")
    }

    private func privateCacheConfiguration() -> URLSessionConfiguration {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-delegate-cache-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 1 << 20, diskCapacity: 8 << 20, diskPath: directory.path)
        return configuration
    }

    func testDidReceiveResponseBecomeDownload() throws {
        let nginx = try SharedServers.nginx()
        let body = try Data(contentsOf: nginx.directory.appendingPathComponent("www/4m.bin"))
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let destination = temporaryFileURL("became-download")
        let becomeDownload = SessionLegacyNames.current.becomeDownload
        manager.setDataTaskDidReceiveResponseBlock { _, _, _ in becomeDownload }

        struct Became {
            var calls = 0
            var dataTask: URLSessionDataTask?
            var downloadTask: URLSessionDownloadTask?
            var downloadListed = false
            var dataListed = true
        }
        let became = Locked(Became())
        manager.setDataTaskDidBecomeDownloadTaskBlock { [weak manager] _, dataTask, downloadTask in
            let listed = manager?.tasks ?? []
            became.withLock {
                $0.calls += 1
                $0.dataTask = dataTask
                $0.downloadTask = downloadTask
                $0.downloadListed = listed.contains { $0 === downloadTask }
                $0.dataListed = listed.contains { $0 === dataTask }
            }
        }
        let finished = Locked<[URL]>([])
        manager.setDownloadTaskDidFinishDownloadingBlock { _, _, location in
            finished.append(location)
            return destination
        }

        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: nginx.httpURL.appendingPathComponent("4m.bin")), completionHandler: probe.data)
        let outcome = run(task, probe, timeout: 30)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.object as? URL, destination, "responseObject is the finish block's URL")
        XCTAssertEqual(try? Data(contentsOf: destination), body, "the file holds the whole body")

        let seen = became.value
        XCTAssertEqual(seen.calls, 1)
        XCTAssertTrue(seen.dataTask === task)
        XCTAssertNotNil(seen.downloadTask)
        XCTAssertTrue(seen.downloadListed, "the download task replaces the data task in tasks")
        XCTAssertFalse(seen.dataListed)
        XCTAssertEqual(finished.value.count, 1)
        drainMainQueue()
        XCTAssertEqual(probe.outcome.value.calls, 1, "the data task's handler is called once")
    }

    // MARK: Body chunks

    func testDataDidReceiveBlockGetsEveryChunkInOrder() throws {
        let nginx = try SharedServers.nginx()
        let body = try Data(contentsOf: nginx.directory.appendingPathComponent("www/4m.bin"))
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let queue = manager.operationQueue
        let received = Locked(Data())
        let chunks = Locked(0)
        let offQueue = Locked(0)
        manager.setDataTaskDidReceiveDataBlock { _, _, data in
            if OperationQueue.current !== queue { offQueue.increment() }
            chunks.increment()
            received.withLock { $0.append(data) }
        }
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: nginx.httpURL.appendingPathComponent("4m.bin")), completionHandler: probe.data)
        let outcome = run(task, probe, timeout: 30)
        XCTAssertNil(outcome.error)
        // However the queue keeps up, a call gets at most the pending bound
        // plus one piece: a 4 MiB body takes several calls.
        XCTAssertGreaterThanOrEqual(chunks.value, body.count / Self.chunkBound)
        XCTAssertEqual(received.value.count, body.count)
        XCTAssertTrue(received.value == body, "the chunks, concatenated in order, are the body")
        XCTAssertTrue((outcome.object as? Data) == body, "the serializer still gets the whole body")
        XCTAssertEqual(offQueue.value, 0)
    }

    /// The most one did-receive-data call may get: the bound on what waits
    /// for the operation queue, plus one piece (comfortably above curl's buffer).
    private static let chunkBound = SessionTaskFrontend.PendingReports.dataHighWater + 256 * 1024

    func testASlowDataBlockPausesTheTransferInsteadOfCollectingTheBody() throws {
        let nginx = try SharedServers.nginx()
        let body = try Data(contentsOf: nginx.directory.appendingPathComponent("www/4m.bin"))
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let received = Locked(Data())
        let sizes = Locked([Int]())
        manager.setDataTaskDidReceiveDataBlock { _, _, data in
            // The first call is slow (a consumer writing somewhere): on
            // loopback the rest of the body arrives meanwhile.
            if sizes.withLock({ $0.isEmpty }) { Thread.sleep(forTimeInterval: 0.3) }
            sizes.withLock { $0.append(data.count) }
            received.withLock { $0.append(data) }
        }
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: nginx.httpURL.appendingPathComponent("4m.bin")), completionHandler: probe.data)
        let outcome = run(task, probe, timeout: 30)
        XCTAssertNil(outcome.error)
        XCTAssertTrue(received.value == body, "every byte arrives, in order, after the pause")
        XCTAssertLessThanOrEqual(sizes.value.max() ?? 0, Self.chunkBound, "the body waited in the connection, not in memory: \(sizes.value)")
        XCTAssertTrue((outcome.object as? Data) == body, "the serializer still gets the whole body")
    }

    // MARK: Caching

    private func cachingManager() -> (URLSessionManager, URLCache) {
        let directory = temporaryFileURL("cache")
        let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 16 << 20, diskPath: directory.path)
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = cache
        configuration.requestCachePolicy = .useProtocolCachePolicy
        let manager = makeManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        return (manager, cache)
    }

    private func fetch(_ manager: URLSessionManager, _ path: String,
                       policy: URLRequest.CachePolicy = .useProtocolCachePolicy) -> TaskCompletionProbe.Outcome {
        var request = self.request(path)
        request.cachePolicy = policy
        let probe = makeProbe(path)
        return run(manager.dataTask(with: request, completionHandler: probe.data), probe)
    }

    func testWillCacheBlockReturningNilStoresNothing() {
        server.respond("/cacheable", headers: [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain")],
                       body: Data("cache me".utf8))
        let (manager, _) = cachingManager()
        let queue = manager.operationQueue
        let proposals = Locked<[Data]>([])
        let offQueue = Locked(0)
        manager.setDataTaskWillCacheResponseBlock { _, _, proposed in
            if OperationQueue.current !== queue { offQueue.increment() }
            proposals.append(proposed.data)
            return nil
        }
        XCTAssertNil(fetch(manager, "/cacheable").error)
        XCTAssertEqual(proposals.value, [Data("cache me".utf8)], "the block runs for a storable response")
        XCTAssertEqual(offQueue.value, 0)

        let offline = fetch(manager, "/cacheable", policy: .returnCacheDataDontLoad)
        XCTAssertEqual(offline.error?.code, NSURLErrorResourceUnavailable, "nothing was stored")
        XCTAssertEqual(server.requests.filter { $0.uri == "/cacheable" }.count, 1)
    }

    func testWillCacheBlockReturningTheProposalStoresIt() {
        server.respond("/cacheable", headers: [("Cache-Control", "max-age=600"), ("Content-Type", "text/plain")],
                       body: Data("cache me".utf8))
        let (manager, _) = cachingManager()
        let calls = Locked(0)
        manager.setDataTaskWillCacheResponseBlock { _, _, proposed in
            calls.increment()
            return proposed
        }
        XCTAssertNil(fetch(manager, "/cacheable").error)
        let offline = fetch(manager, "/cacheable", policy: .returnCacheDataDontLoad)
        XCTAssertNil(offline.error)
        XCTAssertEqual(offline.object as? Data, Data("cache me".utf8))
        XCTAssertEqual(server.requests.filter { $0.uri == "/cacheable" }.count, 1)
        XCTAssertEqual(calls.value, 1, "a response served from the cache is not proposed again")
    }

    func testWillCacheBlockIsNotAskedForAnUnstorableResponse() {
        server.respond("/secret", headers: [("Cache-Control", "no-store"), ("Content-Type", "text/plain")], body: Data("x".utf8))
        let (manager, _) = cachingManager()
        let calls = Locked(0)
        manager.setDataTaskWillCacheResponseBlock { _, _, proposed in
            calls.increment()
            return proposed
        }
        XCTAssertNil(fetch(manager, "/secret").error)
        XCTAssertEqual(calls.value, 0)
    }

    // MARK: Upload body

    func testTaskDidSendBodyBlockReportsTheWholeBody() {
        server.respond("/sink", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let body = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let manager = makeManager()
        let queue = manager.operationQueue
        struct Sent { var bytes: Int64; var total: Int64; var expected: Int64; var onQueue: Bool; var sameTask: Bool }
        let sent = Locked<[Sent]>([])
        let probe = makeProbe()
        let task = manager.uploadTask(with: request("/sink", method: "POST"), from: body, progress: nil, completionHandler: probe.data)
        manager.setTaskDidSendBodyDataBlock { _, sending, bytes, total, expected in
            sent.append(Sent(bytes: bytes, total: total, expected: expected, onQueue: OperationQueue.current === queue,
                             sameTask: sending === task))
        }
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        let calls = sent.value
        XCTAssertFalse(calls.isEmpty)
        XCTAssertEqual(calls.last?.total, Int64(body.count), "the total reaches the body size")
        XCTAssertEqual(calls.map(\.bytes).reduce(0, +), Int64(body.count), "the increments add up")
        XCTAssertTrue(calls.allSatisfy { $0.expected == Int64(body.count) })
        XCTAssertEqual(calls.map(\.total), calls.map(\.total).sorted())
        XCTAssertTrue(calls.allSatisfy { $0.onQueue && $0.sameTask })
        XCTAssertEqual(server.requests.last?.body, body)
    }

    // MARK: Task completion block

    func testTaskDidCompleteBlockGetsOnlyTransportErrors() {
        server.respond("/missing", status: 404, headers: [("Content-Type", "text/plain")], body: Data("nope".utf8))
        let manager = makeManager()
        let queue = manager.operationQueue
        let completed = Locked<[Int: [NSError?]]>([:])
        let offQueue = Locked(0)
        manager.setTaskDidCompleteBlock { _, task, error in
            if OperationQueue.current !== queue { offQueue.increment() }
            completed.withLock { $0[task.taskIdentifier, default: []].append(error.map { $0 as NSError }) }
        }

        let missingProbe = makeProbe("404")
        let missing = manager.dataTask(with: request("/missing"), completionHandler: missingProbe.data)
        let missingOutcome = run(missing, missingProbe)
        XCTAssertEqual(missingOutcome.error?.code, NSURLErrorBadServerResponse, "the serializer's error reaches the handler")

        let refusedProbe = makeProbe("refused")
        let refused = manager.dataTask(with: URLRequest(url: refusedURL()), completionHandler: refusedProbe.data)
        let refusedOutcome = run(refused, refusedProbe)
        XCTAssertEqual(refusedOutcome.error?.code, NSURLErrorCannotConnectToHost)

        drain(queue)
        let seen = completed.value
        XCTAssertEqual(seen[missing.taskIdentifier]?.count, 1)
        XCTAssertNil(seen[missing.taskIdentifier]?.first ?? nil, "a 404 is no transport error (2.7)")
        XCTAssertEqual(seen[refused.taskIdentifier]?.count, 1)
        XCTAssertEqual((seen[refused.taskIdentifier]?.first ?? nil)?.code, NSURLErrorCannotConnectToHost)
        XCTAssertEqual(offQueue.value, 0)
    }

    // MARK: HTTP authentication challenges

    private struct ChallengeSeen {
        var host: String
        var port: Int
        var scheme: String?
        var realm: String?
        var method: String
        var previousFailureCount: Int
        var sameTask: Bool
        var onQueue: Bool
    }

    /// Runs `path` on httpbin with `answer` as the task challenge block's reply.
    private func authenticate(_ path: String, configuration: URLSessionConfiguration? = nil,
                              answer: @escaping @Sendable (Int) -> (URLSession.AuthChallengeDisposition, URLCredential?))
        throws -> (TaskCompletionProbe.Outcome, [ChallengeSeen]) {
        let url = try httpbinURL(path)
        let manager = makeManager(configuration: configuration)
        let queue = manager.operationQueue
        let seen = Locked<[ChallengeSeen]>([])
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: url), completionHandler: probe.data)
        manager.setTaskDidReceiveAuthenticationChallengeBlock { _, challenged, challenge, credential in
            let space = challenge.protectionSpace
            let entry = ChallengeSeen(host: space.host, port: space.port, scheme: space.protocol, realm: space.realm,
                                      method: space.authenticationMethod, previousFailureCount: challenge.previousFailureCount,
                                      sameTask: challenged === task, onQueue: OperationQueue.current === queue)
            let count = seen.withLock { $0.append(entry); return $0.count }
            let (disposition, reply) = answer(count)
            if let reply { credential?.pointee = reply }
            return disposition
        }
        let outcome = run(task, probe)
        return (outcome, seen.value)
    }

    func testBasicChallengeAnsweredWithACredential() throws {
        let port = try SharedServers.httpbin().port
        let (outcome, seen) = try authenticate("basic-auth/user/passwd") { _ in (.useCredential, goodSessionTestCredential) }
        XCTAssertNil(outcome.error)
        XCTAssertEqual(json(outcome.object)?["authenticated"] as? Bool, true)
        XCTAssertEqual(seen.count, 1)
        guard let challenge = seen.first else { return }
        XCTAssertEqual(challenge.host, "127.0.0.1")
        XCTAssertEqual(challenge.port, port)
        XCTAssertEqual(challenge.scheme, "http")
        XCTAssertEqual(challenge.realm, "Fake Realm")
        XCTAssertEqual(challenge.method, NSURLAuthenticationMethodHTTPBasic)
        XCTAssertEqual(challenge.previousFailureCount, 0)
        XCTAssertTrue(challenge.sameTask)
        XCTAssertTrue(challenge.onQueue, "the challenge block runs on operationQueue")
    }

    func testDigestChallengeAnsweredWithACredential() throws {
        let (outcome, seen) = try authenticate("digest-auth/auth/user/passwd") { _ in (.useCredential, goodSessionTestCredential) }
        XCTAssertNil(outcome.error)
        XCTAssertEqual(json(outcome.object)?["authenticated"] as? Bool, true)
        XCTAssertEqual(seen.first?.method, NSURLAuthenticationMethodHTTPDigest)
        XCTAssertEqual(seen.count, 1)
    }

    func testCancellingTheChallengeCancelsTheTask() throws {
        let (outcome, seen) = try authenticate("basic-auth/user/passwd") { _ in (.cancelAuthenticationChallenge, nil) }
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
    }

    func testRejectingTheProtectionSpaceMakesThe401TheResponse() throws {
        let (outcome, seen) = try authenticate("basic-auth/user/passwd") { _ in (.rejectProtectionSpace, nil) }
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 401)
        XCTAssertEqual(outcome.error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
    }

    func testDefaultHandlingUsesTheConfigurationsCredentialStorage() throws {
        let port = try SharedServers.httpbin().port
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(host: "127.0.0.1", port: port, protocol: "http", realm: "Fake Realm",
                                       authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        storage.setDefaultCredential(URLCredential(user: "user", password: "passwd", persistence: .forSession), for: space)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCredentialStorage = storage
        let (outcome, seen) = try authenticate("basic-auth/user/passwd", configuration: configuration) { _ in
            (.performDefaultHandling, nil)
        }
        XCTAssertNil(outcome.error)
        XCTAssertEqual(json(outcome.object)?["authenticated"] as? Bool, true)
        XCTAssertEqual(seen.count, 1)
    }

    func testDefaultHandlingWithoutAStoredCredentialMakesThe401TheResponse() throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCredentialStorage = URLCredentialStorage()
        let (outcome, seen) = try authenticate("basic-auth/user/passwd", configuration: configuration) { _ in
            (.performDefaultHandling, nil)
        }
        XCTAssertEqual(seen.count, 1)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 401)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
    }

    func testAWrongCredentialIsChallengedAgainWithAFailureCountAndTheAttemptsAreBounded() throws {
        let wrong = URLCredential(user: "user", password: "wrong", persistence: .none)
        let (outcome, seen) = try authenticate("basic-auth/user/passwd") { _ in (.useCredential, wrong) }
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 401, "after the last attempt the 401 is the response")
        XCTAssertEqual(seen.count, 8, "a rejected credential is challenged again, exactly 8 attempts per hop")
        XCTAssertEqual(seen.map(\.previousFailureCount), Array(0..<seen.count))
    }

    // MARK: Subclass overrides

    func testOverriddenDelegateMethodsAreCalledAndSuperKeepsTheManagerWorking() {
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":true}".utf8))
        let manager = track(OverridingSessionManager(sessionConfiguration: nil))
        let blockChunks = Locked(0)
        let blockCompletions = Locked(0)
        manager.setDataTaskDidReceiveDataBlock { _, _, _ in blockChunks.increment() }
        manager.setTaskDidCompleteBlock { _, _, _ in blockCompletions.increment() }
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/ok"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(json(outcome.object)?["ok"] as? Bool, true, "the completion handler still runs, with the body")
        drain(manager.operationQueue)
        XCTAssertEqual(manager.completedTasks.value, [task.taskIdentifier])
        XCTAssertEqual(manager.receivedBytes.value, Data("{\"ok\":true}".utf8).count)
        XCTAssertTrue(manager.overridesRanOnOperationQueue.value)
        XCTAssertGreaterThan(blockChunks.value, 0, "super still drives the blocks")
        XCTAssertEqual(blockCompletions.value, 1)
    }

    // MARK: Queue of every block

    func testEveryDelegateBlockRunsOnTheOperationQueueInEventOrder() {
        let port = server.port
        server.route("/hop") { _ in
            [.head(status: 302, headers: [("Location", "http://127.0.0.1:\(port)/target"), ("Content-Length", "0")]), .end]
        }
        server.respond("/target", headers: [("Content-Type", "application/json")], body: Data("{\"a\":1}".utf8))
        server.respond("/sink", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        server.respond("/file", headers: [("Content-Type", "application/octet-stream")], body: Data(repeating: 7, count: 50_000))
        server.route("/auth") { request in
            if request.headers.first(name: "authorization") != nil {
                return [.head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
                        .body(Data("{}".utf8)), .end]
            }
            return [.head(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"scripted\""), ("Content-Length", "0")]), .end]
        }

        let manager = makeManager()
        let queue = manager.operationQueue
        let events = Locked<[(task: Int, event: String, onQueue: Bool)]>([])
        let note: @Sendable (URLSessionTask, String) -> Void = { task, event in
            events.append((task.taskIdentifier, event, OperationQueue.current === queue))
        }
        manager.setTaskWillPerformHTTPRedirectionBlock { _, task, _, request in note(task, "redirect"); return request }
        manager.setDataTaskDidReceiveResponseBlock { _, task, _ in note(task, "response"); return .allow }
        manager.setDataTaskDidReceiveDataBlock { _, task, _ in note(task, "data") }
        manager.setTaskDidSendBodyDataBlock { _, task, _, _, _ in note(task, "send") }
        manager.setTaskDidCompleteBlock { _, task, _ in note(task, "complete") }
        manager.setDownloadTaskDidWriteDataBlock { _, task, _, _, _ in note(task, "write") }
        manager.setDownloadTaskDidFinishDownloadingBlock { _, task, _ in note(task, "finish"); return nil }
        manager.setTaskDidReceiveAuthenticationChallengeBlock { _, task, _, credential in
            note(task, "challenge")
            credential?.pointee = URLCredential(user: "u", password: "p", persistence: .none)
            return .useCredential
        }

        let dataProbe = makeProbe("data")
        let uploadProbe = makeProbe("upload")
        let downloadProbe = makeProbe("download")
        let authProbe = makeProbe("auth")
        let data = manager.dataTask(with: request("/hop"), completionHandler: dataProbe.data)
        let upload = manager.uploadTask(with: request("/sink", method: "POST"), from: Data(repeating: 1, count: 30_000),
                                        progress: nil, completionHandler: uploadProbe.data)
        let download = manager.downloadTask(with: request("/file"), progress: nil, destination: nil, completionHandler: downloadProbe.download)
        let auth = manager.dataTask(with: request("/auth"), completionHandler: authProbe.data)
        let started: [(URLSessionTask, TaskCompletionProbe)] = [(data, dataProbe), (upload, uploadProbe), (download, downloadProbe),
                                                                 (auth, authProbe)]
        for (task, probe) in started {
            probe.task.value = task
            task.resume()
        }
        wait(for: [dataProbe.expectation, uploadProbe.expectation, downloadProbe.expectation, authProbe.expectation], timeout: 20)
        drain(queue)

        let all = events.value
        XCTAssertTrue(all.allSatisfy { $0.onQueue }, "off operationQueue: \(all.filter { !$0.onQueue }.map(\.event))")
        func order(of task: URLSessionTask) -> [String] {
            // Collapse repeated events ("data", "data" → "data").
            all.filter { $0.task == task.taskIdentifier }.map(\.event).reduce(into: [String]()) { result, event in
                if result.last != event { result.append(event) }
            }
        }
        XCTAssertEqual(order(of: data), ["redirect", "response", "data", "complete"])
        XCTAssertEqual(order(of: upload).first, "send")
        XCTAssertEqual(order(of: upload).last, "complete")
        XCTAssertEqual(order(of: download), ["write", "finish", "complete"])
        XCTAssertEqual(order(of: auth).first, "challenge")
        XCTAssertEqual(order(of: auth).last, "complete")
        XCTAssertNil(authProbe.outcome.value.error)
    }
}

/// httpbin's /basic-auth/user/passwd and /digest-auth/auth/user/passwd credential.
private let goodSessionTestCredential = URLCredential(user: "user", password: "passwd", persistence: .none)

/// Overrides two delegate methods, calling super, and records what it saw.
private final class OverridingSessionManager: URLSessionManager, @unchecked Sendable {
    // @unchecked: the recorded state is in `Locked` boxes.
    let completedTasks = Locked<[Int]>([])
    let receivedBytes = Locked(0)
    let overridesRanOnOperationQueue = Locked(true)

    override func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        if OperationQueue.current !== operationQueue { overridesRanOnOperationQueue.value = false }
        completedTasks.append(task.taskIdentifier)
        super.urlSession(session, task: task, didCompleteWithError: error)
    }

    override func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if OperationQueue.current !== operationQueue { overridesRanOnOperationQueue.value = false }
        receivedBytes.increment(by: data.count)
        super.urlSession(session, dataTask: dataTask, didReceive: data)
    }
}
