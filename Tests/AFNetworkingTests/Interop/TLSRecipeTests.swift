@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The self-signed and private-CA recipes of README.md and the Security
/// article, each run against nginx: the plain fixture serves a self-signed
/// certificate for localhost, the PKI fixture a leaf and intermediate of the
/// private root `TestPKI.root`. The half-recipes newcomers try first (a pin
/// alone, `allowInvalidCertificates` alone) must be refused with an error that
/// names the setting that is missing, on the handshake path and when the
/// policy evaluates the same chain directly.
final class TLSRecipeTests: OperationTestCase {
    // MARK: - The fixtures

    private func selfSignedServer() throws -> (url: URL, certificate: Data) {
        let nginx = try SharedServers.nginx()
        let certificate = try XCTUnwrap(ModernSupport.derCertificates(fromPEMFile: nginx.certificatePath).first)
        return (nginx.httpsURL.appendingPathComponent("1k.bin"), certificate)
    }

    private func privateCAServer() throws -> URL {
        try SharedServers.pkiNginx().httpsURL.appendingPathComponent("1k.bin")
    }

    /// A GET through an operation with `policy`: nil error on success.
    private func fetch(_ url: URL, policy: SecurityPolicy) -> NSError? {
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        operation.securityPolicy = policy
        let outcome = run(operation)
        if outcome.error == nil { XCTAssertEqual(operation.responseData?.count, 1024) }
        return outcome.error
    }

    private func assertRefused(_ error: NSError?, _ reason: SecurityPolicyFailureReason, mentioning phrases: [String],
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(error?.domain, NSURLErrorDomain, "\(String(describing: error))", file: file, line: line)
        XCTAssertEqual(error?.code, NSURLErrorServerCertificateUntrusted, "\(String(describing: error))", file: file, line: line)
        XCTAssertEqual(error?.userInfo[AFNetworkingSecurityPolicyFailureReasonErrorKey] as? String, reason.rawValue,
                       file: file, line: line)
        let description = error?.localizedDescription ?? ""
        for phrase in phrases {
            XCTAssertTrue(description.contains(phrase), "\"\(phrase)\" missing from: \(description)", file: file, line: line)
        }
    }

    // MARK: - A self-signed server (the recipes as the docs write them)

    func testSelfSignedTrustedAsAnExtraAnchor() throws {
        let server = try selfSignedServer()
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [server.certificate]
        XCTAssertNil(fetch(server.url, policy: policy))
    }

    func testSelfSignedPinnedWithInvalidCertificatesAllowed() throws {
        let server = try selfSignedServer()
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [server.certificate])
        policy.allowInvalidCertificates = true
        XCTAssertNil(fetch(server.url, policy: policy))
        // The host name is still checked against the pinned certificate.
        let elsewhere = URL(string: "https://127.0.0.2:\(server.url.port!)/1k.bin")!
        assertRefused(fetch(elsewhere, policy: policy), .hostnameMismatch, mentioning: ["127.0.0.2"])
    }

    func testSelfSignedPinnedAloneSaysWhichSettingIsMissing() throws {
        let server = try selfSignedServer()
        for mode in [SSLPinningMode.certificate, .publicKey] {
            let policy = SecurityPolicy(pinningMode: mode, withPinnedCertificates: [server.certificate])
            let advice = ["additionalTrustedCertificates", "allowInvalidCertificates = true"]
            assertRefused(fetch(server.url, policy: policy), .untrustedRoot, mentioning: advice)
            // The package's own verifier, without a connection, says the same.
            let direct = policy.evaluate(ServerTrust(certificates: [server.certificate]), forDomain: "localhost")
            assertRefused(direct.failure.map { $0.nsError(failingURL: nil) }, .untrustedRoot, mentioning: advice)
        }
    }

    func testInvalidCertificatesAllowedAloneSaysWhichSettingIsMissing() throws {
        let server = try selfSignedServer()
        let policy = SecurityPolicy.default()
        policy.allowInvalidCertificates = true
        let advice = ["pinning mode is .none", "validatesDomainName = false", "additionalTrustedCertificates"]
        assertRefused(fetch(server.url, policy: policy), .domainValidationRequiresPinning, mentioning: advice)
        let direct = policy.evaluate(ServerTrust(certificates: [server.certificate]), forDomain: "localhost")
        assertRefused(direct.failure.map { $0.nsError(failingURL: nil) }, .domainValidationRequiresPinning, mentioning: advice)

        let empty = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [])
        empty.allowInvalidCertificates = true
        assertRefused(fetch(server.url, policy: empty), .domainValidationRequiresPinning, mentioning: ["pinnedCertificates"])
    }

    func testAPinThatDoesNotMatchKeepsThePlainUnknownRootError() throws {
        let server = try selfSignedServer()
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.unrelatedRoot])
        let error = fetch(server.url, policy: policy)
        assertRefused(error, .untrustedRoot, mentioning: [])
        XCTAssertFalse(error?.localizedDescription.contains("allowInvalidCertificates") ?? true,
                       "advice only when the pins would have accepted: \(String(describing: error))")
    }

    // MARK: - A private CA

    func testPrivateCATrustedAsAnExtraAnchor() throws {
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [TestPKI.root]
        XCTAssertNil(fetch(try privateCAServer(), policy: policy))
    }

    func testPrivateCATrustedAndPinned() throws {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.root])
        policy.additionalTrustedCertificates = [TestPKI.root]
        XCTAssertNil(fetch(try privateCAServer(), policy: policy))
    }

    func testPrivateCAPinnedWithInvalidCertificatesAllowed() throws {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.root])
        policy.allowInvalidCertificates = true
        XCTAssertNil(fetch(try privateCAServer(), policy: policy))
    }

    func testPrivateCAPinnedAloneSaysWhichSettingIsMissing() throws {
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [TestPKI.root])
        let advice = ["pinned certificate", "additionalTrustedCertificates", "allowInvalidCertificates = true",
                      "unknown certifying authority"]
        assertRefused(fetch(try privateCAServer(), policy: policy), .untrustedRoot, mentioning: advice)
        let direct = policy.evaluate(ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate]), forDomain: "localhost")
        assertRefused(direct.failure.map { $0.nsError(failingURL: nil) }, .untrustedRoot, mentioning: advice)
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
