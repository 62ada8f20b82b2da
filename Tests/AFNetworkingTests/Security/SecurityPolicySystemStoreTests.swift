import AFNetworking
import Foundation
import XCTest

/// Without explicit anchors the system store is used, honouring SSL_CERT_FILE / SSL_CERT_DIR.
final class SecurityPolicySystemStoreTests: XCTestCase {
    private var saved: [String: String?] = [:]
    private var temporary: URL?

    override func setUpWithError() throws {
        for name in ["SSL_CERT_FILE", "SSL_CERT_DIR"] {
            saved[name] = getenv(name).map { String(cString: $0) }
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        temporary = directory
    }

    override func tearDown() {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        if let temporary { try? FileManager.default.removeItem(at: temporary) }
    }

    private var chainOnly: ServerTrust { ServerTrust(certificates: [TestPKI.leaf, TestPKI.intermediate]) }

    func testDefaultSystemStoreDoesNotTrustTheTestRoot() {
        unsetenv("SSL_CERT_FILE")
        unsetenv("SSL_CERT_DIR")
        guard case .failure(let error) = SecurityPolicy.default().evaluate(chainOnly, forDomain: "localhost") else {
            return XCTFail("the test root must not be in the system store")
        }
        XCTAssertEqual(error.reason, .untrustedRoot)
    }

    func testSSLCertFileIsHonoured() throws {
        let directory = try XCTUnwrap(temporary)
        let bundle = directory.appendingPathComponent("bundle.pem")
        try Data(TestPKI.pem([TestPKI.root]).utf8).write(to: bundle)
        setenv("SSL_CERT_FILE", bundle.path, 1)
        setenv("SSL_CERT_DIR", directory.path, 1)
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(chainOnly, forDomain: "localhost"))
        XCTAssertTrue(SecurityPolicy.default().evaluateServerTrust(chainOnly, forDomain: "127.0.0.1"))

        // The store follows the variable when it changes.
        setenv("SSL_CERT_FILE", directory.appendingPathComponent("missing.pem").path, 1)
        XCTAssertFalse(SecurityPolicy.default().evaluateServerTrust(chainOnly, forDomain: "localhost"))
    }
}
