import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import NIOHTTP1
import XCTest

/// `TransferMetrics` (`URLConnectionOperation.metrics`,
/// `URLSessionTask.transferMetrics`) against nginx and the scripted server,
/// and `NetworkActivityLogger` through a recording swift-log handler.
final class MetricsAndLoggingTests: OperationTestCase {
    private var sharedLoggerBefore: Logger?

    override func setUpWithError() throws {
        try super.setUpWithError()
        sharedLoggerBefore = NetworkActivityLogger.shared.logger
    }

    override func tearDown() {
        NetworkActivityLogger.shared.logger = sharedLoggerBefore
        super.tearDown()
    }

    /// Runs `operation` to its end and waits (bounded) until it is finished,
    /// which is when `metrics` becomes readable (after the completion blocks).
    @discardableResult
    private func runToFinish(_ operation: HTTPRequestOperation, timeout: TimeInterval = 15,
                             file: StaticString = #filePath, line: UInt = #line) -> Outcome {
        let outcome = run(operation, timeout: timeout)
        XCTAssertTrue(spin(until: { operation.isFinished }, timeout: 5), "the operation never finished", file: file, line: line)
        return outcome
    }

    private func nginxOperation(_ path: String, https: Bool = false) throws -> HTTPRequestOperation {
        let nginx = try SharedServers.nginx()
        var request = URLRequest(url: (https ? nginx.httpsURL : nginx.httpURL).appendingPathComponent(path))
        request.timeoutInterval = 10
        // A stored entry from an earlier run would be revalidated (a 304 with
        // no body bytes); these tests are about a full transfer.
        request.cachePolicy = .reloadIgnoringLocalCacheData
        return HTTPRequestOperation(request: request)
    }

    // MARK: - Metrics

    func testMetricsOfAPlainGET() throws {
        let operation = try nginxOperation("1k.bin")
        let outcome = runToFinish(operation)
        XCTAssertNil(outcome.error)
        let metrics = try XCTUnwrap(operation.metrics)
        XCTAssertEqual(metrics.httpVersion, "HTTP/1.1")
        XCTAssertEqual(metrics.bytesReceived, 1024)
        XCTAssertEqual(metrics.bytesSent, 0, "a GET sends no body")
        XCTAssertGreaterThan(metrics.total, 0)
        XCTAssertGreaterThan(metrics.timeToFirstByte, 0)
        XCTAssertLessThanOrEqual(metrics.timeToFirstByte, metrics.total)
        XCTAssertLessThanOrEqual(metrics.connect, metrics.timeToFirstByte)
        XCTAssertEqual(metrics.secureConnection, 0, "no TLS")
        XCTAssertEqual(metrics.remoteAddress, "127.0.0.1")
        XCTAssertEqual(metrics.redirectCount, 0)
        XCTAssertTrue(metrics.description.contains("HTTP/1.1"), metrics.description)
        XCTAssertTrue(metrics.description.contains("received 1024 B"), metrics.description)
    }

    func testASecondRequestOfTheSameManagerReusesTheConnection() throws {
        let nginx = try SharedServers.nginx()
        let manager = HTTPRequestOperationManager(baseURL: nginx.httpURL)
        manager.responseSerializer = HTTPResponseSerializer()
        var operations: [HTTPRequestOperation] = []
        for _ in 0..<2 {
            let request = URLRequest(url: nginx.httpURL.appendingPathComponent("1k.bin"), cachePolicy: .reloadIgnoringLocalCacheData)
            let operation = manager.httpRequestOperation(with: request, success: nil, failure: nil)
            XCTAssertNil(runToFinish(operation).error)
            operations.append(operation)
        }
        let second = try XCTUnwrap(operations.last?.metrics)
        XCTAssertTrue(second.reusedConnection, "keep-alive: the second request rides the first one's connection (\(second))")
        XCTAssertTrue(second.description.contains("reused"), second.description)
        XCTAssertEqual(second.bytesReceived, 1024)
    }

    func testHTTP2OverTLSReportsTheVersionAndTheHandshake() throws {
        let nginx = try SharedServers.nginx()
        let operation = try nginxOperation("1k.bin", https: true)
        let policy = ModernSupport.permissivePolicy()
        // Trusting the server's own certificate as an extra anchor does not
        // change the decision (invalid certificates are allowed anyway) but
        // gives the policy a fingerprint no other test uses, so this request
        // opens a connection of its own and its TLS handshake is measured.
        policy.additionalTrustedCertificates = ModernSupport.derCertificates(fromPEMFile: nginx.certificatePath)
        XCTAssertFalse(policy.additionalTrustedCertificates.isEmpty)
        operation.securityPolicy = policy
        let outcome = runToFinish(operation)
        XCTAssertNil(outcome.error)
        let metrics = try XCTUnwrap(operation.metrics)
        XCTAssertEqual(metrics.httpVersion, "HTTP/2")
        XCTAssertFalse(metrics.reusedConnection)
        XCTAssertGreaterThan(metrics.secureConnection, 0, "the TLS handshake took time")
        XCTAssertLessThanOrEqual(metrics.secureConnection, metrics.timeToFirstByte)
        XCTAssertEqual(metrics.bytesReceived, 1024)
    }

    func testRedirectsAreCounted() throws {
        server.route("/first") { _ in
            [.head(status: 302, headers: [("Location", "/second"), ("Content-Length", "0")]), .end]
        }
        server.route("/second") { _ in
            [.head(status: 301, headers: [("Location", "/final"), ("Content-Length", "0")]), .end]
        }
        server.respond("/final", body: Data("arrived".utf8))
        let operation = HTTPRequestOperation(request: request("/first"))
        XCTAssertNil(runToFinish(operation).error)
        XCTAssertEqual(operation.responseString, "arrived")
        let metrics = try XCTUnwrap(operation.metrics)
        XCTAssertEqual(metrics.redirectCount, 2)
        XCTAssertEqual(metrics.bytesReceived, 7, "the final hop's body")
        XCTAssertTrue(metrics.description.contains("redirects 2"), metrics.description)
    }

    func testMetricsAreNilUntilTheOperationFinished() {
        // The answer waits until the test has looked at the running operation
        // (at most 30 s), so "still running" is certain, not a race with a delay.
        let looked = Locked(false)
        server.route("/slow") { _ in
            [.waitUntil({ looked.value }, timeout: 30), .head(status: 200, headers: [("Content-Length", "2")]),
             .body(Data("ok".utf8)), .end]
        }
        let operation = HTTPRequestOperation(request: request("/slow", timeout: 60))
        XCTAssertNil(operation.metrics, "not started")
        let done = expectation(description: "done")
        operation.setCompletionBlockWithSuccess({ _, _ in done.fulfill() }, failure: { _, _ in done.fulfill() })
        OperationQueue().addOperation(operation)
        XCTAssertTrue(spin(until: { operation.isExecuting }, timeout: 5))
        XCTAssertNil(operation.metrics, "still running")
        XCTAssertFalse(operation.isFinished, "the answer is held until now")
        looked.value = true
        wait(for: [done], timeout: 10)
        XCTAssertTrue(spin(until: { operation.isFinished }, timeout: 5))
        XCTAssertNotNil(operation.metrics)
    }

    func testACancelledOperationThatNeverRanHasNoMetrics() {
        let operation = HTTPRequestOperation(request: request("/never"))
        operation.cancel()
        let outcome = runToFinish(operation)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertNil(operation.metrics, "no transfer, nothing measured")
    }

    func testMetricsOfASessionTask() throws {
        let body = Data(#"{"task":"metrics"}"#.utf8)
        server.respond("/json", headers: [("Content-Type", "application/json")], body: body)
        let manager = URLSessionManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        manager.completionQueue = ModernSupport.completionQueue("metrics-session")
        let done = expectation(description: "completion")
        let task = manager.dataTask(with: request("/json")) { _, _, _ in done.fulfill() }
        XCTAssertNil(task.transferMetrics, "not resumed")
        task.resume()
        wait(for: [done], timeout: 15)
        XCTAssertTrue(spin(until: { task.state == .completed }, timeout: 5))
        let metrics = try XCTUnwrap(task.transferMetrics)
        XCTAssertEqual(metrics.bytesReceived, Int64(body.count))
        XCTAssertEqual(metrics.httpVersion, "HTTP/1.1")
        XCTAssertEqual(metrics.remoteAddress, "127.0.0.1")
        XCTAssertGreaterThan(metrics.total, 0)
    }

    func testMetricsValuesAreComparable() {
        let one = TransferMetrics(total: 1, bytesReceived: 10, httpVersion: "HTTP/1.1", remoteAddress: "127.0.0.1")
        XCTAssertEqual(one, TransferMetrics(total: 1, bytesReceived: 10, httpVersion: "HTTP/1.1", remoteAddress: "127.0.0.1"))
        XCTAssertNotEqual(one, TransferMetrics(total: 1, bytesReceived: 11, httpVersion: "HTTP/1.1", remoteAddress: "127.0.0.1"))
        XCTAssertTrue(TransferMetrics().description.hasPrefix("-"), "no version yet: \(TransferMetrics().description)")
    }

    // MARK: - Logging

    func testARequestIsLoggedAtDebugAndItsEndAtInfo() throws {
        let body = ModernSupport.pattern(1024)
        server.respond("/logged", body: body)
        let recorder = ModernLogRecorder()
        let operation = HTTPRequestOperation(request: request("/logged"))
        operation.logger = recorder.logger()
        XCTAssertNil(runToFinish(operation).error)
        let url = try XCTUnwrap(operation.request.url?.absoluteString)
        XCTAssertTrue(spin(until: { !recorder.lines(containing: "\(url) 200").isEmpty }, timeout: 5), "\(recorder.records)")

        let sent = recorder.records.filter { $0.level == .debug && $0.message == "GET \(url)" }
        XCTAssertEqual(sent.count, 1, "\(recorder.records)")
        XCTAssertEqual(sent.first?.metadata["hop"], "1")

        let finished = recorder.records.filter { $0.level == .info }
        XCTAssertEqual(finished.count, 1, "\(recorder.records)")
        let line = try XCTUnwrap(finished.first)
        XCTAssertTrue(line.message.hasPrefix("GET \(url) 200 1024 B"), line.message)
        XCTAssertEqual(line.metadata["bytes"], "1024")
        XCTAssertNotNil(line.metadata["metrics"], "the finish line carries the metrics")
        XCTAssertTrue(recorder.records.allSatisfy { $0.level != .error })
    }

    func testAFailureIsLoggedAtError() {
        let recorder = ModernLogRecorder()
        var refused = URLRequest(url: URL(string: "http://127.0.0.1:\(Fixtures.refusedPort)/refused")!)
        refused.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: refused)
        operation.logger = recorder.logger(level: .info)
        XCTAssertEqual(runToFinish(operation).error?.code, NSURLErrorCannotConnectToHost)
        XCTAssertTrue(spin(until: { recorder.records.contains { $0.level == .error } }, timeout: 5), "\(recorder.records)")
        let failure = recorder.records.first { $0.level == .error }
        XCTAssertTrue(failure?.message.hasPrefix("GET \(refused.url!.absoluteString) failed") ?? false, "\(String(describing: failure))")
        XCTAssertEqual(failure?.metadata["error"], "\(NSURLErrorDomain) \(NSURLErrorCannotConnectToHost)")
        XCTAssertTrue(recorder.records.allSatisfy { $0.level >= .info }, "the logger's level filters debug and trace records")
    }

    func testAnHTTPErrorStatusIsAFinishedRequestNotATransportFailure() {
        let recorder = ModernLogRecorder()
        let operation = HTTPRequestOperation(request: request("/missing"))
        operation.logger = recorder.logger()
        XCTAssertEqual(runToFinish(operation).error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(spin(until: { recorder.records.contains { $0.level == .info } }, timeout: 5), "\(recorder.records)")
        XCTAssertTrue(recorder.records.contains { $0.level == .info && $0.message.contains(" 404 ") }, "\(recorder.records)")
    }

    func testAUserAndPasswordInTheURLAreNotLogged() throws {
        server.respond("/private", body: Data("ok".utf8))
        let recorder = ModernLogRecorder()
        var components = try XCTUnwrap(URLComponents(url: server.baseURL.appendingPathComponent("private"), resolvingAgainstBaseURL: false))
        components.user = "alice"
        components.password = "top-secret-password"
        let operation = HTTPRequestOperation(request: URLRequest(url: try XCTUnwrap(components.url)))
        operation.logger = recorder.logger(level: .trace)
        _ = runToFinish(operation)
        XCTAssertTrue(spin(until: { !recorder.lines(containing: "/private").filter { $0.level == .info }.isEmpty }, timeout: 5),
                      "\(recorder.records)")
        for record in recorder.records {
            XCTAssertFalse(record.allText.contains("top-secret-password"), "a password leaked: \(record)")
            XCTAssertFalse(record.allText.contains("alice@"), "a user name leaked: \(record)")
        }
    }

    func testTheLogHandlerNeverRunsOnTheNetworkThread() {
        server.route("/hop") { _ in [.head(status: 302, headers: [("Location", "/landed"), ("Content-Length", "0")]), .end] }
        server.respond("/landed", body: Data("ok".utf8))
        let recorder = ModernLogRecorder()
        let operation = HTTPRequestOperation(request: request("/hop"))
        operation.logger = recorder.logger(level: .trace)
        XCTAssertNil(runToFinish(operation).error)
        XCTAssertTrue(spin(until: { recorder.records.contains { $0.level == .info } }, timeout: 5), "\(recorder.records)")
        XCTAssertTrue(recorder.records.contains { $0.message.hasPrefix("redirect 302") }, "\(recorder.records)")
        for record in recorder.records {
            XCTAssertNotEqual(record.threadName, "AFNetworking", "a LogHandler ran on the network thread: \(record)")
        }
    }

    func testHeaderLinesAtTraceWithCredentialsRedacted() {
        server.respond("/secret", body: Data("ok".utf8))
        let recorder = ModernLogRecorder()
        var request = self.request("/secret")
        request.httpShouldHandleCookies = false
        request.setValue("Bearer top-secret-token", forHTTPHeaderField: "Authorization")
        request.setValue("session=top-secret-cookie", forHTTPHeaderField: "Cookie")
        request.setValue("Basic top-secret-proxy", forHTTPHeaderField: "Proxy-Authorization")
        request.setValue("visible-value", forHTTPHeaderField: "X-Visible")
        let operation = HTTPRequestOperation(request: request)
        operation.logger = recorder.logger(level: .trace)
        XCTAssertNil(runToFinish(operation).error)
        XCTAssertTrue(spin(until: { recorder.records.contains { $0.level == .info } }, timeout: 5))

        let trace = recorder.records.filter { $0.level == .trace }.map(\.message)
        XCTAssertTrue(trace.contains("> Authorization: <redacted>"), "\(trace)")
        XCTAssertTrue(trace.contains("> Cookie: <redacted>"), "\(trace)")
        XCTAssertTrue(trace.contains("> Proxy-Authorization: <redacted>"), "\(trace)")
        XCTAssertTrue(trace.contains("> X-Visible: visible-value"), "\(trace)")
        for record in recorder.records {
            XCTAssertFalse(record.allText.contains("top-secret"), "a credential leaked: \(record)")
        }
        // What actually went out still carried them.
        XCTAssertEqual(server.requests.first?.headers.first(name: "Authorization"), "Bearer top-secret-token")
    }

    func testHeaderLinesAreNotLoggedAboveTrace() {
        server.respond("/quiet", body: Data("ok".utf8))
        let recorder = ModernLogRecorder()
        var request = self.request("/quiet")
        request.setValue("v", forHTTPHeaderField: "X-Visible")
        let operation = HTTPRequestOperation(request: request)
        operation.logger = recorder.logger(level: .debug)
        XCTAssertNil(runToFinish(operation).error)
        XCTAssertTrue(spin(until: { recorder.records.contains { $0.level == .info } }, timeout: 5))
        XCTAssertFalse(recorder.records.contains { $0.level == .trace || $0.message.hasPrefix("> ") }, "\(recorder.records)")
        XCTAssertTrue(recorder.records.contains { $0.level == .debug })
    }

    func testTheSharedLoggerIsUsedWhenNoneIsSetAndNothingIsLoggedWithout() {
        server.respond("/a", body: Data("a".utf8))
        server.respond("/b", body: Data("b".utf8))
        let recorder = ModernLogRecorder()
        NetworkActivityLogger.shared.logger = recorder.logger()
        let first = HTTPRequestOperation(request: request("/a"))
        XCTAssertNil(first.logger)
        XCTAssertNil(runToFinish(first).error)
        XCTAssertTrue(spin(until: { !recorder.lines(containing: "/a 200").isEmpty }, timeout: 5), "\(recorder.records)")

        NetworkActivityLogger.shared.logger = nil
        let second = HTTPRequestOperation(request: request("/b"))
        XCTAssertNil(runToFinish(second).error)
        idle(0.2)
        XCTAssertTrue(recorder.lines(containing: "/b").isEmpty, "logged with no logger set: \(recorder.records)")
    }

    func testNothingIsLoggedByDefault() {
        XCTAssertNil(NetworkActivityLogger().logger, "opt-in: a logger logs nothing until one is set")
        XCTAssertNil(HTTPRequestOperation(request: request("/x")).logger)
        XCTAssertNil(HTTPRequestOperationManager(baseURL: nil).logger)
        let manager = URLSessionManager(sessionConfiguration: nil)
        XCTAssertNil(manager.logger)
        manager.invalidateSessionCancelingTasks(true)
    }

    func testAnOperationsLoggerOverridesTheSharedOne() {
        server.respond("/own", body: Data("own".utf8))
        let shared = ModernLogRecorder()
        let own = ModernLogRecorder()
        NetworkActivityLogger.shared.logger = shared.logger()
        let operation = HTTPRequestOperation(request: request("/own"))
        operation.logger = own.logger()
        XCTAssertNil(runToFinish(operation).error)
        XCTAssertTrue(spin(until: { !own.lines(containing: "/own 200").isEmpty }, timeout: 5), "\(own.records)")
        XCTAssertFalse(own.lines(containing: "GET ").isEmpty)
        XCTAssertTrue(shared.lines(containing: "/own").isEmpty, "the shared logger saw it too: \(shared.records)")
    }

    func testTheOperationManagerHandsItsLoggerToItsOperations() {
        let recorder = ModernLogRecorder()
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.logger = recorder.logger(label: "afn.tests.manager-logger")
        let operation = manager.httpRequestOperation(with: request("/x"), success: nil, failure: nil)
        XCTAssertEqual(operation.logger?.label, "afn.tests.manager-logger")
        XCTAssertEqual((operation.copy() as? HTTPRequestOperation)?.logger?.label, "afn.tests.manager-logger", "copy() keeps it")
    }

    func testASessionManagersLoggerLogsItsTasks() {
        server.respond("/task", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let recorder = ModernLogRecorder()
        let manager = URLSessionManager(sessionConfiguration: nil)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        manager.completionQueue = ModernSupport.completionQueue("logging-session")
        manager.logger = recorder.logger()
        let done = expectation(description: "completion")
        let task = manager.dataTask(with: request("/task")) { _, _, _ in done.fulfill() }
        task.resume()
        wait(for: [done], timeout: 15)
        let url = self.url("/task").absoluteString
        XCTAssertTrue(spin(until: { !recorder.lines(containing: "\(url) 200").isEmpty }, timeout: 5), "\(recorder.records)")
        XCTAssertTrue(recorder.records.contains { $0.level == .debug && $0.message == "GET \(url)" }, "\(recorder.records)")
    }

    func testRedirectHopsAreLoggedAtDebug() {
        server.route("/moved") { _ in [.head(status: 302, headers: [("Location", "/here"), ("Content-Length", "0")]), .end] }
        server.respond("/here", body: Data("here".utf8))
        let recorder = ModernLogRecorder()
        let operation = HTTPRequestOperation(request: request("/moved"))
        operation.logger = recorder.logger(level: .debug)
        XCTAssertNil(runToFinish(operation).error)
        XCTAssertTrue(spin(until: { recorder.records.contains { $0.level == .info } }, timeout: 5))
        XCTAssertTrue(recorder.records.contains { $0.level == .debug && $0.message.hasPrefix("redirect 302") && $0.message.hasSuffix("/here") },
                      "\(recorder.records)")
        XCTAssertEqual(recorder.records.filter { $0.level == .debug && $0.message.hasPrefix("GET ") }.count, 2, "one per hop")
    }

    /// Spins the main run loop for `seconds`.
    private func idle(_ seconds: TimeInterval) {
        let until = Date().addingTimeInterval(seconds)
        while Date() < until { _ = RunLoop.main.run(mode: .default, before: min(until, Date().addingTimeInterval(0.01))) }
    }
}
