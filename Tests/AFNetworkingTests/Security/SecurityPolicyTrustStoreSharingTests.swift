@testable import AFNetworking
import Foundation
import XCTest

/// The system store plus a policy's `additionalTrustedCertificates` is made
/// once per anchor set and shared: by the policy's copies (every request
/// evaluates a snapshot of its policy) and by other policies with the same
/// anchors. It is ready before the handshake, which runs on the network
/// thread and must not parse the system bundle there.
final class SecurityPolicyTrustStoreSharingTests: XCTestCase {
    private func policy(anchors: [Data]) -> SecurityPolicy {
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = anchors
        return policy
    }

    func testPoliciesWithTheSameAnchorsShareOneStore() throws {
        let first = policy(anchors: [TestPKI.root, TestPKI.unrelatedRoot])
        let second = policy(anchors: [TestPKI.unrelatedRoot, TestPKI.root])
        let store = try XCTUnwrap(first.extendedStore(adding: first.additionalTrustedCertificates))
        XCTAssertTrue(second.extendedStore(adding: second.additionalTrustedCertificates) === store, "the order of the anchors does not matter")
        let other = policy(anchors: [TestPKI.root])
        XCTAssertFalse(other.extendedStore(adding: other.additionalTrustedCertificates) === store, "another anchor set, another store")
    }

    func testARequestsSnapshotCarriesThePolicysStoreBeforeItsHandshake() throws {
        let policy = policy(anchors: [TestPKI.root])
        let verification = policy.transferVerification
        let snapshot = try XCTUnwrap((verification.evaluator as? HandshakeEvaluator)?.policy)
        XCTAssertFalse(snapshot === policy, "the request evaluates a snapshot")
        let kept = try XCTUnwrap(policy.settings.extendedStore, "made when the request was built, not in the handshake")
        XCTAssertTrue(snapshot.settings.extendedStore === kept, "the snapshot shares the policy's store")
        let later = try XCTUnwrap((policy.transferVerification.evaluator as? HandshakeEvaluator)?.policy)
        XCTAssertTrue(later.settings.extendedStore === kept, "and so does every later request's")
    }

    func testChangingTheAnchorsGivesTheNewSetItsOwnStore() throws {
        let policy = policy(anchors: [TestPKI.root])
        let before = try XCTUnwrap(policy.extendedStore(adding: policy.additionalTrustedCertificates))
        policy.additionalTrustedCertificates = [TestPKI.unrelatedRoot]
        XCTAssertNil(policy.settings.extendedStore, "the kept store goes with the anchors it was made for")
        let after = try XCTUnwrap(policy.extendedStore(adding: policy.additionalTrustedCertificates))
        XCTAssertFalse(after === before)
        // Each store judges by its own anchors: the test PKI's leaf chains to `root` only.
        let leaf = try XCTUnwrap(Certificate(der: TestPKI.leaf))
        let intermediate = try XCTUnwrap(Certificate(der: TestPKI.intermediate))
        let verify = { (store: TrustStore) in
            ChainVerifier.verify(leaf: leaf, intermediates: [intermediate], store: store, at: nil, sslServer: true, host: "localhost")
        }
        XCTAssertNil(verify(before).failure)
        XCTAssertNotNil(verify(after).failure)
    }

    func testTheFingerprintIsWorkedOutOnceAndFollowsEveryChange() throws {
        let policy = policy(anchors: [TestPKI.root])
        let first = policy.handshakeFingerprint
        XCTAssertEqual(policy.settings.fingerprint, first, "kept once worked out")
        let snapshot = try XCTUnwrap((policy.transferVerification.evaluator as? HandshakeEvaluator)?.policy)
        XCTAssertEqual(snapshot.settings.fingerprint, first, "a request's snapshot carries it")
        var seen: Set<String> = [first]
        policy.validatesDomainName = false
        seen.insert(policy.handshakeFingerprint)
        policy.allowInvalidCertificates = true
        seen.insert(policy.handshakeFingerprint)
        policy.pinnedCertificates = [TestPKI.root]
        seen.insert(policy.handshakeFingerprint)
        policy.pinnedPublicKeyHashes = [try XCTUnwrap(SecurityPolicy.publicKeyHash(forCertificate: TestPKI.root))]
        seen.insert(policy.handshakeFingerprint)
        policy.additionalTrustedCertificates = [TestPKI.unrelatedRoot]
        seen.insert(policy.handshakeFingerprint)
        XCTAssertEqual(seen.count, 6, "each change of a setting gives another fingerprint")
        XCTAssertEqual(snapshot.handshakeFingerprint, first, "the snapshot keeps the settings it was taken with")
    }
}
