import AFNetworking
import Foundation
import XCTest

/// Beyond 2.7: each refusal says why.
final class SecurityPolicyFailureReasonTests: XCTestCase {
    private func reason(_ policy: SecurityPolicy, _ trust: ServerTrust, _ domain: String?,
                        file: StaticString = #filePath, line: UInt = #line) -> SecurityPolicyFailureReason? {
        switch policy.evaluate(trust, forDomain: domain) {
        case .success: return nil
        case .failure(let error): return error.reason
        }
    }

    func testValidChainHasNoFailure() {
        XCTAssertNil(reason(.default(), TestPKI.serverTrust, "localhost"))
    }

    func testExpiredLeafIsExpired() {
        let trust = ServerTrust(certificates: [TestPKI.expiredLeaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors)
        XCTAssertEqual(reason(.default(), trust, "localhost"), .expired)
    }

    func testVerificationDateBeforeTheIssuerExistedIsNotYetValid() {
        let trust = ServerTrust(certificates: [TestPKI.expiredLeaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors,
                                verificationDate: Date(timeIntervalSince1970: 978_307_200 - 86_400 * 30)) // Dec 2000
        // The intermediate was issued later than that date, so the chain is then "not yet valid".
        XCTAssertEqual(reason(.default(), trust, "localhost"), .notYetValid)
    }

    func testChainIsExpiredAfterItsValidity() {
        let trust = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors,
                                verificationDate: Date(timeIntervalSinceNow: 200 * 365 * 86_400))
        XCTAssertEqual(reason(.default(), trust, "localhost"), .expired)
    }

    func testChainIsNotYetValidBeforeItsValidity() {
        let trust = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors,
                                verificationDate: Date(timeIntervalSince1970: 0))
        XCTAssertEqual(reason(.default(), trust, "localhost"), .notYetValid)
    }

    func testWrongHostIsHostnameMismatch() {
        let trust = ServerTrust(certificates: [TestPKI.wrongHostLeaf, TestPKI.intermediate], anchorCertificates: TestPKI.anchors)
        XCTAssertEqual(reason(.default(), trust, "localhost"), .hostnameMismatch)
        XCTAssertNil(reason(.default(), trust, "wrong.test"))
    }

    func testSelfSignedIsUntrustedRoot() {
        XCTAssertEqual(reason(.default(), TestPKI.trust(with: TestPKI.selfSignedAltName), nil), .untrustedRoot)
    }

    func testMissingIntermediateIsUntrustedRoot() {
        let trust = ServerTrust(certificates: [TestPKI.leaf], anchorCertificates: TestPKI.anchors)
        XCTAssertEqual(reason(.default(), trust, "localhost"), .untrustedRoot)
    }

    func testUnknownRootIsUntrustedRoot() {
        let trust = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate], anchorCertificates: [TestPKI.unrelatedRoot])
        XCTAssertEqual(reason(.default(), trust, "localhost"), .untrustedRoot)
    }

    func testUnpinnedChainIsPinMismatch() {
        let publicKey = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.leaf])
        let certificate = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.leaf])
        XCTAssertEqual(reason(publicKey, TestPKI.unrelatedServerTrust, nil), .pinMismatch)
        XCTAssertEqual(reason(certificate, TestPKI.unrelatedServerTrust, nil), .pinMismatch)
    }

    func testGarbageIsMalformed() {
        let trust = ServerTrust(certificates: [Data("hello".utf8)], anchorCertificates: TestPKI.anchors)
        XCTAssertEqual(reason(.default(), trust, nil), .malformedCertificate)
        XCTAssertEqual(reason(.default(), ServerTrust(certificates: []), nil), .malformedCertificate)
    }

    func testDomainValidationOfUntrustedCertificatesRequiresPinning() {
        let policy = SecurityPolicy.default()
        policy.allowInvalidCertificates = true
        XCTAssertEqual(reason(policy, TestPKI.serverTrust, "localhost"), .domainValidationRequiresPinning)
    }

    func testErrorBridgesToURLErrorServerCertificateUntrusted() throws {
        guard case .failure(let error) = SecurityPolicy.default().evaluate(TestPKI.serverTrust, forDomain: "apple.com") else {
            return XCTFail("expected a refusal")
        }
        let url = try XCTUnwrap(URL(string: "https://apple.com/"))
        let nsError = error.nsError(failingURL: url)
        XCTAssertEqual(nsError.domain, NSURLErrorDomain)
        XCTAssertEqual(nsError.code, NSURLErrorServerCertificateUntrusted)
        XCTAssertEqual(nsError.userInfo[AFNetworkingSecurityPolicyFailureReasonErrorKey] as? String, "hostnameMismatch")
        XCTAssertEqual(nsError.userInfo[NSURLErrorFailingURLErrorKey] as? URL, url)
        let bridged = error as NSError
        XCTAssertEqual(bridged.code, NSURLErrorServerCertificateUntrusted)
    }

    func testOpenSSLCodeIsReported() {
        guard case .failure(let error) = SecurityPolicy.default().evaluate(TestPKI.trust(with: TestPKI.selfSignedAltName),
                                                                          forDomain: nil) else {
            return XCTFail("expected a refusal")
        }
        XCTAssertEqual(error.verifyResult, 18) // X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        XCTAssertFalse(error.detail.isEmpty)
    }
}
