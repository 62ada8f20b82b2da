@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `SecurityPolicy.additionalTrustedCertificates`: trusting a private CA on
/// top of the system store, with the chain, the host name and the dates still
/// checked, against nginx serving the test PKI's leaf + intermediate (root
/// `TestPKI.root`).
final class PrivateCATests: OperationTestCase {
    /// A GET of pkiNginx's 1k.bin at `host`, with a unique query so the access log tells whether it arrived.
    private func fetch(host: String = "localhost", policy: SecurityPolicy?) throws -> (HTTPRequestOperation, Outcome, reached: Bool) {
        let nginx = try SharedServers.pkiNginx()
        let marker = "1k.bin?private-ca=\(UUID().uuidString)"
        var request = URLRequest(url: URL(string: "https://\(host):\(nginx.httpsPort)/\(marker)")!)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        if let policy { operation.securityPolicy = policy }
        let outcome = run(operation)
        let reached = outcome.error == nil ? nginx.logShows(marker) : nginx.logShows(marker, timeout: 0.2)
        return (operation, outcome, reached)
    }

    private func privateCAPolicy(_ anchors: [Data] = [TestPKI.root]) -> SecurityPolicy {
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = anchors
        return policy
    }

    private func assertAccepted(_ result: (HTTPRequestOperation, Outcome, reached: Bool), file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertNil(result.1.error, file: file, line: line)
        XCTAssertEqual(result.0.responseData?.count, 1024, file: file, line: line)
        XCTAssertTrue(result.reached, file: file, line: line)
    }

    private func assertRejected(_ result: (HTTPRequestOperation, Outcome, reached: Bool), file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.1.error?.domain, NSURLErrorDomain, file: file, line: line)
        XCTAssertTrue([NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateUntrusted].contains(result.1.error?.code ?? 0),
                      "\(String(describing: result.1.error))", file: file, line: line)
        XCTAssertFalse(result.reached, "a rejected server must not receive the request", file: file, line: line)
    }

    // MARK: - Against nginx

    func testThePrivateRootAsAnExtraAnchorIsTrustedWithHostValidation() throws {
        let policy = privateCAPolicy()
        XCTAssertTrue(policy.validatesDomainName, "the host name is still checked")
        XCTAssertFalse(policy.allowInvalidCertificates)
        assertAccepted(try fetch(policy: policy))
    }

    func testWithoutTheExtraAnchorThePrivateRootIsUnknown() throws {
        assertRejected(try fetch(policy: nil))
        assertRejected(try fetch(policy: SecurityPolicy.default()))
    }

    func testAnUnrelatedExtraAnchorDoesNotHelp() throws {
        let result = try fetch(policy: privateCAPolicy([TestPKI.unrelatedRoot]))
        assertRejected(result)
        XCTAssertEqual(result.1.error?.afnetworking.kind, .tlsRejected(.untrustedRoot), "\(String(describing: result.1.error))")
    }

    func testTheHostNameIsStillCheckedAgainstTheLeaf() throws {
        // 127.0.0.2 reaches the same nginx, but the leaf does not name it.
        let result = try fetch(host: "127.0.0.2", policy: privateCAPolicy())
        assertRejected(result)
        XCTAssertEqual(result.1.error?.afnetworking.kind, .tlsRejected(.hostnameMismatch), "\(String(describing: result.1.error))")
        assertAccepted(try fetch(host: "127.0.0.1", policy: privateCAPolicy()))
    }

    func testAPolicyWithExtraAnchorsNeverSharesConnectionsWithTheDefaultPolicy() throws {
        // The accepted request leaves a kept-alive connection; the default
        // policy must make (and refuse) its own, and vice versa.
        assertAccepted(try fetch(policy: privateCAPolicy()))
        assertRejected(try fetch(policy: nil))
        assertAccepted(try fetch(policy: privateCAPolicy()))
        assertRejected(try fetch(policy: privateCAPolicy([TestPKI.unrelatedRoot])))
    }

    func testAManagersPolicyWithExtraAnchors() throws {
        let nginx = try SharedServers.pkiNginx()
        let manager = HTTPRequestOperationManager(baseURL: URL(string: "https://localhost:\(nginx.httpsPort)")!)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.securityPolicy = privateCAPolicy()
        let done = expectation(description: "get")
        let result = Locked<(count: Int?, error: NSError?)>((nil, nil))
        manager.get("1k.bin", parameters: nil, success: { _, object in
            result.value = ((object as? Data)?.count, nil)
            done.fulfill()
        }, failure: { _, error in
            result.value = (nil, error as NSError)
            done.fulfill()
        })
        wait(for: [done], timeout: 15)
        XCTAssertNil(result.value.error)
        XCTAssertEqual(result.value.count, 1024)
    }

    // MARK: - The policy object

    func testTheHandshakeFingerprintTellsThePoliciesApart() {
        let plain = SecurityPolicy.default()
        let extra = privateCAPolicy()
        XCTAssertTrue(plain.isStandardVerification, "the default policy lets OpenSSL verify natively")
        XCTAssertFalse(extra.isStandardVerification, "extra anchors need the policy inside the handshake")
        XCTAssertNotEqual(plain.handshakeFingerprint, extra.handshakeFingerprint)
        XCTAssertNotEqual(extra.handshakeFingerprint, privateCAPolicy([TestPKI.unrelatedRoot]).handshakeFingerprint)
        XCTAssertEqual(extra.handshakeFingerprint, privateCAPolicy().handshakeFingerprint, "the same settings share connections")
        XCTAssertEqual(privateCAPolicy([TestPKI.root, TestPKI.intermediate]).handshakeFingerprint,
                       privateCAPolicy([TestPKI.intermediate, TestPKI.root]).handshakeFingerprint, "the order does not matter")
        XCTAssertNotNil(extra.transferVerification.partition)
        XCTAssertNotEqual(extra.transferVerification.partition, plain.transferVerification.partition)
    }

    func testDuplicatesAreDroppedInOrder() {
        let policy = privateCAPolicy([TestPKI.root, TestPKI.intermediate, TestPKI.root])
        XCTAssertEqual(policy.additionalTrustedCertificates, [TestPKI.root, TestPKI.intermediate])
        XCTAssertTrue(SecurityPolicy.default().additionalTrustedCertificates.isEmpty)
    }

    func testThePolicyArchivesItsExtraAnchors() throws {
        let policy = privateCAPolicy([TestPKI.root, TestPKI.unrelatedRoot])
        let archive = try NSKeyedArchiver.archivedData(withRootObject: policy, requiringSecureCoding: true)
        let restored = try XCTUnwrap(try NSKeyedUnarchiver.unarchivedObject(ofClass: SecurityPolicy.self, from: archive))
        XCTAssertEqual(restored.additionalTrustedCertificates, [TestPKI.root, TestPKI.unrelatedRoot])
        XCTAssertEqual(restored.handshakeFingerprint, policy.handshakeFingerprint)

        // A policy without extra anchors archives (and restores) without them.
        let plainArchive = try NSKeyedArchiver.archivedData(withRootObject: SecurityPolicy.default(), requiringSecureCoding: true)
        let plain = try XCTUnwrap(try NSKeyedUnarchiver.unarchivedObject(ofClass: SecurityPolicy.self, from: plainArchive))
        XCTAssertTrue(plain.additionalTrustedCertificates.isEmpty)
    }

    func testACopyHasTheSameAnchorsAndIsIndependent() throws {
        let policy = privateCAPolicy()
        let copy = try XCTUnwrap(policy.copy() as? SecurityPolicy)
        XCTAssertEqual(copy.additionalTrustedCertificates, [TestPKI.root])
        XCTAssertEqual(copy.handshakeFingerprint, policy.handshakeFingerprint)
        copy.additionalTrustedCertificates = []
        XCTAssertEqual(policy.additionalTrustedCertificates, [TestPKI.root], "changing the copy leaves the original alone")
    }

    func testEvaluationWithExtraAnchorsAgainstTheSystemStore() {
        // Without explicit anchors, a trust is judged against the system store
        // plus the extra anchors; the system store knows nothing of the test PKI.
        let trust = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate])
        XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(trust, forDomain: "localhost"))
        XCTAssertTrue(privateCAPolicy().evaluateServerTrust(trust, forDomain: "localhost"))
        XCTAssertFalse(privateCAPolicy().evaluateServerTrust(trust, forDomain: "example.com"), "the host is checked")
        XCTAssertFalse(privateCAPolicy([TestPKI.unrelatedRoot]).evaluateServerTrust(trust, forDomain: "localhost"))
    }
}
