import AFNetworking
import Foundation
import XCTest

/// `afn`'s TLS options, the real binary against nginx's self-signed
/// certificate and the test PKI: `--insecure`, `--cacert` (PEM and DER) and
/// `--pin`, and status 60 whenever the server is not trusted. (Client
/// certificates are covered by the mutual-TLS tests.)
final class AFNTLSCommandTests: XCTestCase {
    private func url(_ nginx: NginxFixture) -> String {
        nginx.httpsURL.appendingPathComponent("1k.bin").absoluteString
    }

    /// The `sha256/…` pin of the nginx certificate's public key, from the openssl
    /// command line (not from the implementation under test).
    private func spkiPin(of nginx: NginxFixture) throws -> String {
        try OpenSSLPin.pin(ofCertificateFile: nginx.certificatePath)
    }

    /// A well-formed pin of some other key.
    private let wrongPin = "sha256/" + Data(repeating: 7, count: 32).base64EncodedString()

    func testASelfSignedServerIsRefusedWith60() throws {
        let run = try AFNTool.run(["get", url(try SharedServers.nginx())])
        XCTAssertEqual(run.status, 60, run.stderr)
        XCTAssertTrue(run.stdout.isEmpty)
    }

    func testInsecureAcceptsIt() throws {
        let run = try AFNTool.run(["get", "--insecure", url(try SharedServers.nginx())])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout.count, 1024)
        XCTAssertEqual(try AFNTool.run(["get", "-k", url(try SharedServers.nginx())]).status, 0)
    }

    func testTheServersOwnCertificateAsCAFileIsTrusted() throws {
        let nginx = try SharedServers.nginx()
        let run = try AFNTool.run(["get", "--cacert", nginx.certificatePath, url(nginx)])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(run.stdout.count, 1024)
    }

    func testADERRootCertificateAsCAFileIsTrusted() throws {
        let nginx = try SharedServers.pkiNginx()
        let root = TestPKI.directory.appendingPathComponent("root-ca.cer").path
        let run = try AFNTool.run(["get", "--cacert", root, url(nginx)])
        XCTAssertEqual(run.status, 0, run.stderr)
        XCTAssertEqual(try AFNTool.run(["get", url(nginx)]).status, 60, "the private root is not in the system store")
    }

    func testAnUnusableCAFileExits77() throws {
        let nginx = try SharedServers.nginx()
        let garbage = try AFNTool.temporaryFile(self, contents: Data("not a certificate".utf8))
        XCTAssertEqual(try AFNTool.run(["get", "--cacert", garbage.path, url(nginx)]).status, 77)
        XCTAssertEqual(try AFNTool.run(["get", "--cacert", "/nonexistent/\(UUID().uuidString)", url(nginx)]).status, 77)
    }

    func testTheRightPinIsAccepted() throws {
        let nginx = try SharedServers.nginx()
        let pin = try spkiPin(of: nginx)
        let trusted = try AFNTool.run(["get", "--cacert", nginx.certificatePath, "--pin", pin, url(nginx)])
        XCTAssertEqual(trusted.status, 0, trusted.stderr)
        XCTAssertEqual(trusted.stdout.count, 1024)
        // A backup pin next to the right one changes nothing.
        let withBackup = try AFNTool.run(["get", "--cacert", nginx.certificatePath, "--pin", wrongPin, "--pin", pin, url(nginx)])
        XCTAssertEqual(withBackup.status, 0, withBackup.stderr)
        // With --insecure the pin alone decides.
        let pinOnly = try AFNTool.run(["get", "--insecure", "--pin", pin, url(nginx)])
        XCTAssertEqual(pinOnly.status, 0, pinOnly.stderr)
    }

    func testAWrongPinExits60() throws {
        let nginx = try SharedServers.nginx()
        let trusted = try AFNTool.run(["get", "--cacert", nginx.certificatePath, "--pin", wrongPin, url(nginx)])
        XCTAssertEqual(trusted.status, 60, trusted.stderr)
        XCTAssertTrue(trusted.stdout.isEmpty)
        let insecure = try AFNTool.run(["get", "--insecure", "--pin", wrongPin, url(nginx)])
        XCTAssertEqual(insecure.status, 60, "--insecure does not switch pinning off: \(insecure.stderr)")
    }

    func testAPinDoesNotReplaceTheChainCheck() throws {
        // As with curl: pins are checked on top of the usual trust, not instead of it.
        let nginx = try SharedServers.nginx()
        let run = try AFNTool.run(["get", "--pin", try spkiPin(of: nginx), url(nginx)])
        XCTAssertEqual(run.status, 60, run.stderr)
    }

    func testTLSOptionsApplyToBatchAndDownload() throws {
        let nginx = try SharedServers.nginx()
        let batch = try AFNTool.run(["batch", "--cacert", nginx.certificatePath], stdin: Data((url(nginx) + "\n").utf8))
        XCTAssertEqual(batch.status, 0, batch.output + batch.stderr)
        let refused = try AFNTool.run(["batch"], stdin: Data((url(nginx) + "\n").utf8))
        XCTAssertEqual(refused.status, 60, refused.output)

        let output = FileManager.default.temporaryDirectory.appendingPathComponent("afn-tls-\(UUID().uuidString)")
        addTeardownBlock {
            try? FileManager.default.removeItem(at: output)
            try? FileManager.default.removeItem(atPath: output.path + ".afnresume")
        }
        XCTAssertEqual(try AFNTool.run(["download", url(nginx), "-o", output.path]).status, 60)
        let download = try AFNTool.run(["download", "--cacert", nginx.certificatePath, url(nginx), "-o", output.path])
        XCTAssertEqual(download.status, 0, download.stderr)
        XCTAssertEqual(try Data(contentsOf: output).count, 1024)
    }
}
