import AFNetworking
import XCTest

/// 2.7 scenarios: PublicKey pinning (13).
final class SecurityPolicyPublicKeyPinningTests: XCTestCase {
    private func makePolicy() -> SecurityPolicy {
        SecurityPolicy(pinningMode: .publicKey)
    }

    // MARK: Default values

    func testPolicyWithPublicKeyPinningModeHasPinnedCertificates() {
        XCTAssertNotNil(makePolicy().pinnedCertificates, "init(pinningMode:) never leaves the pins nil")
    }

    func testPolicyWithPublicKeyPinningModeHasHTTPBinOrgPinnedCertificate() throws {
        try withCertificateInMainBundle(TestPKI.leaf) {
            XCTAssertTrue(makePolicy().pinnedCertificates?.contains(TestPKI.leaf) ?? false)
        }
    }

    // MARK: Accepted

    func testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediate1CertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.intermediate]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    /// 2.7 pinned its second-level CA here; this PKI's second level is the root,
    /// which the server does not send: pinning must see the chain as built.
    func testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediate2CertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.root]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgRootCertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.root]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithEntireCertificateChainPinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf, TestPKI.intermediate, TestPKI.root, TestPKI.unrelatedRoot]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithPublicKeyPinningAllowsHTTPBirnOrgServerTrustWithHTTPbinOrgPinnedCertificateAndAdditionalPinnedCertificates() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf, TestPKI.selfSignedCommonName]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithPublicKeyPinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndValidDomainName() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: "localhost"))
    }

    // MARK: Refused

    func testPolicyWithPublicKeyPinningAndNoPinnedCertificatesDoesNotAllowHTTPBinOrgServerTrust() {
        let policy = makePolicy()
        policy.pinnedCertificates = []
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithPublicKeyPinningDoesNotAllowADNServerTrustWithHTTPBinOrgPinnedCertificate() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(TestPKI.unrelatedServerTrust, forDomain: nil),
                      "precondition: the unrelated chain itself is trusted")
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.unrelatedServerTrust, forDomain: nil))
    }

    func testPolicyWithPublicKeyPinningDoesNotAllowHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndInvalidDomainName() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: "invaliddomainname.com"))
    }

    func testPolicyWithPublicKeyPinningDoesNotAllowADNServerTrustWithMultipleInvalidPinnedCertificates() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf, TestPKI.selfSignedCommonName]
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.unrelatedServerTrust, forDomain: nil))
    }
}
