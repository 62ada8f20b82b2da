import AFNetworking
import XCTest

/// 2.7 scenarios: the default policy (8).
final class SecurityPolicyDefaultPolicyTests: XCTestCase {
    func testDefaultPolicyPinningModeIsSetToNone() {
        XCTAssertEqual(SecurityPolicy.default().sslPinningMode, .none)
    }

    func testDefaultPolicyHasInvalidCertificatesAreDisabledByDefault() {
        XCTAssertFalse(SecurityPolicy.default().allowInvalidCertificates)
    }

    func testDefaultPolicyHasDomainNamesAreValidatedByDefault() {
        XCTAssertTrue(SecurityPolicy.default().validatesDomainName)
    }

    func testDefaultPolicyHasNoPinnedCertificates() {
        XCTAssertEqual(SecurityPolicy.default().pinnedCertificates?.count ?? 0, 0)
    }

    func testDefaultPolicyDoesAllowHTTPBinOrgCertificate() {
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(TestPKI.serverTrust, forDomain: nil))
    }

    func testDefaultPolicyDoesAllowHTTPBinOrgCertificateForValidDomainName() {
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(TestPKI.serverTrust, forDomain: "localhost"))
    }

    func testDefaultPolicyDoesNotAllowInvalidCertificate() {
        let trust = TestPKI.trust(with: TestPKI.selfSignedNoDomains)
        XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(trust, forDomain: nil))
    }

    func testDefaultPolicyDoesNotAllowCertificateWithInvalidDomainName() {
        XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(TestPKI.serverTrust, forDomain: "apple.com"))
    }
}
