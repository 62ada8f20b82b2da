import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

// AFNetworking 2.7.0's AFSecurityPolicyTests, ported against API.md, plus the
// TLS matrix users expect against real servers.
//
// The 48 tests of 2.7 already have same-named equivalents in Security/
// (SecurityPolicy{DefaultPolicy,PublicKeyPinning,CertificatePinning,DomainName,
// SelfSigned,Coding}Tests). Those build the server trust as the server sends
// it ([leaf, intermediate]) with explicit anchors. The ports below build it the
// way 2.7 built its SecTrust: every certificate of the server's directory
// (leaf, intermediate, root, and a stray root that issued none of them, as
// 2.7's httpbin.org directory held AddTrust's), judged against the *system*
// trust store (`anchorCertificates: nil`, the store pointed at the test roots
// with SSL_CERT_FILE) — and again with explicit anchors.

// MARK: - 2.7's scenarios, with 2.7's trust shape

/// One scenario of 2.7's AFSecurityPolicyTests: how the test made its policy,
/// what it set, the trust and domain it evaluated, and 2.7's answer.
private struct Scenario27 {
    /// How 2.7 made the policy: `+defaultPolicy` or `+policyWithPinningMode:`.
    enum Made { case defaultPolicy, pinningMode(SSLPinningMode) }
    /// The trust 2.7 evaluated: its httpbin.org directory, its adn.net directory, or one certificate alone.
    enum Trust { case httpbin, adn, alone(Data) }

    /// The 2.7 test method this row ports.
    let test: String
    let made: Made
    /// What 2.7 set `pinnedCertificates` to; nil: left as `made` made them.
    var pins: [Data]? = nil
    var allowInvalidCertificates = false
    var validatesDomainName = true
    let trust: Trust
    let domain: String?
    let accepted: Bool

    func makePolicy() -> SecurityPolicy {
        let policy: SecurityPolicy
        switch made {
        case .defaultPolicy: policy = SecurityPolicy.default()
        case .pinningMode(let mode): policy = SecurityPolicy(pinningMode: mode)
        }
        if let pins { policy.pinnedCertificates = pins }
        policy.allowInvalidCertificates = allowInvalidCertificates
        policy.validatesDomainName = validatesDomainName
        return policy
    }

    /// The trust, with `anchors` (nil: the system store).
    func serverTrust(anchors: [Data]?) -> ServerTrust {
        switch trust {
        case .httpbin:
            // Leaf, its CA, the root, and a root that issued none of them.
            return ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate, TestPKI.root, TestPKI.unrelatedRoot],
                               anchorCertificates: anchors)
        case .adn:
            return ServerTrust(certificates: [TestPKI.unrelatedLeaf, TestPKI.unrelatedRoot], anchorCertificates: anchors)
        case .alone(let certificate):
            return ServerTrust(certificates: [certificate], anchorCertificates: anchors)
        }
    }
}

/// 2.7's scenarios (httpbin.org → `localhost` under `TestPKI.root`, adn.net →
/// `unrelated.test` under `TestPKI.unrelatedRoot`), each evaluated against the
/// system store and against explicit anchors, plus 2.7's copy and archive
/// tests with the pins `init(pinningMode:)` reads from the main bundle.
final class SecurityPolicyPort27Tests: XCTestCase {
    private var savedEnvironment: [String: String?] = [:]
    private var storeDirectory: URL?

    /// Points OpenSSL's default store at the two test roots only (as if they
    /// were the system's), for `anchorCertificates: nil`.
    override func setUpWithError() throws {
        for name in ["SSL_CERT_FILE", "SSL_CERT_DIR"] {
            savedEnvironment[name] = getenv(name).map { String(cString: $0) }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-port27-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storeDirectory = directory
        let bundle = directory.appendingPathComponent("roots.pem")
        try Data(TestPKI.pem(TestPKI.anchors).utf8).write(to: bundle)
        setenv("SSL_CERT_FILE", bundle.path, 1)
        setenv("SSL_CERT_DIR", directory.path, 1)
    }

    override func tearDown() {
        for (name, value) in savedEnvironment {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        if let storeDirectory { try? FileManager.default.removeItem(at: storeDirectory) }
        super.tearDown()
    }

    private func check(_ scenarios: [Scenario27], file: StaticString = #filePath, line: UInt = #line) {
        for (label, anchors) in [("system store", nil), ("explicit anchors", TestPKI.anchors)] as [(String, [Data]?)] {
            for scenario in scenarios {
                let policy = scenario.makePolicy()
                let trust = scenario.serverTrust(anchors: anchors)
                XCTAssertEqual(policy.evaluateServerTrust(trust, forDomain: scenario.domain), scenario.accepted,
                               "\(scenario.test) (\(label))", file: file, line: line)
                let evaluation = policy.evaluate(trust, forDomain: scenario.domain)
                XCTAssertEqual(Self.succeeded(evaluation), scenario.accepted,
                               "\(scenario.test) (\(label)): evaluate(_:forDomain:) disagrees: \(evaluation)", file: file, line: line)
            }
        }
    }

    private static func succeeded(_ result: Result<Void, SecurityPolicyError>) -> Bool {
        if case .success = result { return true }
        return false
    }

    func testDefaultPolicyScenarios() {
        check([
            Scenario27(test: "testDefaultPolicyDoesAllowHTTPBinOrgCertificate",
                       made: .defaultPolicy, trust: .httpbin, domain: nil, accepted: true),
            Scenario27(test: "testDefaultPolicyDoesAllowHTTPBinOrgCertificateForValidDomainName",
                       made: .defaultPolicy, trust: .httpbin, domain: "localhost", accepted: true),
            Scenario27(test: "testDefaultPolicyDoesNotAllowInvalidCertificate",
                       made: .defaultPolicy, trust: .alone(TestPKI.selfSignedNoDomains), domain: nil, accepted: false),
            Scenario27(test: "testDefaultPolicyDoesNotAllowCertificateWithInvalidDomainName",
                       made: .defaultPolicy, trust: .httpbin, domain: "apple.com", accepted: false),
        ])
    }

    /// The eleven evaluations 2.7 runs in both pinning modes; `entireChain` is
    /// what its "entire certificate chain" test pinned in that mode.
    private func pinningScenarios(_ mode: SSLPinningMode, _ prefix: String, entireChain: [Data]) -> [Scenario27] {
        let made = Scenario27.Made.pinningMode(mode)
        return [
            Scenario27(test: "\(prefix)AllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinned",
                       made: made, pins: [TestPKI.leaf], trust: .httpbin, domain: nil, accepted: true),
            Scenario27(test: "\(prefix)AllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediate1CertificatePinned",
                       made: made, pins: [TestPKI.intermediate], trust: .httpbin, domain: nil, accepted: true),
            // 2.7 pinned its root here too (DST Root CA X3 was the second CA of its chain).
            Scenario27(test: "\(prefix)AllowsHTTPBinOrgServerTrustWithHTTPBinOrgIntermediate2CertificatePinned",
                       made: made, pins: [TestPKI.root], trust: .httpbin, domain: nil, accepted: true),
            Scenario27(test: "\(prefix)AllowsHTTPBinOrgServerTrustWithHTTPBinOrgRootCertificatePinned",
                       made: made, pins: [TestPKI.root], trust: .httpbin, domain: nil, accepted: true),
            Scenario27(test: "\(prefix)AllowsHTTPBinOrgServerTrustWithEntireCertificateChainPinned",
                       made: made, pins: entireChain, trust: .httpbin, domain: nil, accepted: true),
            Scenario27(test: "\(prefix)AllowsHTTPBirnOrgServerTrustWithHTTPbinOrgPinnedCertificateAndAdditionalPinnedCertificates",
                       made: made, pins: [TestPKI.leaf, TestPKI.selfSignedCommonName], trust: .httpbin, domain: nil, accepted: true),
            Scenario27(test: "\(prefix)AllowsHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndValidDomainName",
                       made: made, pins: [TestPKI.leaf], trust: .httpbin, domain: "localhost", accepted: true),
            Scenario27(test: "\(prefix)AndNoPinnedCertificatesDoesNotAllowHTTPBinOrgServerTrust",
                       made: made, pins: [], trust: .httpbin, domain: nil, accepted: false),
            Scenario27(test: "\(prefix)DoesNotAllowADNServerTrustWithHTTPBinOrgPinnedCertificate",
                       made: made, pins: [TestPKI.leaf], trust: .adn, domain: nil, accepted: false),
            Scenario27(test: "\(prefix)DoesNotAllowHTTPBinOrgServerTrustWithHTTPBinOrgLeafCertificatePinnedAndInvalidDomainName",
                       made: made, pins: [TestPKI.leaf], trust: .httpbin, domain: "invaliddomainname.com", accepted: false),
            Scenario27(test: "\(prefix)DoesNotAllowADNServerTrustWithMultipleInvalidPinnedCertificates",
                       made: made, pins: [TestPKI.leaf, TestPKI.selfSignedCommonName], trust: .adn, domain: nil, accepted: false),
        ]
    }

    func testPublicKeyPinningScenarios() {
        check(pinningScenarios(.publicKey, "testPolicyWithPublicKeyPinning",
                               entireChain: [TestPKI.leaf, TestPKI.intermediate, TestPKI.root, TestPKI.unrelatedRoot]))
    }

    func testCertificatePinningScenarios() {
        check(pinningScenarios(.certificate, "testPolicyWithCertificatePinning",
                               entireChain: [TestPKI.leaf, TestPKI.intermediate, TestPKI.root]))
    }

    /// The unrelated chain is itself trusted, so the pinning scenarios that refuse it refuse for the pins alone.
    func testTheADNStandInIsTrustedByItself() {
        for anchors in [nil, TestPKI.anchors] as [[Data]?] {
            let trust = ServerTrust(certificates: [TestPKI.unrelatedLeaf, TestPKI.unrelatedRoot], anchorCertificates: anchors)
            XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(trust, forDomain: "unrelated.test"))
        }
    }

    func testDomainNameValidationScenarios() {
        check([
            Scenario27(test: "testThatPolicyWithoutDomainNameValidationAllowsServerTrustWithInvalidDomainName",
                       made: .defaultPolicy, validatesDomainName: false, trust: .httpbin, domain: "invalid.org", accepted: true),
            Scenario27(test: "testThatPolicyWithDomainNameValidationAndSelfSignedCommonNameCertificateAllowsServerTrust",
                       made: .pinningMode(.publicKey), pins: [TestPKI.selfSignedCommonName], allowInvalidCertificates: true,
                       trust: .alone(TestPKI.selfSignedCommonName), domain: "foobar.com", accepted: true),
            Scenario27(test: "testThatPolicyWithDomainNameValidationAndSelfSignedDNSCertificateAllowsServerTrust",
                       made: .pinningMode(.publicKey), pins: [TestPKI.selfSignedAltName], allowInvalidCertificates: true,
                       trust: .alone(TestPKI.selfSignedAltName), domain: "foobar.com", accepted: true),
            Scenario27(test: "testThatPolicyWithDomainNameValidationDoesNotAllowServerTrustWithInvalidDomainName",
                       made: .defaultPolicy, trust: .httpbin, domain: "invalid.org", accepted: false),
            Scenario27(test: "testThatPolicyWithDomainNameValidationAndSelfSignedNoDomainCertificateDoesNotAllowServerTrust",
                       made: .pinningMode(.certificate), pins: [TestPKI.selfSignedNoDomains], allowInvalidCertificates: true,
                       trust: .alone(TestPKI.selfSignedNoDomains), domain: "foobar.com", accepted: false),
        ])
    }

    func testSelfSignedCertificateScenarios() {
        let selfSigned = Scenario27.Trust.alone(TestPKI.selfSignedAltName)
        check([
            Scenario27(test: "testThatPolicyWithInvalidCertificatesAllowedAllowsSelfSignedServerTrust",
                       made: .defaultPolicy, allowInvalidCertificates: true, trust: selfSigned, domain: nil, accepted: true),
            Scenario27(test: "testThatPolicyWithInvalidCertificatesAllowedAndValidPinnedCertificatesDoesAllowSelfSignedServerTrustForValidDomainName",
                       made: .pinningMode(.publicKey), pins: [TestPKI.selfSignedAltName], allowInvalidCertificates: true,
                       trust: selfSigned, domain: "foobar.com", accepted: true),
            Scenario27(test: "testThatPolicyWithInvalidCertificatesAllowedAndNoSSLPinningAndDomainNameValidationDisabledDoesAllowSelfSignedServerTrustForValidDomainName",
                       made: .pinningMode(.none), allowInvalidCertificates: true, validatesDomainName: false,
                       trust: selfSigned, domain: "foobar.com", accepted: true),
            Scenario27(test: "testThatPolicyWithInvalidCertificatesDisabledDoesNotAllowSelfSignedServerTrust",
                       made: .defaultPolicy, trust: selfSigned, domain: nil, accepted: false),
            Scenario27(test: "testThatPolicyWithInvalidCertificatesAllowedAndNoPinnedCertificatesAndPublicKeyPinningModeDoesNotAllowSelfSignedServerTrustForValidDomainName",
                       made: .pinningMode(.publicKey), pins: [], allowInvalidCertificates: true,
                       trust: selfSigned, domain: "foobar.com", accepted: false),
            Scenario27(test: "testThatPolicyWithInvalidCertificatesAllowedAndValidPinnedCertificatesAndNoPinningModeDoesNotAllowSelfSignedServerTrustForValidDomainName",
                       made: .pinningMode(.none), pins: [TestPKI.selfSignedAltName], allowInvalidCertificates: true,
                       trust: selfSigned, domain: "foobar.com", accepted: false),
            Scenario27(test: "testThatPolicyWithInvalidCertificatesAllowedAndNoValidPinnedCertificatesAndNoPinningModeAndDomainValidationDoesNotAllowSelfSignedServerTrustForValidDomainName",
                       made: .pinningMode(.none), pins: [], allowInvalidCertificates: true,
                       trust: selfSigned, domain: "foobar.com", accepted: false),
        ])
    }

    // MARK: Copying and archiving, with the main bundle's pins (2.7's policies had its bundle's)

    func testThatPolicyWithMainBundlePinsCanBeCopied() throws {
        try withCertificateInMainBundle(TestPKI.leaf) {
            let policy = SecurityPolicy(pinningMode: .certificate)
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false
            XCTAssertTrue(policy.pinnedCertificates?.contains(TestPKI.leaf) ?? false, "init(pinningMode:) read the main bundle")

            let copy = try XCTUnwrap(policy.copy() as? SecurityPolicy)
            XCTAssertFalse(copy === policy)
            XCTAssertNotEqual(copy, policy, "NSObject equality is identity, as in 2.7")
            XCTAssertEqual(copy.allowInvalidCertificates, policy.allowInvalidCertificates)
            XCTAssertEqual(copy.validatesDomainName, policy.validatesDomainName)
            XCTAssertEqual(copy.sslPinningMode, policy.sslPinningMode)
            // 2.7 also asserted the two arrays were distinct objects; Swift arrays are values.
            XCTAssertEqual(copy.pinnedCertificates, policy.pinnedCertificates)
        }
    }

    func testThatPolicyWithMainBundlePinsCanBeEncodedAndDecodedWithoutSecureCodingRequired() throws {
        try withCertificateInMainBundle(TestPKI.leaf) {
            let policy = SecurityPolicy(pinningMode: .certificate)
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false

            // 2.7 used a keyed archiver that did not require secure coding, then decodeObjectOfClass:forKey:.
            let archiver = NSKeyedArchiver(requiringSecureCoding: false)
            archiver.encode(policy, forKey: "policy")
            archiver.finishEncoding()
            let unarchiver = try NSKeyedUnarchiver(forReadingFrom: archiver.encodedData)
            unarchiver.requiresSecureCoding = false
            let decoded = try XCTUnwrap(unarchiver.decodeObject(of: SecurityPolicy.self, forKey: "policy"))

            XCTAssertFalse(decoded === policy)
            XCTAssertEqual(decoded.allowInvalidCertificates, policy.allowInvalidCertificates)
            XCTAssertEqual(decoded.validatesDomainName, policy.validatesDomainName)
            XCTAssertEqual(decoded.sslPinningMode, policy.sslPinningMode)
            XCTAssertEqual(decoded.pinnedCertificates, policy.pinnedCertificates)
            XCTAssertTrue(decoded.pinnedCertificates?.contains(TestPKI.leaf) ?? false)
        }
    }
}

// MARK: - The TLS floor under pinning (evaluation only)

/// API.md: "TLS floor on every connection, whatever the policy: … OpenSSL
/// security level 2 … (RSA and DH keys of 2048 bits or more, no SHA-1 or MD5
/// signature in the chain, a self-signed root's own excepted), also for pins …;
/// a CA:TRUE certificate refused as the server's own unless it is itself the
/// trusted or pinned one. `allowInvalidCertificates` without pinning skips the
/// certificate checks"; Migration.md: "also for … pinned chains". Certificate
/// pinning re-verifies the chain against the pins, so it keeps the floor; the
/// public-key tests below check that public-key pinning with
/// `allowInvalidCertificates` (2.7's way to pin a private CA's key) keeps it too.
final class SecurityPolicyPort27FloorTests: XCTestCase {
    /// This class's own certificates (only their DER is used, so the files go at once).
    private static let material = SharedServers.Lazy<Port27PKI> {
        let pki = try Port27PKI()
        pki.remove()
        return pki
    }

    private func generated() throws -> Port27PKI { try Self.material.get() }

    private func trust(_ leaf: Data) -> ServerTrust {
        ServerTrust(certificates: [leaf, TestPKI.intermediate], anchorCertificates: [TestPKI.root])
    }

    private func publicKeyPinned(_ certificate: Data) -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [certificate])
        policy.allowInvalidCertificates = true
        return policy
    }

    private func certificatePinned(_ certificate: Data) -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [certificate])
        policy.allowInvalidCertificates = true
        return policy
    }

    func testTheGeneratedLeavesAreOtherwiseGood() throws {
        let pki = try generated()
        let trusted = SecurityPolicy.default()
        XCTAssertTrue(trusted.evaluateServerTrust(trust(pki.wildcardLeaf), forDomain: "api.wild.localhost"))
        XCTAssertFalse(trusted.evaluateServerTrust(trust(pki.wildcardLeaf), forDomain: "wild.localhost"))
        XCTAssertFalse(trusted.evaluateServerTrust(trust(pki.wildcardLeaf), forDomain: "a.b.wild.localhost"))
        // Valid 2099–2100: not yet valid now, valid then.
        guard case .failure(let early) = trusted.evaluate(trust(pki.notYetValidLeaf), forDomain: "localhost") else {
            return XCTFail("a certificate valid from 2099 is not valid now")
        }
        XCTAssertEqual(early.reason, .notYetValid)
        let in2099 = ServerTrust(certificates: [pki.notYetValidLeaf, TestPKI.intermediate], anchorCertificates: [TestPKI.root],
                                 verificationDate: Date(timeIntervalSince1970: 4_086_000_000)) // June 2099
        XCTAssertTrue(trusted.evaluateServerTrust(in2099, forDomain: "localhost"))
    }

    func testCertificatePinningKeepsTheFloor() throws {
        let pki = try generated()
        for (name, leaf) in [("RSA-1024", pki.weakKeyLeaf), ("SHA-1", pki.sha1Leaf), ("CA:TRUE leaf", pki.caLeaf)] {
            XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(trust(leaf), forDomain: "localhost"), name)
            XCTAssertFalse(certificatePinned(TestPKI.root).evaluateServerTrust(trust(leaf), forDomain: "localhost"), name)
            XCTAssertFalse(certificatePinned(TestPKI.intermediate).evaluateServerTrust(trust(leaf), forDomain: "localhost"), name)
        }
        // The leaf pinned itself, sent with its issuer: OpenSSL still checks the leaf's key and the issuer's signature on it.
        XCTAssertFalse(certificatePinned(pki.weakKeyLeaf).evaluateServerTrust(trust(pki.weakKeyLeaf), forDomain: "localhost"))
        XCTAssertFalse(certificatePinned(pki.sha1Leaf).evaluateServerTrust(trust(pki.sha1Leaf), forDomain: "localhost"))
    }

    /// API.md: a CA:TRUE certificate is refused as the server's own "unless it
    /// is itself the trusted or pinned one" (and 2.7 had no such rule at all).
    func testACACertificatePinnedOrTrustedItselfIsAcceptedAlone() throws {
        let pki = try generated()
        let alone = ServerTrust(certificates: [pki.caLeaf], anchorCertificates: [TestPKI.root])
        XCTAssertTrue(certificatePinned(pki.caLeaf).evaluateServerTrust(alone, forDomain: "localhost"))
        let trustedItself = ServerTrust(certificates: [pki.caLeaf], anchorCertificates: [pki.caLeaf])
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(trustedItself, forDomain: "localhost"))
    }

    /// When the server also sends the issuer, OpenSSL keeps it above the
    /// directly trusted leaf (chain [leaf, issuer]): the CA-as-leaf rule must
    /// ask whether the leaf itself is trusted or pinned, not count the chain.
    func testACACertificatePinnedOrTrustedItselfIsAcceptedWhenItsIssuerIsSentToo() throws {
        let pki = try generated()
        XCTAssertTrue(certificatePinned(pki.caLeaf).evaluateServerTrust(trust(pki.caLeaf), forDomain: "localhost"))
        let trustedItself = ServerTrust(certificates: [pki.caLeaf, TestPKI.intermediate], anchorCertificates: [pki.caLeaf])
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(trustedItself, forDomain: "localhost"))
    }

    /// Without `allowInvalidCertificates` the chain is verified first, floor included.
    func testPublicKeyPinningOfATrustedChainKeepsTheFloor() throws {
        let pki = try generated()
        for (name, leaf) in [("RSA-1024", pki.weakKeyLeaf), ("SHA-1", pki.sha1Leaf), ("CA:TRUE leaf", pki.caLeaf)] {
            let policy = SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [TestPKI.intermediate])
            XCTAssertFalse(policy.evaluateServerTrust(trust(leaf), forDomain: "localhost"), name)
        }
    }

    // `.publicKey` with allowInvalidCertificates forgives the chain's other
    // failures, never the floor (a weak key or digest, a CA as the leaf).

    func testPublicKeyPinningWithInvalidCertificatesAllowedRefusesAnRSA1024Leaf() throws {
        let pki = try generated()
        XCTAssertFalse(publicKeyPinned(pki.weakKeyLeaf).evaluateServerTrust(trust(pki.weakKeyLeaf), forDomain: "localhost"))
        XCTAssertFalse(publicKeyPinned(TestPKI.intermediate).evaluateServerTrust(trust(pki.weakKeyLeaf), forDomain: "localhost"))
    }

    func testPublicKeyPinningWithInvalidCertificatesAllowedRefusesASHA1SignedLeaf() throws {
        let pki = try generated()
        XCTAssertFalse(publicKeyPinned(pki.sha1Leaf).evaluateServerTrust(trust(pki.sha1Leaf), forDomain: "localhost"))
        XCTAssertFalse(publicKeyPinned(TestPKI.intermediate).evaluateServerTrust(trust(pki.sha1Leaf), forDomain: "localhost"))
    }

    func testPublicKeyPinningOfTheIssuerWithInvalidCertificatesAllowedRefusesACACertificateAsTheLeaf() throws {
        let pki = try generated()
        XCTAssertFalse(publicKeyPinned(TestPKI.intermediate).evaluateServerTrust(trust(pki.caLeaf), forDomain: "localhost"))
    }
}

// MARK: - The TLS matrix against real servers

/// What a request under a policy must come to.
private enum Verdict: Equatable, CustomStringConvertible {
    case accepted
    case refused(SecurityPolicyFailureReason)
    /// Refused, for whatever reason.
    case refusedAnyReason

    var description: String {
        switch self {
        case .accepted: return "accepted"
        case .refused(let reason): return "refused (\(reason.rawValue))"
        case .refusedAnyReason: return "refused"
        }
    }
}

/// One request of the matrix: a policy, the host name the URL uses, the verdict.
private struct MatrixRow {
    let label: String
    var host = "localhost"
    let policy: SecurityPolicy
    let verdict: Verdict
}

/// Each kind of server certificate users meet, served by nginx (or by
/// `openssl s_server` where nginx cannot serve it), and every way to judge it:
/// trusted anchors (the test root as an extra anchor, standing in for the
/// system store), certificate and public-key pins at the leaf, intermediate and
/// root, and `allowInvalidCertificates` with and without `validatesDomainName`.
/// Verdicts follow 2.7's algorithm as API.md keeps it, quirks included (marked).
final class SecurityPolicyTLSMatrixTests: OperationTestCase {
    private static let missingIntermediateServer = SharedServers.Lazy<NginxFixture> {
        try NginxFixture(chain: [TestPKI.directory.appendingPathComponent("leaf-localhost.cer")],
                         key: TestPKI.directory.appendingPathComponent("keys/leaf-localhost.key.pem"))
    }
    private static let expiredServer = SharedServers.Lazy<NginxFixture> {
        try NginxFixture(chain: [TestPKI.directory.appendingPathComponent("expired-leaf.cer"),
                                 TestPKI.directory.appendingPathComponent("intermediate-ca.cer")],
                         key: TestPKI.directory.appendingPathComponent("keys/expired-leaf.key.pem"))
    }
    private static let wrongHostServer = SharedServers.Lazy<NginxFixture> {
        try NginxFixture(chain: [TestPKI.directory.appendingPathComponent("leaf-wronghost.cer"),
                                 TestPKI.directory.appendingPathComponent("intermediate-ca.cer")],
                         key: TestPKI.directory.appendingPathComponent("keys/leaf-wronghost.key.pem"))
    }
    private static let notYetValidServer = SharedServers.Lazy<NginxFixture> {
        let pki = try Port27PKI.shared()
        return try NginxFixture(chain: [pki.der("not-yet-valid"), TestPKI.directory.appendingPathComponent("intermediate-ca.cer")],
                                key: pki.key("not-yet-valid"))
    }
    private static let wildcardServer = SharedServers.Lazy<NginxFixture> {
        let pki = try Port27PKI.shared()
        return try NginxFixture(chain: [pki.der("wildcard"), TestPKI.directory.appendingPathComponent("intermediate-ca.cer")],
                                key: pki.key("wildcard"))
    }

    override class func tearDown() {
        for server in [missingIntermediateServer, expiredServer, wrongHostServer, notYetValidServer, wildcardServer] {
            server.value?.stop()
        }
        Port27PKI.removeShared()
        super.tearDown()
    }

    // MARK: Policies

    /// The default policy with `anchors` trusted as if they were in the system store.
    private func trusted(_ anchors: [Data] = [TestPKI.root], validatesDomainName: Bool = true) -> SecurityPolicy {
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = anchors
        policy.validatesDomainName = validatesDomainName
        return policy
    }

    /// 2.7's pinning: `mode` pinning `certificates`, by default with invalid
    /// (not system-trusted) chains allowed, which a private root needs.
    private func pinned(_ mode: SSLPinningMode, _ certificates: [Data], allowInvalid: Bool = true,
                        validatesDomainName: Bool = true, trusting anchors: [Data] = []) -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: mode, withPinnedCertificates: certificates)
        policy.allowInvalidCertificates = allowInvalid
        policy.validatesDomainName = validatesDomainName
        policy.additionalTrustedCertificates = anchors
        return policy
    }

    /// No pinning, invalid certificates allowed.
    private func permissive(validatesDomainName: Bool) -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .none)
        policy.allowInvalidCertificates = true
        policy.validatesDomainName = validatesDomainName
        return policy
    }

    // MARK: Running

    /// GETs 1k.bin from `server` at `row.host` under `row.policy` and checks the verdict
    /// (and, through nginx's access log, that a refused server received nothing).
    private func check(_ rows: [MatrixRow], on server: NginxFixture, file: StaticString = #filePath, line: UInt = #line) {
        for row in rows {
            let marker = "1k.bin?matrix=\(UUID().uuidString)"
            let url = URL(string: "https://\(row.host):\(server.httpsPort)/\(marker)")!
            let (operation, error) = fetch(url, policy: row.policy)
            let reached = error == nil ? server.logShows(marker) : server.logShows(marker, timeout: 0.2)
            checkVerdict(row, operation: operation, error: error, file: file, line: line)
            if row.verdict == .accepted {
                XCTAssertEqual(operation.responseData?.count, 1024, "\(row.label): body", file: file, line: line)
                XCTAssertTrue(reached, "\(row.label): the request reached nginx", file: file, line: line)
            } else {
                XCTAssertFalse(reached, "\(row.label): a refused server must not receive the request", file: file, line: line)
            }
        }
    }

    /// GETs / from an s_server at `row.host` under `row.policy` and checks the verdict.
    private func check(_ rows: [MatrixRow], on server: Port27TLSServer, file: StaticString = #filePath, line: UInt = #line) {
        for row in rows {
            let (operation, error) = fetch(server.url(host: row.host), policy: row.policy)
            checkVerdict(row, operation: operation, error: error, file: file, line: line)
        }
    }

    private static let certificateErrorCodes = [NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot,
                                                NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid]

    private func fetch(_ url: URL, policy: SecurityPolicy) -> (HTTPRequestOperation, NSError?) {
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        operation.responseSerializer = HTTPResponseSerializer()
        operation.securityPolicy = policy
        return (operation, run(operation).error)
    }

    private func checkVerdict(_ row: MatrixRow, operation: HTTPRequestOperation, error: NSError?, file: StaticString, line: UInt) {
        let label = "\(row.label) @\(row.host), expected \(row.verdict)"
        switch row.verdict {
        case .accepted:
            XCTAssertNil(error, "\(label): \(String(describing: error))", file: file, line: line)
            XCTAssertEqual(operation.response?.statusCode, 200, label, file: file, line: line)
        case .refused(let reason):
            // A policy's own refusal (API.md: NSURLErrorServerCertificateUntrusted, the reason in userInfo).
            XCTAssertEqual(error?.domain, NSURLErrorDomain, "\(label): \(String(describing: error))", file: file, line: line)
            XCTAssertEqual(error?.code, NSURLErrorServerCertificateUntrusted, "\(label): \(String(describing: error))",
                           file: file, line: line)
            XCTAssertEqual(error?.userInfo[AFNetworkingSecurityPolicyFailureReasonErrorKey] as? String, reason.rawValue,
                           "\(label): \(String(describing: error))", file: file, line: line)
            XCTAssertNil(operation.response, "\(label): nothing may be sent to a refused server", file: file, line: line)
        case .refusedAnyReason:
            // libcurl's own verification (the default policy) reports its NSURLErrorServerCertificate… codes.
            XCTAssertEqual(error?.domain, NSURLErrorDomain, "\(label): \(String(describing: error))", file: file, line: line)
            XCTAssertTrue(Self.certificateErrorCodes.contains(error?.code ?? 0), "\(label): \(String(describing: error))",
                          file: file, line: line)
            XCTAssertNil(operation.response, "\(label): nothing may be sent to a refused server", file: file, line: line)
        }
    }

    // MARK: The matrix

    func testValidChain() throws {
        let server = try SharedServers.pkiNginx()
        check([
            MatrixRow(label: "trusted root", policy: trusted(), verdict: .accepted),
            MatrixRow(label: "untrusted root, default policy", policy: SecurityPolicy.default(), verdict: .refusedAnyReason),
            MatrixRow(label: "unrelated root trusted", policy: trusted([TestPKI.unrelatedRoot]), verdict: .refused(.untrustedRoot)),
            MatrixRow(label: "certificate pin: leaf", policy: pinned(.certificate, [TestPKI.leaf]), verdict: .accepted),
            MatrixRow(label: "certificate pin: intermediate", policy: pinned(.certificate, [TestPKI.intermediate]), verdict: .accepted),
            MatrixRow(label: "certificate pin: root", policy: pinned(.certificate, [TestPKI.root]), verdict: .accepted),
            MatrixRow(label: "certificate pin: unrelated root", policy: pinned(.certificate, [TestPKI.unrelatedRoot]),
                      verdict: .refused(.pinMismatch)),
            MatrixRow(label: "public-key pin: leaf", policy: pinned(.publicKey, [TestPKI.leaf]), verdict: .accepted),
            MatrixRow(label: "public-key pin: intermediate", policy: pinned(.publicKey, [TestPKI.intermediate]), verdict: .accepted),
            // 2.7 too: the chain built without the root has no root key (the server does not send it).
            MatrixRow(label: "public-key pin: root (not sent, not trusted)", policy: pinned(.publicKey, [TestPKI.root]),
                      verdict: .refused(.pinMismatch)),
            MatrixRow(label: "public-key pin: root, root trusted", policy: pinned(.publicKey, [TestPKI.root], allowInvalid: false,
                                                                                  trusting: [TestPKI.root]), verdict: .accepted),
            MatrixRow(label: "public-key pin: unrelated leaf", policy: pinned(.publicKey, [TestPKI.unrelatedLeaf]),
                      verdict: .refused(.pinMismatch)),
            MatrixRow(label: "certificate pin: root, invalid not allowed", policy: pinned(.certificate, [TestPKI.root], allowInvalid: false),
                      verdict: .refused(.untrustedRoot)),
            MatrixRow(label: "public-key pin: leaf, invalid not allowed", policy: pinned(.publicKey, [TestPKI.leaf], allowInvalid: false),
                      verdict: .refused(.untrustedRoot)),
            MatrixRow(label: "allow invalid, validate domain", policy: permissive(validatesDomainName: true),
                      verdict: .refused(.domainValidationRequiresPinning)),
            MatrixRow(label: "allow invalid, no domain validation", policy: permissive(validatesDomainName: false), verdict: .accepted),
        ], on: server)
    }

    func testIPAddressSubjectAltName() throws {
        let server = try SharedServers.pkiNginx()
        // The leaf names 127.0.0.1; nginx also listens on 127.0.0.2, which it does not name.
        check([
            MatrixRow(label: "trusted root", host: "127.0.0.1", policy: trusted(), verdict: .accepted),
            MatrixRow(label: "certificate pin: root", host: "127.0.0.1", policy: pinned(.certificate, [TestPKI.root]), verdict: .accepted),
            MatrixRow(label: "trusted root", host: "127.0.0.2", policy: trusted(), verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "trusted root, no domain validation", host: "127.0.0.2", policy: trusted(validatesDomainName: false),
                      verdict: .accepted),
            MatrixRow(label: "certificate pin: root", host: "127.0.0.2", policy: pinned(.certificate, [TestPKI.root]),
                      verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "certificate pin: root, no domain validation", host: "127.0.0.2",
                      policy: pinned(.certificate, [TestPKI.root], validatesDomainName: false), verdict: .accepted),
            // 2.7 quirk (API.md): public-key pinning with invalid certificates allowed checks no host.
            MatrixRow(label: "public-key pin: leaf (quirk)", host: "127.0.0.2", policy: pinned(.publicKey, [TestPKI.leaf]),
                      verdict: .accepted),
        ], on: server)
    }

    func testIPv6AddressSubjectAltName() throws {
        let pki = try Port27PKI.shared()
        let server = try Port27TLSServer(certificate: pki.pem("leaf-localhost"), chain: pki.pem("intermediate"),
                                         key: TestPKI.directory.appendingPathComponent("keys/leaf-localhost.key.pem"), ipv6: true)
        addTeardownBlock { server.stop() }
        check([
            MatrixRow(label: "trusted root", host: "[::1]", policy: trusted(), verdict: .accepted),
            MatrixRow(label: "certificate pin: root", host: "[::1]", policy: pinned(.certificate, [TestPKI.root]), verdict: .accepted),
            MatrixRow(label: "public-key pin: unrelated leaf", host: "[::1]", policy: pinned(.publicKey, [TestPKI.unrelatedLeaf]),
                      verdict: .refused(.pinMismatch)),
        ], on: server)
    }

    func testMissingIntermediate() throws {
        let server = try Self.missingIntermediateServer.get()
        check([
            MatrixRow(label: "trusted root", policy: trusted(), verdict: .refused(.untrustedRoot)),
            MatrixRow(label: "intermediate trusted as an anchor", policy: trusted([TestPKI.intermediate]), verdict: .accepted),
            MatrixRow(label: "certificate pin: leaf", policy: pinned(.certificate, [TestPKI.leaf]), verdict: .accepted),
            MatrixRow(label: "certificate pin: intermediate", policy: pinned(.certificate, [TestPKI.intermediate]), verdict: .accepted),
            MatrixRow(label: "certificate pin: root", policy: pinned(.certificate, [TestPKI.root]), verdict: .refused(.pinMismatch)),
            MatrixRow(label: "public-key pin: leaf", policy: pinned(.publicKey, [TestPKI.leaf]), verdict: .accepted),
            MatrixRow(label: "public-key pin: intermediate", policy: pinned(.publicKey, [TestPKI.intermediate]),
                      verdict: .refused(.pinMismatch)),
            MatrixRow(label: "public-key pin: root", policy: pinned(.publicKey, [TestPKI.root]), verdict: .refused(.pinMismatch)),
            MatrixRow(label: "public-key pin: root, root trusted", policy: pinned(.publicKey, [TestPKI.root], allowInvalid: false,
                                                                                  trusting: [TestPKI.root]),
                      verdict: .refused(.untrustedRoot)),
            MatrixRow(label: "allow invalid, validate domain", policy: permissive(validatesDomainName: true),
                      verdict: .refused(.domainValidationRequiresPinning)),
            MatrixRow(label: "allow invalid, no domain validation", policy: permissive(validatesDomainName: false), verdict: .accepted),
        ], on: server)
    }

    /// The rows of a leaf outside its validity period (`reason`) whose own certificate is `leaf`.
    private func outOfDateRows(leaf: Data, reason: SecurityPolicyFailureReason) -> [MatrixRow] {
        [
            MatrixRow(label: "trusted root", policy: trusted(), verdict: .refused(reason)),
            MatrixRow(label: "trusted root, no domain validation", policy: trusted(validatesDomainName: false), verdict: .refused(reason)),
            MatrixRow(label: "certificate pin: leaf", policy: pinned(.certificate, [leaf]), verdict: .refused(reason)),
            MatrixRow(label: "certificate pin: intermediate", policy: pinned(.certificate, [TestPKI.intermediate]), verdict: .refused(reason)),
            MatrixRow(label: "certificate pin: root", policy: pinned(.certificate, [TestPKI.root]), verdict: .refused(reason)),
            // 2.7 quirk (API.md): public-key pinning with invalid certificates allowed checks no dates.
            MatrixRow(label: "public-key pin: leaf (quirk)", policy: pinned(.publicKey, [leaf]), verdict: .accepted),
            MatrixRow(label: "public-key pin: intermediate (quirk)", policy: pinned(.publicKey, [TestPKI.intermediate]), verdict: .accepted),
            MatrixRow(label: "public-key pin: root, root trusted", policy: pinned(.publicKey, [TestPKI.root], allowInvalid: false,
                                                                                  trusting: [TestPKI.root]),
                      verdict: .refused(reason)),
            MatrixRow(label: "allow invalid, validate domain", policy: permissive(validatesDomainName: true),
                      verdict: .refused(.domainValidationRequiresPinning)),
            MatrixRow(label: "allow invalid, no domain validation", policy: permissive(validatesDomainName: false), verdict: .accepted),
        ]
    }

    func testExpiredLeaf() throws {
        check(outOfDateRows(leaf: TestPKI.expiredLeaf, reason: .expired), on: try Self.expiredServer.get())
    }

    func testNotYetValidLeaf() throws {
        let pki = try Port27PKI.shared()
        check(outOfDateRows(leaf: pki.notYetValidLeaf, reason: .notYetValid), on: try Self.notYetValidServer.get())
    }

    func testWrongHost() throws {
        let server = try Self.wrongHostServer.get()
        check([
            MatrixRow(label: "trusted root", policy: trusted(), verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "trusted root, no domain validation", policy: trusted(validatesDomainName: false), verdict: .accepted),
            MatrixRow(label: "certificate pin: leaf", policy: pinned(.certificate, [TestPKI.wrongHostLeaf]),
                      verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "certificate pin: root", policy: pinned(.certificate, [TestPKI.root]), verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "certificate pin: root, no domain validation",
                      policy: pinned(.certificate, [TestPKI.root], validatesDomainName: false), verdict: .accepted),
            // 2.7 quirk (API.md): public-key pinning with invalid certificates allowed checks no host.
            MatrixRow(label: "public-key pin: leaf (quirk)", policy: pinned(.publicKey, [TestPKI.wrongHostLeaf]), verdict: .accepted),
            MatrixRow(label: "public-key pin: root, root trusted", policy: pinned(.publicKey, [TestPKI.root], allowInvalid: false,
                                                                                  trusting: [TestPKI.root]),
                      verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "allow invalid, validate domain", policy: permissive(validatesDomainName: true),
                      verdict: .refused(.domainValidationRequiresPinning)),
            MatrixRow(label: "allow invalid, no domain validation", policy: permissive(validatesDomainName: false), verdict: .accepted),
        ], on: server)
    }

    func testWildcardSubjectAltName() throws {
        let pki = try Port27PKI.shared()
        let server = try Self.wildcardServer.get()
        // libcurl resolves every *.localhost name to the loopback address.
        check([
            MatrixRow(label: "trusted root", host: "api.wild.localhost", policy: trusted(), verdict: .accepted),
            MatrixRow(label: "certificate pin: root", host: "api.wild.localhost", policy: pinned(.certificate, [TestPKI.root]),
                      verdict: .accepted),
            MatrixRow(label: "certificate pin: leaf", host: "api.wild.localhost", policy: pinned(.certificate, [pki.wildcardLeaf]),
                      verdict: .accepted),
            MatrixRow(label: "trusted root (the wildcard's parent)", host: "wild.localhost", policy: trusted(),
                      verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "trusted root (two labels deep)", host: "a.b.wild.localhost", policy: trusted(),
                      verdict: .refused(.hostnameMismatch)),
            MatrixRow(label: "certificate pin: leaf (the wildcard's parent)", host: "wild.localhost",
                      policy: pinned(.certificate, [pki.wildcardLeaf]), verdict: .refused(.hostnameMismatch)),
        ], on: server)
    }

    func testSelfSignedLeaf() throws {
        let server = try SharedServers.nginx()
        let certificate = try XCTUnwrap(ModernSupport.derCertificates(fromPEMFile: server.certificatePath).first)
        check([
            MatrixRow(label: "the test root trusted, not this certificate", policy: trusted(), verdict: .refused(.untrustedRoot)),
            MatrixRow(label: "itself trusted", policy: trusted([certificate]), verdict: .accepted),
            MatrixRow(label: "certificate pin", policy: pinned(.certificate, [certificate]), verdict: .accepted),
            MatrixRow(label: "public-key pin", policy: pinned(.publicKey, [certificate]), verdict: .accepted),
            MatrixRow(label: "certificate pin, invalid not allowed", policy: pinned(.certificate, [certificate], allowInvalid: false),
                      verdict: .refused(.untrustedRoot)),
            MatrixRow(label: "certificate pin", host: "127.0.0.2", policy: pinned(.certificate, [certificate]),
                      verdict: .refused(.hostnameMismatch)),
            // 2.7 quirk (API.md): public-key pinning with invalid certificates allowed checks no host.
            MatrixRow(label: "public-key pin (quirk)", host: "127.0.0.2", policy: pinned(.publicKey, [certificate]), verdict: .accepted),
            MatrixRow(label: "allow invalid, validate domain", policy: permissive(validatesDomainName: true),
                      verdict: .refused(.domainValidationRequiresPinning)),
            MatrixRow(label: "allow invalid, no domain validation", policy: permissive(validatesDomainName: false), verdict: .accepted),
        ], on: server)
    }

    // MARK: The floor under pinning, on a real connection

    /// A server under the floor (its own security level 0), judged by policies that keep the floor.
    private func weakServer(_ name: String) throws -> Port27TLSServer {
        let pki = try Port27PKI.shared()
        let server = try Port27TLSServer(certificate: pki.pem(name), chain: pki.pem("intermediate"), key: pki.key(name),
                                         lowSecurity: true)
        addTeardownBlock { server.stop() }
        return server
    }

    func testWeakLeavesAreRefusedByTrustAndCertificatePins() throws {
        let pki = try Port27PKI.shared()
        for (name, leaf) in [("weak-key", pki.weakKeyLeaf), ("sha1", pki.sha1Leaf)] {
            let server = try weakServer(name)
            check([
                MatrixRow(label: "\(name): trusted root", policy: trusted(), verdict: .refusedAnyReason),
                MatrixRow(label: "\(name): certificate pin: root", policy: pinned(.certificate, [TestPKI.root]), verdict: .refusedAnyReason),
                MatrixRow(label: "\(name): certificate pin: leaf", policy: pinned(.certificate, [leaf]), verdict: .refusedAnyReason),
                MatrixRow(label: "\(name): public-key pin: intermediate, root trusted",
                          policy: pinned(.publicKey, [TestPKI.intermediate], allowInvalid: false, trusting: [TestPKI.root]),
                          verdict: .refusedAnyReason),
            ], on: server)
        }
    }

    /// The handshake's evaluator replaces OpenSSL's verification, so the
    /// policy's `.publicKey` path with allowInvalidCertificates must keep the
    /// floor itself (see SecurityPolicyPort27FloorTests).
    func testPublicKeyPinningWithInvalidCertificatesAllowedRefusesWeakLeavesInTheHandshake() throws {
        let pki = try Port27PKI.shared()
        for (name, leaf) in [("weak-key", pki.weakKeyLeaf), ("sha1", pki.sha1Leaf)] {
            let server = try weakServer(name)
            check([
                MatrixRow(label: "\(name): public-key pin: leaf", policy: pinned(.publicKey, [leaf]), verdict: .refusedAnyReason),
                MatrixRow(label: "\(name): public-key pin: intermediate", policy: pinned(.publicKey, [TestPKI.intermediate]),
                          verdict: .refusedAnyReason),
            ], on: server)
        }
    }
}

// MARK: - Fixtures

/// Certificates the 2.7 ports need beyond `TestPKI`, issued with the `openssl`
/// command line by `TestPKI`'s intermediate CA (so `TestPKI.root` anchors them),
/// once per test process, in a temporary directory:
/// - `wildcard`: `*.wild.localhost` (libcurl resolves every `*.localhost` name
///   to the loopback address, so a real server can be reached under it);
/// - `not-yet-valid`: localhost and 127.0.0.1, valid only from 2099 to 2100;
/// - `weak-key`: localhost and 127.0.0.1 with an RSA-1024 key (under the floor);
/// - `sha1`: localhost and 127.0.0.1, signed with SHA-1 (under the floor);
/// - `ca-leaf`: localhost and 127.0.0.1, but `basicConstraints=CA:TRUE`.
/// Each has `<name>.cer` (DER), `<name>.pem` and `<name>.key`; the directory
/// also holds `intermediate.pem` and `leaf-localhost.pem` for `openssl s_server`.
final class Port27PKI: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init.

    let directory: URL
    let wildcardLeaf: Data
    let notYetValidLeaf: Data
    let weakKeyLeaf: Data
    let sha1Leaf: Data
    let caLeaf: Data

    /// The DER certificate `<name>.cer`.
    func der(_ name: String) -> URL { directory.appendingPathComponent("\(name).cer") }
    /// The PEM certificate `<name>.pem`.
    func pem(_ name: String) -> URL { directory.appendingPathComponent("\(name).pem") }
    /// The PEM private key `<name>.key`.
    func key(_ name: String) -> URL { directory.appendingPathComponent("\(name).key") }

    static func shared() throws -> Port27PKI { try lazyShared.get() }
    private static let lazyShared = SharedServers.Lazy { try Port27PKI() }

    /// Removes the shared material's files, if they were made. The certificates
    /// already loaded stay usable in memory.
    static func removeShared() { lazyShared.value?.remove() }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// Issues a fresh set (`shared()` is the one the live servers use).
    init() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("afn-port27-pki-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        let made: [String: Data]
        do {
            made = try Port27PKI.generate(in: base)
        } catch {
            try? FileManager.default.removeItem(at: base)
            throw error
        }
        directory = base
        wildcardLeaf = made["wildcard"] ?? Data()
        notYetValidLeaf = made["not-yet-valid"] ?? Data()
        weakKeyLeaf = made["weak-key"] ?? Data()
        sha1Leaf = made["sha1"] ?? Data()
        caLeaf = made["ca-leaf"] ?? Data()
    }

    /// Issues every certificate into `base`; returns the DER of each, by name.
    private static func generate(in base: URL) throws -> [String: Data] {
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        func path(_ name: String) -> String { base.appendingPathComponent(name).path }
        func run(_ arguments: [String]) throws {
            let status = try Fixtures.run(openssl, arguments)
            guard status == 0 else {
                throw NSError(domain: "Port27PKI", code: Int(status), userInfo: [
                    NSLocalizedDescriptionKey: "openssl \(arguments.joined(separator: " ")) exited with \(status)",
                ])
            }
        }
        let issuerCertificate = TestPKI.directory.appendingPathComponent("intermediate-ca.cer").path
        let issuerKey = TestPKI.directory.appendingPathComponent("keys/intermediate-ca.key.pem").path
        let serverExtensions = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
                                "extendedKeyUsage=serverAuth"]
        let loopbackNames = "subjectAltName=DNS:localhost,IP:127.0.0.1"

        /// A new key (EC P-256, or RSA of `rsaBits`) and a request for it.
        func request(_ name: String, rsaBits: Int? = nil) throws {
            if let rsaBits {
                try run(["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:\(rsaBits)", "-out", path("\(name).key")])
            } else {
                try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", path("\(name).key")])
            }
            try run(["req", "-new", "-key", path("\(name).key"), "-subj", "/CN=\(name)", "-out", path("\(name).csr")])
        }

        /// A certificate for a new key, signed by the intermediate now.
        func issue(_ name: String, rsaBits: Int? = nil, digest: String = "sha256", extensions: [String]) throws {
            try request(name, rsaBits: rsaBits)
            try (["[v3]"] + extensions).joined(separator: "\n").appending("\n")
                .write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
            try run(["x509", "-req", "-in", path("\(name).csr"), "-CA", issuerCertificate, "-CAform", "DER", "-CAkey", issuerKey,
                     "-set_serial", "0x" + String(UInt64.random(in: 1...UInt64.max), radix: 16), "-days", "3650",
                     "-\(digest)", "-extfile", path("\(name).ext"), "-extensions", "v3", "-outform", "DER", "-out", path("\(name).cer")])
        }

        try run(["x509", "-inform", "DER", "-in", issuerCertificate, "-out", path("intermediate.pem")])
        try run(["x509", "-inform", "DER", "-in", TestPKI.directory.appendingPathComponent("leaf-localhost.cer").path,
                 "-out", path("leaf-localhost.pem")])

        try issue("wildcard", extensions: serverExtensions + ["subjectAltName=DNS:*.wild.localhost"])
        try issue("weak-key", rsaBits: 1024, extensions: serverExtensions + [loopbackNames])
        try issue("sha1", digest: "sha1", extensions: serverExtensions + [loopbackNames])
        try issue("ca-leaf", extensions: ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,digitalSignature,keyCertSign",
                                          "extendedKeyUsage=serverAuth", loopbackNames])

        // A start date in the future needs `openssl ca` (OpenSSL 3.0's `x509` only counts days from now).
        try request("not-yet-valid")
        try FileManager.default.createDirectory(atPath: path("ca"), withIntermediateDirectories: true)
        try "".write(toFile: path("ca/index.txt"), atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: path("ca/serial"), atomically: true, encoding: .utf8)
        let configuration = ([
            "[ca]", "default_ca = port27",
            "[port27]", "database = \(path("ca/index.txt"))", "serial = \(path("ca/serial"))", "new_certs_dir = \(path("ca"))",
            "default_md = sha256", "policy = anything", "unique_subject = no",
            "[anything]", "commonName = supplied",
            "[v3]",
        ] + serverExtensions + [loopbackNames]).joined(separator: "\n") + "\n"
        try configuration.write(toFile: path("ca.cnf"), atomically: true, encoding: .utf8)
        try run(["ca", "-batch", "-config", path("ca.cnf"), "-extensions", "v3", "-notext",
                 "-cert", path("intermediate.pem"), "-keyfile", issuerKey,
                 "-startdate", "20990101000000Z", "-enddate", "21000101000000Z",
                 "-in", path("not-yet-valid.csr"), "-out", path("not-yet-valid.pem")])
        try run(["x509", "-in", path("not-yet-valid.pem"), "-outform", "DER", "-out", path("not-yet-valid.cer")])

        var made: [String: Data] = [:]
        for name in ["wildcard", "weak-key", "sha1", "ca-leaf"] {
            try run(["x509", "-inform", "DER", "-in", path("\(name).cer"), "-out", path("\(name).pem")])
        }
        for name in ["wildcard", "not-yet-valid", "weak-key", "sha1", "ca-leaf"] {
            made[name] = try Data(contentsOf: URL(fileURLWithPath: path("\(name).cer")))
        }
        return made
    }
}

/// `openssl s_server -www` on a free loopback port (IPv4 127.0.0.1, or IPv6
/// ::1), answering every GET with its status page. With `lowSecurity` its own
/// security level is 0, so it serves certificates under the package's floor.
final class Port27TLSServer {
    let port: Int
    let ipv6: Bool
    private let process: Process
    /// s_server's stdin, held open: it reads commands from it.
    private let input = Pipe()

    /// `https://host:port/` (`[::1]` for the IPv6 server unless `host` says otherwise).
    func url(host: String? = nil) -> URL {
        URL(string: "https://\(host ?? (ipv6 ? "[::1]" : "127.0.0.1")):\(port)/")!
    }

    init(certificate: URL, chain: URL?, key: URL, ipv6: Bool = false, lowSecurity: Bool = false) throws {
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        if ipv6, !Port27TLSServer.hasIPv6Loopback() { throw XCTSkip("this machine has no IPv6 loopback address") }
        port = Fixtures.freePort()
        self.ipv6 = ipv6
        var arguments = ["s_server", "-accept", ipv6 ? "[::1]:\(port)" : "127.0.0.1:\(port)", "-www",
                         "-cert", certificate.path, "-key", key.path]
        if let chain { arguments += ["-cert_chain", chain.path] }
        if lowSecurity { arguments += ["-cipher", "DEFAULT:@SECLEVEL=0"] }
        process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Fixtures.launch(process)
        let ready = ipv6 ? Port27TLSServer.waitForIPv6Loopback(port) : Fixtures.waitForPort(port)
        guard ready else {
            stop()
            throw NSError(domain: "Fixtures", code: 6, userInfo: [NSLocalizedDescriptionKey: "s_server did not start on port \(port)"])
        }
    }

    func stop() { Fixtures.stop(process) }

    /// Whether a socket can be bound to ::1.
    private static func hasIPv6Loopback() -> Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = loopbackIPv6(port: 0)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
        } == 0
    }

    /// Waits (bounded) until something accepts TCP connections on [::1]:`port`.
    private static func waitForIPv6Loopback(_ port: Int, timeout: TimeInterval = 15) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
            var address = loopbackIPv6(port: port)
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
            close(fd)
            if result == 0 { return true }
            usleep(50_000)
        }
        return false
    }

    private static func loopbackIPv6(port: Int) -> sockaddr_in6 {
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = in_port_t(UInt16(port).bigEndian)
        _ = inet_pton(AF_INET6, "::1", &address.sin6_addr)
        return address
    }
}
