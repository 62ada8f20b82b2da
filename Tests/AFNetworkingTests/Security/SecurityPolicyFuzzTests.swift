import AFNetworking
import Foundation
import XCTest

/// Garbage, truncated, mutated and huge DER must be refused cleanly.
/// Seeded and bounded, so a failure reproduces and the test stays fast.
final class SecurityPolicyFuzzTests: XCTestCase {
    /// SplitMix64: tiny, deterministic, good enough for fuzz inputs.
    private struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// Computed, not stored: XCTest keeps test instances alive, which would
    /// show up as leaks under the address sanitizer.
    private var policies: [SecurityPolicy] {
        let allowInvalid = SecurityPolicy.default()
        allowInvalid.allowInvalidCertificates = true
        allowInvalid.validatesDomainName = false
        let publicKey = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.leaf])
        publicKey.allowInvalidCertificates = true
        let certificate = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.leaf])
        certificate.allowInvalidCertificates = true
        return [.default(), allowInvalid, publicKey, certificate]
    }

    private func assertRefusedOrSane(_ chain: [Data], _ label: String) {
        for policy in policies {
            let trust = ServerTrust(certificates: chain, anchorCertificates: TestPKI.anchors)
            if case .failure(let error) = policy.evaluate(trust, forDomain: "localhost") {
                XCTAssertFalse(error.errorDescription?.isEmpty ?? true, label)
            }
        }
    }

    func testRandomGarbageIsMalformed() {
        var random = SeededGenerator(state: 0xAF_2_7)
        for round in 0..<300 {
            let length = Int.random(in: 0...600, using: &random)
            let garbage = Data((0..<length).map { _ in UInt8.random(in: 0...255, using: &random) })
            let result = SecurityPolicy.default().evaluate(ServerTrust(certificates: [garbage], anchorCertificates: TestPKI.anchors),
                                                           forDomain: nil)
            guard case .failure(let error) = result else { return XCTFail("garbage accepted in round \(round)") }
            XCTAssertEqual(error.reason, .malformedCertificate, "round \(round)")
        }
    }

    func testEveryTruncationIsMalformed() {
        let leaf = TestPKI.leaf
        for length in 0..<leaf.count {
            let truncated = leaf.prefix(length)
            let result = SecurityPolicy.default().evaluate(ServerTrust(certificates: [Data(truncated), TestPKI.intermediate],
                                                                       anchorCertificates: TestPKI.anchors), forDomain: "localhost")
            guard case .failure(let error) = result else { return XCTFail("truncation to \(length) accepted") }
            XCTAssertEqual(error.reason, .malformedCertificate, "length \(length)")
        }
        var trailing = leaf
        trailing.append(0)
        XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(
            ServerTrust(certificates: [trailing, TestPKI.intermediate], anchorCertificates: TestPKI.anchors), forDomain: "localhost"))
    }

    func testBitFlipsNeverCrashAndAreNeverAccepted() {
        var random = SeededGenerator(state: 0x5EC_0817)
        let original = TestPKI.leaf
        for round in 0..<400 {
            var mutated = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 0..<mutated.count, using: &random)
                mutated[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            }
            assertRefusedOrSane([mutated, TestPKI.intermediate], "round \(round)")
            // Every byte of a DER certificate is either signed or the signature
            // itself, so no change may ever be accepted by the default policy.
            XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(
                ServerTrust(certificates: [mutated, TestPKI.intermediate], anchorCertificates: TestPKI.anchors),
                forDomain: "localhost"), "round \(round)")
        }
    }

    func testHugeInputsAreRefusedQuickly() {
        let huge = Data(repeating: 0x30, count: 4 * 1024 * 1024)
        var headerOnly = Data([0x30, 0x84, 0x7F, 0xFF, 0xFF, 0xFF]) // claims ~2 GiB
        headerOnly.append(contentsOf: [0x30, 0x82, 0x01, 0x00])
        let longChain = Array(repeating: TestPKI.intermediate, count: 1000)
        for chain in [[huge], [headerOnly], [TestPKI.leaf, huge], longChain] {
            let result = SecurityPolicy.default().evaluate(ServerTrust(certificates: chain, anchorCertificates: TestPKI.anchors),
                                                           forDomain: "localhost")
            guard case .failure(let error) = result else { return XCTFail("huge input accepted") }
            XCTAssertEqual(error.reason, .malformedCertificate)
        }
    }

    func testGarbagePinsAndAnchorsAreIgnored() {
        let policy = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [Data("junk".utf8), Data(), TestPKI.leaf])
        let trust = ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate],
                                anchorCertificates: [Data([0xFF]), TestPKI.root, Data(repeating: 0, count: 10)])
        XCTAssertTrue(policy.evaluateServerTrust(trust, forDomain: "localhost"))
        let garbageOnly = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [Data("junk".utf8)])
        XCTAssertFalse(garbageOnly.evaluateServerTrust(trust, forDomain: "localhost"))
    }
}
