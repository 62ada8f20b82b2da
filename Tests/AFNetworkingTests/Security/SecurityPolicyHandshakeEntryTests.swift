@testable import AFNetworking
import XCTest

/// The internal entry point the TLS handshake calls with the peer's chain.
final class SecurityPolicyHandshakeEntryTests: XCTestCase {
    func testAcceptsTheRightServer() {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.intermediate])
        XCTAssertNil(policy.evaluate(peerChainDER: [TestPKI.leaf, TestPKI.intermediate], host: "localhost",
                                     anchorCertificates: [TestPKI.root]))
        XCTAssertNil(policy.evaluate(peerChainDER: [TestPKI.leaf, TestPKI.intermediate], host: "[::1]",
                                     anchorCertificates: [TestPKI.root]))
    }

    func testRejectsWithAReason() {
        let policy = SecurityPolicy.default()
        let wrongHost = policy.evaluate(peerChainDER: [TestPKI.leaf, TestPKI.intermediate], host: "example.com",
                                        anchorCertificates: [TestPKI.root])
        XCTAssertEqual(wrongHost?.reason, .hostnameMismatch)
        let systemStore = policy.evaluate(peerChainDER: [TestPKI.leaf, TestPKI.intermediate], host: "localhost")
        XCTAssertEqual(systemStore?.reason, .untrustedRoot)
        XCTAssertEqual(policy.evaluate(peerChainDER: [], host: "localhost")?.reason, .malformedCertificate)
    }

    /// The 2.5.1 regression (AFNetworking issues 2590, 2619): the default policy
    /// must never accept an untrusted certificate.
    func testDefaultPolicyNeverAcceptsAnUntrustedCertificate() {
        let policy = SecurityPolicy.default()
        XCTAssertFalse(policy.allowInvalidCertificates)
        XCTAssertTrue(policy.validatesDomainName)
        XCTAssertEqual(policy.sslPinningMode, .none)
        for der in [TestPKI.selfSignedAltName, TestPKI.selfSignedCommonName, TestPKI.selfSignedNoDomains] {
            XCTAssertNotNil(policy.evaluate(peerChainDER: [der], host: "foobar.com"))
        }
    }

    /// libcurl verifies on its own threads: concurrent evaluations of one policy
    /// (and of the shared system store) must agree and not crash.
    func testConcurrentEvaluationsAgree() {
        let policy = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.root])
        let good = [TestPKI.leaf, TestPKI.intermediate]
        let bad = [TestPKI.unrelatedLeaf]
        let anchors = TestPKI.anchors
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 64) { index in
            let accepted = policy.evaluate(peerChainDER: index.isMultiple(of: 2) ? good : bad,
                                           host: index.isMultiple(of: 2) ? "localhost" : "unrelated.test",
                                           anchorCertificates: anchors) == nil
            let systemStore = policy.evaluate(peerChainDER: good, host: "localhost") == nil
            if accepted != index.isMultiple(of: 2) || systemStore {
                mismatches.increment()
            }
        }
        XCTAssertEqual(mismatches.value, 0)
    }
}
