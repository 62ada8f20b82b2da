import AFNetworking
import XCTest

/// Beyond 2.7: SPKI SHA-256 pins (`sha256/BASE64`) with backup pins.
final class SecurityPolicyPublicKeyHashTests: XCTestCase {
    private func policy(pins: Set<String>) -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [])
        policy.pinnedPublicKeyHashes = pins
        return policy
    }

    func testHashHasOkHttpFormat() throws {
        let pin = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.leaf))
        XCTAssertTrue(pin.hasPrefix("sha256/"))
        XCTAssertEqual(Data(base64Encoded: String(pin.dropFirst(7)))?.count, 32)
        XCTAssertNil(SecurityPolicy.publicKeyHash(forCertificate: Data([0x30, 0x03, 0x02, 0x01])))
    }

    /// The pins equal those the openssl command line computes (SHA-256 over the DER
    /// SubjectPublicKeyInfo), so pins made with curl or OkHttp's tools match ours.
    func testHashesMatchTheOpenSSLCommandLine() throws {
        let certificates = ["leaf": TestPKI.leaf, "intermediate": TestPKI.intermediate, "root": TestPKI.root,
                            "unrelated-leaf": TestPKI.unrelatedLeaf, "self-signed": TestPKI.selfSignedAltName]
        for (name, der) in certificates {
            XCTAssertEqual(SecurityPolicy.publicKeyHash(forCertificate: der), try OpenSSLPin.pin(ofDER: der), name)
        }
    }

    func testAnyPinnedKeyOfTheBuiltChainIsAccepted() throws {
        for certificate in [TestPKI.leaf, TestPKI.intermediate, TestPKI.root] {
            let pin = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: certificate))
            XCTAssertTrue(policy(pins: [pin]).evaluateServerTrust(TestPKI.serverTrust, forDomain: "localhost"))
        }
    }

    func testBackupPinsAreAcceptedAlongsideTheCurrentOne() throws {
        let current = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.leaf))
        let backup = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.unrelatedLeaf))
        let pinned = policy(pins: [backup, current, "sha256/not-base64!", "md5/AAAA"])
        XCTAssertTrue(pinned.evaluateServerTrust(TestPKI.serverTrust, forDomain: "localhost"))
        XCTAssertTrue(pinned.evaluateServerTrust(TestPKI.unrelatedServerTrust, forDomain: "unrelated.test"))
    }

    func testUnmatchedPinsAreRefused() throws {
        let other = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.unrelatedRoot))
        guard case .failure(let error) = policy(pins: [other]).evaluate(TestPKI.serverTrust, forDomain: "localhost") else {
            return XCTFail("expected a refusal")
        }
        XCTAssertEqual(error.reason, .pinMismatch)
    }

    func testHashPinsStillRequireATrustedChain() throws {
        let pin = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.leaf))
        let trust = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate], anchorCertificates: [TestPKI.unrelatedRoot])
        XCTAssertFalse(policy(pins: [pin]).evaluateServerTrust(trust, forDomain: "localhost"))
    }

    func testHashPinsCountAsPinsForSelfSignedDomainValidation() throws {
        let pin = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.selfSignedAltName))
        let pinned = policy(pins: [pin])
        pinned.allowInvalidCertificates = true
        XCTAssertTrue(pinned.evaluateServerTrust(TestPKI.trust(with: TestPKI.selfSignedAltName), forDomain: "foobar.com"))
    }

    func testHashPinsAreIgnoredOutsidePublicKeyMode() throws {
        let pin = try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.leaf))
        let certificateMode = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [])
        certificateMode.pinnedPublicKeyHashes = [pin]
        XCTAssertFalse(certificateMode.evaluateServerTrust(TestPKI.serverTrust, forDomain: "localhost"))
    }
}
