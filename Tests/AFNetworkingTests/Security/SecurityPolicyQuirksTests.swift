import AFNetworking
import XCTest

/// 2.7 behaviours kept on purpose, pinned down so they do not drift.
final class SecurityPolicyQuirksTests: XCTestCase {
    /// Public-key pinning of a chain the trust store does not trust needs
    /// `allowInvalidCertificates`; once allowed, neither host nor dates are checked.
    func testPublicKeyPinningOfAnUntrustedChainNeedsAllowInvalidCertificates() {
        let trust = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate], anchorCertificates: [TestPKI.unrelatedRoot])
        let policy = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.leaf])
        XCTAssertFalse(policy.evaluateServerTrust(trust, forDomain: "localhost"))
        policy.allowInvalidCertificates = true
        XCTAssertTrue(policy.evaluateServerTrust(trust, forDomain: "localhost"))
        XCTAssertTrue(policy.evaluateServerTrust(trust, forDomain: "elsewhere.test"))

        let expired = ServerTrust(certificates: [TestPKI.expiredLeaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors)
        let pinnedExpired = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.expiredLeaf])
        pinnedExpired.allowInvalidCertificates = true
        XCTAssertTrue(pinnedExpired.evaluateServerTrust(expired, forDomain: "localhost"))
    }

    /// Beyond 2.7: with invalid certificates allowed, a pinned key above the
    /// leaf counts only when the chain below it is signed by it. A forged leaf
    /// naming the pinned intermediate as its issuer, sent with that
    /// intermediate's certificate, is refused (2.7 accepted it).
    func testAPinnedIssuerKeyDoesNotVouchForALeafItDidNotSign() {
        let policy = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.intermediate])
        policy.allowInvalidCertificates = true
        let genuine = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate], anchorCertificates: [TestPKI.unrelatedRoot])
        XCTAssertTrue(policy.evaluateServerTrust(genuine, forDomain: "localhost"))
        let forged = ServerTrust(certificates: [TestPKI.forgedLeaf, TestPKI.intermediate], anchorCertificates: [TestPKI.unrelatedRoot])
        XCTAssertFalse(policy.evaluateServerTrust(forged, forDomain: "localhost"))
        XCTAssertFalse(policy.evaluateServerTrust(forged, forDomain: nil))
        // Pinned by the key's hash, the same.
        let hashed = SecurityPolicy(pinningMode: .publicKey)
        hashed.allowInvalidCertificates = true
        hashed.pinnedPublicKeyHashes = Set([SecurityPolicy.publicKeyHash(forCertificate: TestPKI.intermediate)].compactMap { $0 })
        XCTAssertEqual(hashed.pinnedPublicKeyHashes.count, 1)
        XCTAssertTrue(hashed.evaluateServerTrust(genuine, forDomain: "localhost"))
        XCTAssertFalse(hashed.evaluateServerTrust(forged, forDomain: "localhost"))
        // The forged leaf's own key pinned: the handshake proves the server holds it.
        let leafPinned = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.forgedLeaf])
        leafPinned.allowInvalidCertificates = true
        XCTAssertTrue(leafPinned.evaluateServerTrust(forged, forDomain: "localhost"))
    }

    /// Certificate pinning re-verifies against the pins, so host and dates still count.
    func testCertificatePinningStillChecksHostAndDatesWhenInvalidCertificatesAreAllowed() {
        let expired = ServerTrust(certificates: [TestPKI.expiredLeaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors)
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.expiredLeaf])
        policy.allowInvalidCertificates = true
        XCTAssertFalse(policy.evaluateServerTrust(expired, forDomain: "localhost"))

        let pinnedLeaf = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.leaf])
        pinnedLeaf.allowInvalidCertificates = true
        XCTAssertFalse(pinnedLeaf.evaluateServerTrust(TestPKI.serverTrust, forDomain: "elsewhere.test"))
    }

    /// A pinned leaf is enough of an anchor in certificate mode, even when the
    /// server omits its intermediate and the store does not know the root.
    func testPinnedLeafActsAsAnchorWhenInvalidCertificatesAreAllowed() {
        let trust = ServerTrust(certificates: [TestPKI.leaf], anchorCertificates: [TestPKI.unrelatedRoot])
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.leaf])
        XCTAssertFalse(policy.evaluateServerTrust(trust, forDomain: "localhost"))
        policy.allowInvalidCertificates = true
        XCTAssertTrue(policy.evaluateServerTrust(trust, forDomain: "localhost"))
    }

    /// No domain means no host check, even with `validatesDomainName`.
    func testNilDomainSkipsTheHostCheck() {
        let trust = ServerTrust(certificates: [TestPKI.wrongHostLeaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors)
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(trust, forDomain: nil))
    }

    /// Duplicate pinned certificates are dropped, first occurrence kept (2.7's NSOrderedSet).
    func testPinnedCertificatesAreDeduplicated() {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.leaf, TestPKI.root, TestPKI.leaf])
        XCTAssertEqual(policy.pinnedCertificates, [TestPKI.leaf, TestPKI.root])
        policy.pinnedCertificates = [TestPKI.root, TestPKI.root]
        XCTAssertEqual(policy.pinnedCertificates, [TestPKI.root])
    }
}
