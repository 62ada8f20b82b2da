import AFNetworking
import XCTest

/// 2.7 scenarios: domain name validation (5).
final class SecurityPolicyDomainNameTests: XCTestCase {
    func testThatPolicyWithoutDomainNameValidationAllowsServerTrustWithInvalidDomainName() {
        let policy = SecurityPolicy.default()
        policy.validatesDomainName = false
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.serverTrust, forDomain: "invalid.org"))
    }

    func testThatPolicyWithDomainNameValidationAndSelfSignedCommonNameCertificateAllowsServerTrust() {
        let policy = SecurityPolicy(pinningMode: .publicKey)
        policy.pinnedCertificates = [TestPKI.selfSignedCommonName]
        policy.allowInvalidCertificates = true
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedCommonName), forDomain: "foobar.com"))
    }

    func testThatPolicyWithDomainNameValidationAndSelfSignedDNSCertificateAllowsServerTrust() {
        let policy = SecurityPolicy(pinningMode: .publicKey)
        policy.pinnedCertificates = [TestPKI.selfSignedAltName]
        policy.allowInvalidCertificates = true
        XCTAssertTrue(policy.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedAltName), forDomain: "foobar.com"))
    }

    func testThatPolicyWithDomainNameValidationDoesNotAllowServerTrustWithInvalidDomainName() {
        XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(TestPKI.serverTrust, forDomain: "invalid.org"))
    }

    func testThatPolicyWithDomainNameValidationAndSelfSignedNoDomainCertificateDoesNotAllowServerTrust() {
        let policy = SecurityPolicy(pinningMode: .certificate)
        policy.pinnedCertificates = [TestPKI.selfSignedNoDomains]
        policy.allowInvalidCertificates = true
        XCTAssertFalse(policy.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedNoDomains), forDomain: "foobar.com"))
    }
}
