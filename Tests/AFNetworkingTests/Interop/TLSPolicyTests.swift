@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The operation's SecurityPolicy runs inside the TLS handshake of the real
/// connection, against nginx serving the test PKI (leaf + intermediate under
/// a private root) over HTTP/1.1 and HTTP/2.
final class TLSPolicyTests: OperationTestCase {
    private func fixture() throws -> NginxFixture { try SharedServers.pkiNginx() }

    /// A unique path per request, so the access log tells whether it arrived.
    private func fetch(host: String = "localhost", policy: SecurityPolicy?) throws -> (HTTPRequestOperation, Outcome, reached: Bool) {
        let nginx = try fixture()
        let marker = "1k.bin?marker=\(UUID().uuidString)"
        var request = URLRequest(url: URL(string: "https://\(host):\(nginx.httpsPort)/\(marker)")!)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        if let policy { operation.securityPolicy = policy }
        let outcome = run(operation)
        // nginx writes its log line after the response, sometimes a little later
        // on a busy machine: wait (bounded) for it when the request succeeded.
        let deadline = Date().addingTimeInterval(outcome.error == nil ? 3 : 0.2)
        while !nginx.accessLog.contains(marker) && Date() < deadline { usleep(10_000) }
        return (operation, outcome, nginx.accessLog.contains(marker))
    }

    private func policy(_ mode: SSLPinningMode, pinning certificates: [Data], allowInvalid: Bool = true) -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: mode, withPinnedCertificates: certificates)
        policy.allowInvalidCertificates = allowInvalid
        return policy
    }

    private func assertRejected(_ result: (HTTPRequestOperation, Outcome, reached: Bool), file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.1.calls, 1, file: file, line: line)
        XCTAssertEqual(result.1.error?.domain, NSURLErrorDomain, file: file, line: line)
        XCTAssertTrue([NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot].contains(result.1.error?.code ?? 0),
                      "\(String(describing: result.1.error))", file: file, line: line)
        XCTAssertFalse(result.reached, "a rejected server must not receive the request", file: file, line: line)
        XCTAssertNil(result.0.response, file: file, line: line)
    }

    private func assertAccepted(_ result: (HTTPRequestOperation, Outcome, reached: Bool), file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNil(result.1.error, file: file, line: line)
        XCTAssertEqual(result.0.responseData?.count, 1024, file: file, line: line)
        XCTAssertTrue(result.reached, file: file, line: line)
    }

    func testDefaultPolicyRejectsAPrivateRootAndSendsNothing() throws {
        assertRejected(try fetch(policy: nil))
    }

    func testDefaultPolicyCanNeverAcceptAnyCertificate() {
        // 2.5.1 shipped a default that allowed invalid certificates (issues 2590, 2619).
        let policy = SecurityPolicy.default()
        XCTAssertEqual(policy.sslPinningMode, .none)
        XCTAssertFalse(policy.allowInvalidCertificates)
        XCTAssertTrue(policy.validatesDomainName)
        XCTAssertTrue(policy.isStandardVerification)
        let operation = URLConnectionOperation(request: URLRequest(url: URL(string: "https://localhost/")!))
        XCTAssertFalse(operation.securityPolicy.allowInvalidCertificates)
        XCTAssertTrue(operation.securityPolicy.transferVerification.verifiesPeer)
        XCTAssertTrue(operation.securityPolicy.transferVerification.verifiesHost)
    }

    func testCertificatePinningOfTheRootAccepts() throws {
        assertAccepted(try fetch(policy: policy(.certificate, pinning: [TestPKI.root])))
    }

    func testCertificatePinningOfAnUnrelatedRootRejects() throws {
        assertRejected(try fetch(policy: policy(.certificate, pinning: [TestPKI.unrelatedRoot])))
    }

    func testPublicKeyPinningOfTheLeafAccepts() throws {
        assertAccepted(try fetch(policy: policy(.publicKey, pinning: [TestPKI.leaf])))
    }

    func testPublicKeyPinningOfAnUnrelatedKeyRejects() throws {
        assertRejected(try fetch(policy: policy(.publicKey, pinning: [TestPKI.unrelatedLeaf])))
    }

    func testSPKIHashPinsWithABackupPin() throws {
        // Pins from the openssl command line, not from the implementation under test.
        let good = try OpenSSLPin.pin(ofDER: TestPKI.intermediate)
        let backup = try OpenSSLPin.pin(ofDER: TestPKI.unrelatedRoot)
        let accepting = policy(.publicKey, pinning: [])
        accepting.pinnedPublicKeyHashes = [backup, good]
        assertAccepted(try fetch(policy: accepting))
        let rejecting = policy(.publicKey, pinning: [])
        rejecting.pinnedPublicKeyHashes = [backup]
        assertRejected(try fetch(policy: rejecting))
    }

    func testRejectionCarriesTheReason() throws {
        let result = try fetch(policy: policy(.certificate, pinning: [TestPKI.unrelatedRoot]))
        XCTAssertNotNil(result.1.error?.userInfo[AFNetworkingSecurityPolicyFailureReasonErrorKey])
        XCTAssertNotNil(result.1.error?.userInfo[NSURLErrorFailingURLErrorKey])
    }

    func testDomainIsValidatedInsideTheHandshake() throws {
        // The leaf names localhost and 127.0.0.1; "127.0.0.2" reaches the same
        // nginx but is not in the certificate.
        assertRejected(try fetch(host: "127.0.0.2", policy: policy(.certificate, pinning: [TestPKI.root])))
        assertAccepted(try fetch(host: "127.0.0.1", policy: policy(.certificate, pinning: [TestPKI.root])))
    }

    func testAllowInvalidWithoutDomainValidationAcceptsAnything() throws {
        let permissive = SecurityPolicy(pinningMode: .none)
        permissive.allowInvalidCertificates = true
        permissive.validatesDomainName = false
        assertAccepted(try fetch(host: "127.0.0.2", policy: permissive))
    }

    func testAConnectionVerifiedUnderOnePolicyIsNotReusedUnderAnother() throws {
        // The permissive request leaves a kept-alive connection to the server;
        // the default policy must not ride on it.
        let permissive = SecurityPolicy(pinningMode: .none)
        permissive.allowInvalidCertificates = true
        permissive.validatesDomainName = false
        assertAccepted(try fetch(policy: permissive))
        assertRejected(try fetch(policy: nil))
        // Nor a pin for another key on a connection an accepting pin verified.
        assertAccepted(try fetch(policy: policy(.certificate, pinning: [TestPKI.root])))
        assertRejected(try fetch(policy: policy(.certificate, pinning: [TestPKI.unrelatedRoot])))
        // The same policy again reuses its own, already verified connection.
        assertAccepted(try fetch(policy: policy(.certificate, pinning: [TestPKI.root])))
    }

    func testEveryNewConnectionIsVerifiedEvenWithSessionResumptionAvailable() throws {
        // Two operations, each with its own connection (the first is closed by
        // the server after one request via a distinct partition), both judged.
        for _ in 0..<3 {
            assertAccepted(try fetch(policy: policy(.publicKey, pinning: [TestPKI.leaf])))
            assertRejected(try fetch(policy: policy(.publicKey, pinning: [TestPKI.unrelatedLeaf])))
        }
    }

    func testHTTP2WithCertificatePinning() throws {
        let nginx = try fixture()
        let result = try fetch(policy: policy(.certificate, pinning: [TestPKI.root]))
        assertAccepted(result)
        // This request's own line (its unique query), not any HTTP/2 request of another test.
        let url = try XCTUnwrap(result.0.request.url)
        XCTAssertTrue(nginx.logShows("\"GET \(url.path)?\(url.query ?? "") HTTP/2.0\" 200"), nginx.accessLog)
    }

    func testTheDefaultPolicyProtectsARedirectToAnotherHost() throws {
        // A plain-HTTP server redirects to the TLS server under a private root:
        // the redirected connection is verified too, and fails.
        let nginx = try fixture()
        let marker = "1k.bin?redirected=\(UUID().uuidString)"
        let httpsPort = nginx.httpsPort
        server.route("/hop") { _ in
            [.head(status: 302, headers: [("Location", "https://localhost:\(httpsPort)/\(marker)"), ("Content-Length", "0")]), .end]
        }
        let outcome = run(HTTPRequestOperation(request: request("/hop")))
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertTrue([NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot].contains(outcome.error?.code ?? 0),
                      "\(String(describing: outcome.error))")
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertFalse(nginx.accessLog.contains(marker))
    }

    func testAPinningPolicyAppliesToTheRedirectedHost() throws {
        let httpsPort = try fixture().httpsPort
        server.route("/hop") { _ in
            [.head(status: 302, headers: [("Location", "https://localhost:\(httpsPort)/1k.bin"), ("Content-Length", "0")]), .end]
        }
        let accepted = HTTPRequestOperation(request: request("/hop"))
        accepted.securityPolicy = policy(.certificate, pinning: [TestPKI.root])
        XCTAssertNil(run(accepted).error)
        XCTAssertEqual(accepted.responseData?.count, 1024)
        let rejected = HTTPRequestOperation(request: request("/hop"))
        rejected.securityPolicy = policy(.certificate, pinning: [TestPKI.unrelatedRoot])
        XCTAssertEqual(run(rejected).error?.code, NSURLErrorServerCertificateUntrusted)
    }

    // MARK: A subclass judges, inside the handshake

    /// 2.x code pinned by overriding `evaluateServerTrust(_:forDomain:)`: the
    /// override is asked on the real connection, with default settings too
    /// (no longer left to libcurl's standard verification), without a
    /// `copy(with:)` override, and a refusal sends nothing.
    func testASubclassOverrideJudgesTheRealConnection() throws {
        let refusing = DecidingSecurityPolicy(accept: false)
        assertRejected(try fetch(policy: refusing))
        XCTAssertGreaterThan(refusing.asked.value, 0, "the override was asked")

        // Accepting a chain the settings alone would refuse (a private root).
        let accepting = DecidingSecurityPolicy(accept: true)
        assertAccepted(try fetch(policy: accepting))
        XCTAssertGreaterThan(accepting.asked.value, 0)
        assertAccepted(try fetch(policy: accepting))

        // Another object of the same class never rides on a connection the
        // first one accepted: its own override refuses.
        let another = DecidingSecurityPolicy(accept: false)
        assertRejected(try fetch(policy: another))
        XCTAssertGreaterThan(another.asked.value, 0)
    }
}
