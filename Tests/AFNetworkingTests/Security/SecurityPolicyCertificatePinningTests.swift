import AFNetworking
import XCTest

/// 2.7 scenarios: Certificate pinning (13).
final class SecurityPolicyCertificatePinningTests: XCTestCase {
    private func makePolicy() -> SecurityPolicy {
        SecurityPolicy(pinningMode: .certificate)
    }

    // MARK: Default values

    func testPolicyWithCertificatePinningModeHasPinnedCertificates() {
        XCTAssertNotNil(makePolicy().pinnedCertificates, "init(pinningMode:) never leaves the pins nil")
    }

    func testPolicyWithCertificatePinningModeHasHTTPBinOrgPinnedCertificate() throws {
        try withCertificateInMainBundle(TestPKI.leaf) {
            XCTAssertTrue(makePolicy().pinnedCertificates?.contains(TestPKI.leaf) ?? false)
        }
    }

    // MARK: Accepted

    func testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediate1CertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.intermediate]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    /// 2.7 pinned its second-level CA here; this PKI's second level is the root,
    /// which the server does not send: pinning must see the chain as built.
    func testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediate2CertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.root]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgRootCertificatePinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.root]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithEntireCertificateChainPinned() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf, TestPKI.intermediate, TestPKI.root, TestPKI.unrelatedRoot]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithCertificatePinningAllowsHTTPBirnOrgServerTrustWithHTTPbinOrgPinnedCertificateAndAdditionalPinnedCertificates() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf, TestPKI.selfSignedCommonName]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithCertificatePinningAllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndValidDomainName() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: "localhost"))
    }

    // MARK: Refused

    func testPolicyWithCertificatePinningAndNoPinnedCertificatesDoesNotAllowHTTPBinOrgServerTrust() {
        let policy = makePolicy()
        policy.pinnedCertificates = []
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testPolicyWithCertificatePinningDoesNotAllowADNServerTrustWithHTTPBinOrgPinnedCertificate() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(TestPKI.unrelatedServerTrust, forDomain: nil),
                      "precondition: the unrelated chain itself is trusted")
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.unrelatedServerTrust, forDomain: nil))
    }

    func testPolicyWithCertificatePinningDoesNotAllowHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndInvalidDomainName() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf]
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: "invaliddomainname.com"))
    }

    func testPolicyWithCertificatePinningDoesNotAllowADNServerTrustWithMultipleInvalidPinnedCertificates() {
        let policy = makePolicy()
        policy.pinnedCertificates = [TestPKI.leaf, TestPKI.selfSignedCommonName]
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.unrelatedServerTrust, forDomain: nil))
    }
}
