import AFNetworking
import CAFOpenSSL
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The package's TLS floor, one `openssl s_server` per case, on both paths a
/// server certificate can be judged on:
/// - the package's own verifier inside the handshake (the default policy with
///   the test root in `additionalTrustedCertificates`, and a root pin);
/// - libcurl's own verification (the default policy alone, the root trusted
///   through `SSL_CERT_FILE`), exercised through the real `afn` binary, whose
///   environment the test can set.
/// Each refusal must name its reason in `localizedDescription`.
final class TLSFloorTests: OperationTestCase {
    override class func tearDown() {
        TLSFloorMaterial.removeShared()
        super.tearDown()
    }

    private func material() throws -> TLSFloorMaterial { try TLSFloorMaterial.shared() }

    /// A server for `leaf`, stopped when the test ends.
    private func serve(_ leaf: TLSFloorMaterial.Leaf, protocols: [String] = [],
                       cipher: String = "DEFAULT:@SECLEVEL=0") throws -> TLSFloorServer {
        let server = try TLSFloorServer(material(), leaf: leaf, protocols: protocols, cipher: cipher)
        addTeardownBlock { server.stop() }
        return server
    }

    /// A GET through the package's verifier: `policy` (default: the default
    /// policy plus the leaf's anchor as an extra trusted certificate).
    private func viaPackageVerifier(_ server: TLSFloorServer, _ leaf: TLSFloorMaterial.Leaf, host: String = "localhost",
                                    policy: SecurityPolicy? = nil) throws -> (HTTPRequestOperation, NSError?) {
        var request = URLRequest(url: server.url(host: host))
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        operation.responseSerializer = HTTPResponseSerializer()
        if let policy {
            operation.securityPolicy = policy
        } else {
            let extra = SecurityPolicy.default()
            extra.additionalTrustedCertificates = [try material().anchorDER(leaf)]
            operation.securityPolicy = extra
        }
        return (operation, run(operation).error)
    }

    /// `afn get` with the default policy and the leaf's anchor as `SSL_CERT_FILE`: libcurl's own verification.
    private func viaCurl(_ server: TLSFloorServer, _ leaf: TLSFloorMaterial.Leaf, host: String = "localhost") throws -> AFNTool.Run {
        try AFNTool.run(["get", "--max-time", "10", server.url(host: host).absoluteString],
                        timeout: 30, environment: ["SSL_CERT_FILE": try material().anchorPEM(leaf).path])
    }

    /// afn's message without the part it quotes from curl, so only the package's own words count.
    private func ownMessage(_ run: AFNTool.Run) -> String {
        run.stderr.components(separatedBy: " (curl:").first ?? run.stderr
    }

    private func assertRefused(_ outcome: (HTTPRequestOperation, NSError?), naming reason: String, codes: [Int],
                               file: StaticString = #filePath, line: UInt = #line) {
        let error = outcome.1
        XCTAssertEqual(error?.domain, NSURLErrorDomain, "\(String(describing: error))", file: file, line: line)
        XCTAssertTrue(codes.contains(error?.code ?? 0), "\(String(describing: error))", file: file, line: line)
        XCTAssertTrue(error?.localizedDescription.contains(reason) ?? false,
                      "“\(error?.localizedDescription ?? "no error")” does not name “\(reason)”", file: file, line: line)
        XCTAssertNil(outcome.0.response, "nothing may be sent to a refused server", file: file, line: line)
    }

    private func assertRefused(_ run: AFNTool.Run, naming reason: String, status: Int32 = 60,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(run.status, status, run.stderr, file: file, line: line)
        XCTAssertTrue(run.stdout.isEmpty, file: file, line: line)
        XCTAssertTrue(ownMessage(run).contains(reason), "“\(run.stderr)” does not name “\(reason)”", file: file, line: line)
    }

    /// 2.7's way to trust a private root: pin it (certificate mode) and allow "invalid" (not system-trusted) chains.
    private func rootPinned() throws -> SecurityPolicy {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [try material().rootDER])
        policy.allowInvalidCertificates = true
        return policy
    }

    private let untrusted = [NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot,
                             NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateNotYetValid]

    // MARK: - The control

    func testAGoodCertificatePassesBothPaths() throws {
        let server = try serve(.good)
        let (operation, error) = try viaPackageVerifier(server, .good)
        XCTAssertNil(error)
        XCTAssertEqual(operation.response?.statusCode, 200)
        let run = try viaCurl(server, .good)
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertTrue(run.output.contains("s_server"), run.output)
    }

    // MARK: - Weak certificates (security level 2)

    func testASHA1SignedLeafIsRefusedOnBothPaths() throws {
        let server = try serve(.sha1)
        assertRefused(try viaPackageVerifier(server, .sha1), naming: "weak digest (SHA-1", codes: untrusted)
        assertRefused(try viaPackageVerifier(server, .sha1, policy: rootPinned()), naming: "weak digest (SHA-1", codes: untrusted)
        assertRefused(try viaCurl(server, .sha1), naming: "weak digest (SHA-1")
    }

    func testAnRSA1024LeafIsRefusedOnBothPaths() throws {
        let server = try serve(.rsa1024)
        assertRefused(try viaPackageVerifier(server, .rsa1024), naming: "key is too weak", codes: untrusted)
        assertRefused(try viaPackageVerifier(server, .rsa1024, policy: rootPinned()), naming: "key is too weak", codes: untrusted)
        assertRefused(try viaCurl(server, .rsa1024), naming: "key is too weak")
    }

    // MARK: - TLS 1.2 floor

    func testATLS10OnlyServerIsRefusedOnBothPaths() throws {
        let server = try serve(.good, protocols: ["-tls1"], cipher: "AES128-SHA:@SECLEVEL=0")
        let reason = "only TLS versions older than 1.2"
        assertRefused(try viaPackageVerifier(server, .good), naming: reason, codes: [NSURLErrorSecureConnectionFailed])
        assertRefused(try viaCurl(server, .good), naming: reason, status: 35)
    }

    func testATLS11OnlyServerIsRefusedOnBothPaths() throws {
        let server = try serve(.good, protocols: ["-tls1_1"], cipher: "AES128-SHA:@SECLEVEL=0")
        let reason = "only TLS versions older than 1.2"
        assertRefused(try viaPackageVerifier(server, .good), naming: reason, codes: [NSURLErrorSecureConnectionFailed])
        assertRefused(try viaCurl(server, .good), naming: reason, status: 35)
    }

    func testTLS12StillWorks() throws {
        let server = try serve(.good, protocols: ["-tls1_2"])
        XCTAssertNil(try viaPackageVerifier(server, .good).1)
        XCTAssertEqual(try viaCurl(server, .good).status, 0)
    }

    // MARK: - Host names: never the subject CN

    func testACommonNameWithoutSubjectAltNameIsRefusedOnBothPaths() throws {
        let server = try serve(.commonNameOnly)
        let reason = "not valid for"
        assertRefused(try viaPackageVerifier(server, .commonNameOnly), naming: reason, codes: untrusted)
        assertRefused(try viaCurl(server, .commonNameOnly), naming: reason)
    }

    func testAnIPAddressInTheCommonNameIsRefusedOnBothPaths() throws {
        let server = try serve(.ipInCommonName)
        let reason = "not valid for"
        assertRefused(try viaPackageVerifier(server, .ipInCommonName, host: "127.0.0.1"), naming: reason, codes: untrusted)
        assertRefused(try viaCurl(server, .ipInCommonName, host: "127.0.0.1"), naming: reason)
    }

    func testAWrongHostIsNamedOnBothPaths() throws {
        let server = try serve(.wrongHost)
        let reason = "not valid for"
        assertRefused(try viaPackageVerifier(server, .wrongHost), naming: reason, codes: untrusted)
        assertRefused(try viaCurl(server, .wrongHost), naming: reason)
    }

    // MARK: - A CA certificate as the server's own

    func testACACertificateAsTheLeafIsRefusedOnBothPaths() throws {
        let server = try serve(.caAsLeaf)
        let reason = "is a CA certificate"
        assertRefused(try viaPackageVerifier(server, .caAsLeaf), naming: reason, codes: untrusted)
        assertRefused(try viaCurl(server, .caAsLeaf), naming: reason)
    }

    func testASelfSignedCACertificateTrustedDirectlyIsStillAccepted() throws {
        // `openssl req -x509` marks CA:TRUE by default; trusted as itself, it is the anchor, not a CA issuing to a server.
        let material = try material()
        let server = try serve(.good)
        let (_, error) = try viaPackageVerifier(server, .good, policy: {
            let policy = SecurityPolicy.default()
            policy.additionalTrustedCertificates = [material.rootDER]
            return policy
        }())
        XCTAssertNil(error)
        let selfSigned = ServerTrust(certificates: [material.rootDER], anchorCertificates: [material.rootDER])
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [material.rootDER])
        policy.validatesDomainName = false
        XCTAssertTrue(policy.evaluateServerTrust(selfSigned, forDomain: nil))
    }

    // MARK: - Every other reason is named too

    func testAnExpiredCertificateIsNamedOnBothPaths() throws {
        let server = try serve(.expired)
        let reason = "has expired"
        assertRefused(try viaPackageVerifier(server, .expired), naming: reason, codes: untrusted)
        assertRefused(try viaCurl(server, .expired), naming: reason)
    }

    func testAClientOnlyExtendedKeyUsageIsNamedOnBothPaths() throws {
        let server = try serve(.clientAuthOnly)
        let reason = "not meant for TLS servers"
        assertRefused(try viaPackageVerifier(server, .clientAuthOnly), naming: reason, codes: untrusted)
        assertRefused(try viaCurl(server, .clientAuthOnly), naming: reason)
    }

    func testANameConstraintsViolationIsNamedOnBothPaths() throws {
        let server = try serve(.outsideNameConstraints)
        let reason = "name constraints"
        assertRefused(try viaPackageVerifier(server, .outsideNameConstraints), naming: reason, codes: untrusted)
        assertRefused(try viaCurl(server, .outsideNameConstraints), naming: reason)
    }

    /// A TLS 1.2 server may not renegotiate a kept-alive connection: the
    /// verification would run again with the callback data of a transfer
    /// that is gone, and a new certificate would skip the host check.
    func testTheFloorRefusesRenegotiation() {
        XCTAssertEqual(cafssl_floor_refuses_renegotiation(), 1)
    }
}
