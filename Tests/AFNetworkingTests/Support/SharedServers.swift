import Foundation
import XCTest

/// The real servers the interop tests share: each started once per test
/// process on first use, and stopped when the test bundle finishes. A server
/// that could not start makes every test that needs it fail (under CI) or
/// skip loudly (elsewhere), through `Fixtures.requireBinary`.
enum SharedServers {
    /// nginx with a self-signed certificate for localhost.
    static func nginx() throws -> NginxFixture { try plainNginx.get() }
    /// nginx serving the test PKI's leaf and intermediate.
    static func pkiNginx() throws -> NginxFixture { try chainNginx.get() }
    /// httpbin under gunicorn.
    static func httpbin() throws -> HTTPBinFixture { try httpbinServer.get() }

    private static let plainNginx = Lazy { try NginxFixture() }
    private static let chainNginx = Lazy {
        let directory = TestPKI.directory
        return try NginxFixture(chain: [directory.appendingPathComponent("leaf-localhost.cer"),
                                        directory.appendingPathComponent("intermediate-ca.cer")],
                                key: directory.appendingPathComponent("keys/leaf-localhost.key.pem"))
    }
    private static let httpbinServer = Lazy { try HTTPBinFixture() }

    /// Stops whatever was started, once the bundle is done.
    private final class Stopper: NSObject, XCTestObservation {
        func testBundleDidFinish(_ testBundle: Bundle) {
            plainNginx.value?.stop()
            chainNginx.value?.stop()
            httpbinServer.value?.stop()
        }
    }

    private static let registerStopper: Void = {
        XCTestObservationCenter.shared.addTestObserver(Stopper())
    }()

    /// A server started on first use; a failure is remembered and rethrown.
    final class Lazy<Server>: @unchecked Sendable {
        private let start: () throws -> Server
        private let lock = NSLock()
        private var result: Result<Server, Error>?

        init(_ start: @escaping () throws -> Server) { self.start = start }

        var value: Server? {
            lock.lock()
            defer { lock.unlock() }
            return try? result?.get()
        }

        func get() throws -> Server {
            _ = SharedServers.registerStopper
            lock.lock()
            defer { lock.unlock() }
            if result == nil { result = Result { try start() } }
            do {
                return try result!.get()
            } catch let skip as XCTSkip {
                throw skip
            } catch {
                throw Fixtures.MissingPrerequisite(description: "test server failed to start: \(error)")
            }
        }
    }
}
