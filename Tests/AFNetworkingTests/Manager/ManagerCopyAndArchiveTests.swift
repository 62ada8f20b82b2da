import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import XCTest

/// A manager's `copy()` keeps what its operations and tasks are given —
/// client certificate, `timeoutIntervalForResource`, retry policy, logger —
/// as an operation's `copy()` does; its archive keeps the retry policy and
/// the resource timeout (never the private key or the logger). A second
/// `NetworkActivityLogger`, once started, receives every request's records.
final class ManagerCopyAndArchiveTests: OperationTestCase {
    private func identity() throws -> ClientCertificate {
        let material = try MutualTLSMaterial.shared()
        return try ClientCertificate.pem(certificateChainFile: material.clientCertificatePEM, privateKeyFile: material.clientKeyPEM)
    }

    private var policy: RetryPolicy {
        var policy = RetryPolicy()
        policy.maximumAttempts = 2
        policy.baseDelay = 0.01
        policy.jitter = 0
        policy.retryableStatusCodes = [503]
        return policy
    }

    /// `/flaky` answers 503 to its first request and 200 after.
    private func serveFlaky() {
        let count = Locked(0)
        server.route("/flaky") { _ in
            let attempt = count.withLock { value -> Int in
                value += 1
                return value
            }
            let status = attempt == 1 ? 503 : 200
            return [.head(status: status, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
        }
    }

    func testAnOperationManagersCopyKeepsCertificateTimeoutRetryAndLogger() throws {
        serveFlaky()
        let recorder = ModernLogRecorder()
        let manager = HTTPRequestOperationManager(baseURL: server.baseURL)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "copy-operation-manager")
        manager.clientCertificate = try identity()
        manager.timeoutIntervalForResource = 42
        manager.retryPolicy = policy
        manager.logger = recorder.logger(label: "afn.tests.copied")
        let copy = try XCTUnwrap(manager.copy() as? HTTPRequestOperationManager)
        XCTAssertEqual(copy.clientCertificate, manager.clientCertificate)
        XCTAssertEqual(copy.timeoutIntervalForResource, 42)
        XCTAssertEqual(copy.retryPolicy, policy)
        XCTAssertEqual(copy.logger?.label, "afn.tests.copied")

        // And the copy's operations act on them: the 503 is retried, the copy's logger hears of it.
        let done = expectation(description: "copied manager's GET")
        let status = Locked(0)
        copy.get("flaky", parameters: nil, success: { operation, _ in
            status.withLock { $0 = operation.response?.statusCode ?? 0 }
            done.fulfill()
        }, failure: { operation, _ in
            status.withLock { $0 = operation?.response?.statusCode ?? -1 }
            done.fulfill()
        })
        wait(for: [done], timeout: 15)
        XCTAssertEqual(status.value, 200, "the copy's retry policy retried the 503")
        XCTAssertEqual(server.requests.filter { $0.uri.hasPrefix("/flaky") }.count, 2)
        XCTAssertTrue(spin(until: { !recorder.lines(containing: "flaky 200").isEmpty }, timeout: 5), "\(recorder.records)")
    }

    func testASessionManagersCopyKeepsCertificateRetryAndLogger() throws {
        let manager = HTTPSessionManager(baseURL: server.baseURL, sessionConfiguration: nil)
        defer { manager.invalidateSessionCancelingTasks(true) }
        manager.clientCertificate = try identity()
        manager.retryPolicy = policy
        manager.logger = Logger(label: "afn.tests.session-copy")
        let copy = try XCTUnwrap(manager.copy() as? HTTPSessionManager)
        defer { copy.invalidateSessionCancelingTasks(true) }
        XCTAssertEqual(copy.clientCertificate, manager.clientCertificate)
        XCTAssertEqual(copy.retryPolicy, policy)
        XCTAssertEqual(copy.logger?.label, "afn.tests.session-copy")
    }

    func testArchivesKeepTheRetryPolicyAndResourceTimeoutButNeverTheKey() throws {
        let operations = HTTPRequestOperationManager(baseURL: server.baseURL)
        operations.timeoutIntervalForResource = 42
        operations.retryPolicy = policy
        operations.clientCertificate = try identity()
        let archive = try NSKeyedArchiver.archivedData(withRootObject: operations, requiringSecureCoding: true)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPRequestOperationManager.self, from: archive))
        XCTAssertEqual(restored.timeoutIntervalForResource, 42)
        XCTAssertEqual(restored.retryPolicy, policy)
        XCTAssertNil(restored.clientCertificate, "a private key is never written into an archive")
        let material = try MutualTLSMaterial.shared()
        let keyText = try String(contentsOf: material.clientKeyPEM, encoding: .utf8)
        let keyBody = keyText.split(separator: "\n").dropFirst().first.map(String.init) ?? "-"
        XCTAssertNil(archive.range(of: Data(keyBody.utf8)), "no line of the key is in the archive")

        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForResource = 42
        let session = HTTPSessionManager(baseURL: server.baseURL, sessionConfiguration: configuration)
        defer { session.invalidateSessionCancelingTasks(true) }
        session.retryPolicy = policy
        let sessionArchive = try NSKeyedArchiver.archivedData(withRootObject: session, requiringSecureCoding: true)
        let restoredSession = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: HTTPSessionManager.self, from: sessionArchive))
        defer { restoredSession.invalidateSessionCancelingTasks(true) }
        XCTAssertEqual(restoredSession.retryPolicy, policy)
        XCTAssertEqual(restoredSession.session.configuration.timeoutIntervalForResource, 42)
        XCTAssertNil(HTTPRequestOperationManager(baseURL: nil).retryPolicy, "no policy archived: none restored")
    }

    // MARK: Loggers

    func testAStartedSecondLoggerReceivesEveryRequestUntilStopped() {
        server.respond("/first", body: Data("1".utf8))
        server.respond("/second", body: Data("2".utf8))
        let recorder = ModernLogRecorder()
        let second = NetworkActivityLogger()
        second.logger = recorder.logger(label: "afn.tests.second")
        second.startLogging()
        let operation = HTTPRequestOperation(request: request("/first"))
        XCTAssertNil(run(operation).error)
        let first = url("/first").absoluteString
        XCTAssertTrue(spin(until: { !recorder.lines(containing: "\(first) 200").isEmpty }, timeout: 5),
                      "a started logger hears of requests that have no logger of their own: \(recorder.records)")
        XCTAssertTrue(recorder.records.contains { $0.level == .debug && $0.message == "GET \(first)" }, "\(recorder.records)")

        // A request with its own logger is heard by both.
        let own = ModernLogRecorder()
        let withOwn = HTTPRequestOperation(request: request("/second"))
        withOwn.logger = own.logger()
        second.stopLogging()
        XCTAssertNil(run(withOwn).error)
        let secondURL = url("/second").absoluteString
        XCTAssertTrue(spin(until: { !own.lines(containing: "\(secondURL) 200").isEmpty }, timeout: 5), "\(own.records)")
        XCTAssertTrue(recorder.lines(containing: "/second").isEmpty, "stopped: \(recorder.records)")
    }

    func testAStartedLoggerAlsoHearsARequestWithItsOwnLogger() {
        server.respond("/both", body: Data("b".utf8))
        let recorder = ModernLogRecorder()
        let second = NetworkActivityLogger()
        second.logger = recorder.logger(label: "afn.tests.both")
        second.startLogging()
        defer { second.stopLogging() }
        let own = ModernLogRecorder()
        let operation = HTTPRequestOperation(request: request("/both"))
        operation.logger = own.logger()
        XCTAssertNil(run(operation).error)
        let target = url("/both").absoluteString
        XCTAssertTrue(spin(until: { !own.lines(containing: "\(target) 200").isEmpty && !recorder.lines(containing: "\(target) 200").isEmpty },
                           timeout: 5), "own: \(own.records) started: \(recorder.records)")
    }
}
