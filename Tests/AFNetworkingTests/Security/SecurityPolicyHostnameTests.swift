import AFNetworking
import XCTest

/// RFC 9525 host matching: SAN DNS names with a single left-most wildcard,
/// IP SANs for IP literals, never the subject CN.
final class SecurityPolicyHostnameTests: XCTestCase {
    private func accepts(_ leaf: Data, _ host: String, chain: [Data] = [TestPKI.intermediate]) -> Bool {
        SecurityPolicy.default().evaluateServerTrust(
            ServerTrust(certificates: [leaf] + chain, anchorCertificates: TestPKI.anchors), forDomain: host)
    }

    func testIPAddressesMatchIPSANs() {
        XCTAssertTrue(accepts(TestPKI.leaf, "127.0.0.1"))
        XCTAssertTrue(accepts(TestPKI.leaf, "::1"))
        XCTAssertTrue(accepts(TestPKI.leaf, "[::1]"))
        XCTAssertFalse(accepts(TestPKI.leaf, "127.0.0.2"))
        XCTAssertFalse(accepts(TestPKI.leaf, "::2"))
    }

    func testDNSNamesMatchCaseInsensitivelyWithOptionalTrailingDot() {
        XCTAssertTrue(accepts(TestPKI.leaf, "LOCALHOST"))
        XCTAssertTrue(accepts(TestPKI.leaf, "localhost."))
        XCTAssertFalse(accepts(TestPKI.leaf, "localhost.."))
        XCTAssertFalse(accepts(TestPKI.leaf, "localhos"))
        XCTAssertFalse(accepts(TestPKI.leaf, "sub.localhost"))
        XCTAssertFalse(accepts(TestPKI.leaf, ""))
        XCTAssertFalse(accepts(TestPKI.leaf, "localhost\0.evil.test"))
    }

    func testWildcardCoversExactlyOneLeftMostLabel() {
        XCTAssertTrue(accepts(TestPKI.wildcardLeaf, "api.example.test"))
        XCTAssertFalse(accepts(TestPKI.wildcardLeaf, "example.test"))
        XCTAssertFalse(accepts(TestPKI.wildcardLeaf, "a.b.example.test"))
        XCTAssertFalse(accepts(TestPKI.wildcardLeaf, "api.example.testx"))
    }

    func testCommonNameIsNeverUsed() {
        // RFC 9525 6.3 (2.7 and RFC 6125 fell back to the CN without a DNS SAN).
        let cnOnly = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.selfSignedCommonName])
        cnOnly.allowInvalidCertificates = true
        let refusal = cnOnly.evaluate(TestPKI.trust(with: TestPKI.selfSignedCommonName), forDomain: "foobar.com")
        XCTAssertEqual(refusal.failureReason, .hostnameMismatch)
        XCTAssertFalse(cnOnly.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedCommonName), forDomain: "other.com"))
        // Without host validation the pin alone decides, as before.
        cnOnly.validatesDomainName = false
        XCTAssertTrue(cnOnly.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedCommonName), forDomain: "foobar.com"))

        // The wildcard leaf's CN is "*.example.test" too, but its SAN decides:
        // the wrong-host leaf has CN = SAN = wrong.test, so only that name works.
        XCTAssertFalse(accepts(TestPKI.wrongHostLeaf, "localhost"))
    }

    func testSANOnlyCertificateMatchesItsSAN() {
        let sanOnly = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.selfSignedAltName])
        sanOnly.allowInvalidCertificates = true
        XCTAssertTrue(sanOnly.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedAltName), forDomain: "foobar.com"))
        XCTAssertFalse(sanOnly.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedAltName), forDomain: "www.foobar.com"))
    }

    func testIPLiteralNeverMatchesDNSNames() {
        // The IP address must not be matched against DNS SANs or the CN.
        XCTAssertFalse(accepts(TestPKI.wrongHostLeaf, "127.0.0.1"))
    }
}

private extension Result where Success == Void, Failure == SecurityPolicyError {
    /// The refusal's reason, nil when accepted.
    var failureReason: SecurityPolicyFailureReason? {
        if case .failure(let error) = self { return error.reason }
        return nil
    }
}
