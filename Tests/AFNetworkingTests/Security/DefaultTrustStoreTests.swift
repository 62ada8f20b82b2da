@testable import AFNetworking
@testable import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The default policy (libcurl's standard verification) verifies every
/// connection against one store of its anchors — the bundle and directory of
/// `SSL_CERT_FILE` / `SSL_CERT_DIR`, else OpenSSL's defaults — made once,
/// instead of libcurl parsing the bundle into each connection. (Accepting a
/// server through it: `TLSFloorTests`, which runs `afn` with the test PKI's
/// anchor as `SSL_CERT_FILE`.)
final class DefaultTrustStoreTests: XCTestCase {
    private var server: NginxFixture?
    private var directory: URL?

    override func tearDown() {
        server?.stop()
        server = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        directory = nil
    }

    private func bundle(_ certificates: [Data], named name: String) throws -> String {
        let directory = self.directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("afn-default-trust-\(UUID().uuidString)")
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(name)
        try TestPKI.pem(certificates).write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    func testOneStoreServesEveryConnectionWithTheSameAnchors() throws {
        let first = try bundle([TestPKI.root], named: "first.pem")
        let second = try bundle([TestPKI.unrelatedRoot], named: "second.pem")
        let store = try XCTUnwrap(HandshakeStore.current(file: first, directory: nil))
        XCTAssertTrue(HandshakeStore.current(file: first, directory: nil) === store, "made once for the same anchors")
        XCTAssertFalse(HandshakeStore.current(file: second, directory: nil) === store, "other anchors, another store")
        XCTAssertNil(HandshakeStore.current(file: directory!.appendingPathComponent("missing.pem").path, directory: nil),
                     "a bundle that does not load is left to libcurl, which reports it")
        XCTAssertNotNil(HandshakeStore.current(file: nil, directory: nil), "OpenSSL's default anchors")
    }

    func testTheDefaultPolicyStillRefusesAServerItsAnchorsDoNotCover() throws {
        let directory = TestPKI.directory
        let server = try NginxFixture(chain: [directory.appendingPathComponent("leaf-localhost.cer"),
                                              directory.appendingPathComponent("intermediate-ca.cer")],
                                      key: directory.appendingPathComponent("keys/leaf-localhost.key.pem"))
        self.server = server
        let marker = "default-trust-\(UUID().uuidString)"
        var request = URLRequest(url: URL(string: "https://localhost:\(server.httpsPort)/1k.bin?\(marker)")!)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        operation.completionQueue = DispatchQueue(label: "DefaultTrustStoreTests")
        let done = DispatchSemaphore(value: 0)
        operation.setCompletionBlockWithSuccess({ _, _ in done.signal() }, failure: { _, _ in done.signal() })
        operation.start()
        XCTAssertEqual(done.wait(timeout: .now() + 20), .success, "the request ends")
        let error = operation.error as NSError?
        XCTAssertEqual(error?.domain, NSURLErrorDomain)
        XCTAssertTrue([NSURLErrorServerCertificateHasUnknownRoot, NSURLErrorServerCertificateUntrusted].contains(error?.code ?? 0),
                      "\(String(describing: error))")
        XCTAssertFalse(server.logShows(marker, timeout: 0.2), "a refused server never receives the request")
    }
}
