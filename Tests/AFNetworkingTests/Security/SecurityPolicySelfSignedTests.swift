import AFNetworking
import XCTest

/// 2.7 scenarios: self-signed certificates (7).
final class SecurityPolicySelfSignedTests: XCTestCase {
    private var selfSignedTrust: ServerTrust { TestPKI.trust(with: TestPKI.selfSignedAltName) }

    func testThatPolicyWithInvalidCertificatesAllowedAllowsSelfSignedServerTrust() {
        let policy = SecurityPolicy.default()
        policy.allowInvalidCertificates = true
        XCTAssertTrue(policy.evaluateServerTrust(selfSignedTrust, forDomain: nil))
    }

    func testThatPolicyWithInvalidCertificatesAllowedAndValidPinnedCertificatesDoesAllowSelfSignedServerTrustForValidDomainName() {
        let policy = SecurityPolicy(pinningMode: .publicKey)
        policy.allowInvalidCertificates = true
        policy.pinnedCertificates = [TestPKI.selfSignedAltName]
        XCTAssertTrue(policy.evaluateServerTrust(selfSignedTrust, forDomain: "foobar.com"))
    }

    func testThatPolicyWithInvalidCertificatesAllowedAndNoSSLPinningAndDomainNameValidationDisabledDoesAllowSelfSignedServerTrustForValidDomainName() {
        let policy = SecurityPolicy(pinningMode: .none)
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = false
        XCTAssertTrue(policy.evaluateServerTrust(selfSignedTrust, forDomain: "foobar.com"))
    }

    func testThatPolicyWithInvalidCertificatesDisabledDoesNotAllowSelfSignedServerTrust() {
        XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(selfSignedTrust, forDomain: nil))
    }

    func testThatPolicyWithInvalidCertificatesAllowedAndNoPinnedCertificatesAndPublicKeyPinningModeDoesNotAllowSelfSignedServerTrustForValidDomainName() {
        let policy = SecurityPolicy(pinningMode: .publicKey)
        policy.allowInvalidCertificates = true
        policy.pinnedCertificates = []
        XCTAssertFalse(policy.evaluateServerTrust(selfSignedTrust, forDomain: "foobar.com"))
    }

    func testThatPolicyWithInvalidCertificatesAllowedAndValidPinnedCertificatesAndNoPinningModeDoesNotAllowSelfSignedServerTrustForValidDomainName() {
        let policy = SecurityPolicy(pinningMode: .none)
        policy.allowInvalidCertificates = true
        policy.pinnedCertificates = [TestPKI.selfSignedAltName]
        XCTAssertFalse(policy.evaluateServerTrust(selfSignedTrust, forDomain: "foobar.com"))
    }

    func testThatPolicyWithInvalidCertificatesAllowedAndNoValidPinnedCertificatesAndNoPinningModeAndDomainValidationDoesNotAllowSelfSignedServerTrustForValidDomainName() {
        let policy = SecurityPolicy(pinningMode: .none)
        policy.allowInvalidCertificates = true
        policy.pinnedCertificates = []
        XCTAssertFalse(policy.evaluateServerTrust(selfSignedTrust, forDomain: "foobar.com"))
    }
}
