import AFNetworking
import XCTest

/// 2.7 scenarios: NSCopying and NSSecureCoding (2).
final class SecurityPolicyCodingTests: XCTestCase {
    private func makePolicy() -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.leaf, TestPKI.root])
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = false
        return policy
    }

    private func assertSameSettings(_ other: SecurityPolicy?, _ policy: SecurityPolicy,
                                    file: StaticString = #filePath, line: UInt = #line) {
        guard let other else { return XCTFail("no policy", file: file, line: line) }
        XCTAssertFalse(other === policy, file: file, line: line)
        XCTAssertEqual(other.allowInvalidCertificates, policy.allowInvalidCertificates, file: file, line: line)
        XCTAssertEqual(other.validatesDomainName, policy.validatesDomainName, file: file, line: line)
        XCTAssertEqual(other.sslPinningMode, policy.sslPinningMode, file: file, line: line)
        XCTAssertEqual(other.pinnedCertificates, policy.pinnedCertificates, file: file, line: line)
        XCTAssertEqual(other.pinnedPublicKeyHashes, policy.pinnedPublicKeyHashes, file: file, line: line)
    }

    func testThatPolicyCanBeCopied() {
        let policy = makePolicy()
        policy.pinnedPublicKeyHashes = ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]
        let copy = policy.copy() as? SecurityPolicy
        assertSameSettings(copy, policy)
        // The copy is independent and evaluates the same way.
        copy?.pinnedCertificates = []
        XCTAssertEqual(policy.pinnedCertificates, [TestPKI.leaf, TestPKI.root])
    }

    func testThatPolicyCanBeEncodedAndDecoded() throws {
        let policy = makePolicy()
        policy.pinnedPublicKeyHashes = ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]
        let archiver = NSKeyedArchiver(requiringSecureCoding: true)
        archiver.encode(policy, forKey: "policy")
        archiver.finishEncoding()

        let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
        unarchiver.requiresSecureCoding = true
        let decoded = unarchiver.decodeObject(of: SecurityPolicy.self, forKey: "policy")
        assertSameSettings(decoded, policy)
        XCTAssertTrue(SecurityPolicy.supportsSecureCoding)
    }

    func testDefaultPolicyWithoutPinnedCertificatesRoundTrips() throws {
        let archive = try NSKeyedArchiver.archivedData(withRootObject: SecurityPolicy.default(), requiringSecureCoding: true)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: SecurityPolicy.self, from: archive))
        XCTAssertEqual(restored.sslPinningMode, .none)
        XCTAssertTrue(restored.validatesDomainName)
        XCTAssertFalse(restored.allowInvalidCertificates)
    }
}
