import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// API.md: TLS sessions are resumed only for the same host, port, security
/// policy and client identity. nginx (TLS 1.2 only on one port, TLS 1.3 only
/// on another; session IDs in a shared cache and tickets on; no keep-alive, so
/// every request is a new handshake) logs `$ssl_session_reused` and
/// `$ssl_client_verify` per request.
final class TLSSessionIsolationTests: OperationTestCase {
    override class func tearDown() {
        fixture.value?.stop()
        super.tearDown()
    }

    /// Its own material: the shared one is removed by MutualTLSTests' class tearDown.
    private static let fixture = SharedServers.Lazy { try SessionNginx(material: MutualTLSMaterial()) }
    private func material() throws -> MutualTLSMaterial { try Self.fixture.get().material }

    /// One request's line in nginx's log: whether the session was resumed, and nginx's verdict on the client certificate.
    private struct Handshake: Equatable {
        var resumed: Bool
        var client: String
    }

    /// A GET at `port` under `policy`, presenting `identity`; what nginx saw.
    private func handshake(port: Int, policy: SecurityPolicy, identity: ClientCertificate?,
                           file: StaticString = #filePath, line: UInt = #line) throws -> Handshake? {
        let nginx = try Self.fixture.get()
        let marker = UUID().uuidString
        var request = URLRequest(url: URL(string: "https://localhost:\(port)/hello.txt?\(marker)")!)
        request.timeoutInterval = 10
        let operation = HTTPRequestOperation(request: request)
        operation.securityPolicy = policy
        operation.clientCertificate = identity
        XCTAssertNil(run(operation).error, file: file, line: line)
        return nginx.handshake(for: marker).map { Handshake(resumed: $0.resumed, client: $0.client) }
    }

    private func extraAnchorPolicy() throws -> SecurityPolicy {
        let policy = SecurityPolicy.default()
        policy.additionalTrustedCertificates = [try material().serverCertificateDER]
        return policy
    }

    /// The same anchor, and the certificate pinned too: a stricter policy.
    private func pinnedPolicy() throws -> SecurityPolicy {
        let server = try material().serverCertificateDER
        let policy = SecurityPolicy(pinningMode: .certificate, withPinnedCertificates: [server])
        policy.additionalTrustedCertificates = [server]
        return policy
    }

    private func identity() throws -> ClientCertificate {
        let material = try material()
        return try ClientCertificate.pem(certificateChainFile: material.clientCertificatePEM, privateKeyFile: material.clientKeyPEM)
    }

    /// Resumption does happen where it is allowed, so "not resumed" below means something:
    /// `afn batch -j 1` (one policy, one identity, the default path) resumes its own sessions.
    func testOneClientResumesItsOwnSessions() throws {
        let nginx = try Self.fixture.get()
        let material = try material()
        for port in [nginx.tls12Port, nginx.tls13Port] {
            let markers = (0..<3).map { _ in UUID().uuidString }
            let urls = markers.map { "https://localhost:\(port)/hello.txt?\($0)\n" }.joined()
            let run = try AFNTool.run(["batch", "-j", "1", "--cert", material.clientCertificatePEM.path,
                                       "--key", material.clientKeyPEM.path],
                                      stdin: Data(urls.utf8), environment: ["SSL_CERT_FILE": material.serverCertificatePEM.path])
            XCTAssertEqual(run.status, 0, run.output + run.stderr)
            let seen = markers.compactMap { nginx.handshake(for: $0) }
            XCTAssertEqual(seen.count, 3, nginx.accessLog)
            XCTAssertEqual(seen.first?.resumed, false)
            XCTAssertTrue(seen.dropFirst().contains { $0.resumed }, "no session was resumed on port \(port): \(nginx.accessLog)")
            XCTAssertTrue(seen.allSatisfy { $0.client == "SUCCESS" }, nginx.accessLog)
        }
    }

    func testARequestWithoutAnIdentityNeverResumesASessionMadeWithOne() throws {
        let nginx = try Self.fixture.get()
        for port in [nginx.tls12Port, nginx.tls13Port] {
            let policy = try extraAnchorPolicy()
            let first = try handshake(port: port, policy: policy, identity: identity())
            XCTAssertEqual(first?.client, "SUCCESS", "port \(port)")
            for _ in 0..<3 {
                // Resuming the identified session would bring its certificate along ("SUCCESS").
                let anonymous = try handshake(port: port, policy: policy, identity: nil)
                XCTAssertEqual(anonymous?.client, "NONE", "port \(port): \(nginx.accessLog)")
                _ = try handshake(port: port, policy: policy, identity: identity())
            }
        }
    }

    func testAStricterPolicyNeverResumesASessionMadeUnderAnother() throws {
        let nginx = try Self.fixture.get()
        for port in [nginx.tls12Port, nginx.tls13Port] {
            _ = try handshake(port: port, policy: extraAnchorPolicy(), identity: identity())
            _ = try handshake(port: port, policy: extraAnchorPolicy(), identity: nil)
            // The first handshake under the stricter policy: only another policy's session could be resumed.
            let pinned = try handshake(port: port, policy: pinnedPolicy(), identity: identity())
            XCTAssertEqual(pinned, Handshake(resumed: false, client: "SUCCESS"), "port \(port): \(nginx.accessLog)")
        }
    }
}

/// nginx for session resumption: the mutual-TLS material's server certificate,
/// client certificates optional (verified against the client CA), a shared
/// session cache and tickets, no keep-alive.
private final class SessionNginx: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init.
    let material: MutualTLSMaterial
    let directory: URL
    let tls12Port: Int
    let tls13Port: Int
    private let process: Process

    var accessLog: String { (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? "" }

    /// The log line of the request carrying `marker`, waiting (bounded) for nginx to write it.
    func handshake(for marker: String) -> (resumed: Bool, client: String)? {
        let deadline = Date().addingTimeInterval(3)
        repeat {
            if let line = accessLog.split(separator: "\n").first(where: { $0.contains(marker) }) {
                let fields = line.split(separator: " ")
                guard fields.count >= 3 else { return nil }
                return (fields[1] == "r", String(fields[2]))
            }
            usleep(10_000)
        } while Date() < deadline
        return nil
    }

    init(material: MutualTLSMaterial) throws {
        self.material = material
        let nginx = try Fixtures.requireBinary("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"])
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-tls-sessions-\(UUID().uuidString)")
        let root = directory.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("hello, session\n".utf8).write(to: root.appendingPathComponent("hello.txt"))
        tls12Port = Fixtures.freePort()
        tls13Port = Fixtures.freePort()
        func server(_ port: Int, _ protocols: String) -> String {
            """
                server {
                    listen 127.0.0.1:\(port) ssl;
                    ssl_protocols \(protocols);
                    ssl_certificate \(material.serverCertificatePEM.path);
                    ssl_certificate_key \(material.serverKeyPEM.path);
                    ssl_verify_client optional;
                    ssl_client_certificate \(material.clientCAPEM.path);
                    ssl_session_cache shared:afnsessions\(port):1m;
                    ssl_session_tickets on;
                    root \(root.path);
                }
            """
        }
        let config = """
        worker_processes 1;
        daemon off;
        error_log \(directory.path)/error.log;
        pid \(directory.path)/nginx.pid;
        events { worker_connections 256; }
        http {
            log_format sessions '$request_uri $ssl_session_reused $ssl_client_verify $ssl_protocol';
            access_log \(directory.path)/access.log sessions;
            client_body_temp_path \(directory.path)/body;
            proxy_temp_path \(directory.path)/proxy;
            fastcgi_temp_path \(directory.path)/fastcgi;
            uwsgi_temp_path \(directory.path)/uwsgi;
            scgi_temp_path \(directory.path)/scgi;
            keepalive_timeout 0;
            types { text/plain txt; }
        \(server(tls12Port, "TLSv1.2"))
        \(server(tls13Port, "TLSv1.3"))
        }
        """
        let configPath = directory.appendingPathComponent("nginx.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: nginx)
        process.arguments = ["-c", configPath.path, "-p", directory.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Fixtures.launch(process)
        guard Fixtures.waitForPort(tls12Port), Fixtures.waitForPort(tls13Port) else {
            let log = (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            stop()
            throw NSError(domain: "Fixtures", code: 5, userInfo: [NSLocalizedDescriptionKey: "nginx did not start: \(log)"])
        }
    }

    func stop() {
        Fixtures.stop(process)
        try? FileManager.default.removeItem(at: directory)
        material.remove()
    }
}
