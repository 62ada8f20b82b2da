import Foundation
import XCTest

/// Client identities for mutual TLS, made with the `openssl` CLI when first
/// needed: a client CA, a client certificate and key (PEM) it signed, the same
/// pair as a passphrase-protected PKCS#12 bundle, an unrelated self-signed
/// client certificate, and a self-signed server certificate for localhost /
/// 127.0.0.1 that the servers of `MutualTLSFixture` present.
final class MutualTLSMaterial: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init.
    let directory: URL
    let clientCAPEM: URL
    let clientCertificatePEM: URL
    let clientKeyPEM: URL
    let clientPKCS12: URL
    /// The PKCS#12 bundle's passphrase.
    var pkcs12Passphrase: String { MutualTLSMaterial.passphrase }
    static let passphrase = "afn-p12-passphrase"
    let rogueCertificatePEM: URL
    let rogueKeyPEM: URL
    let serverCertificatePEM: URL
    let serverKeyPEM: URL
    /// The server certificate, DER (for `SecurityPolicy.additionalTrustedCertificates`).
    let serverCertificateDER: Data

    static func shared() throws -> MutualTLSMaterial { try lazyMaterial.get() }
    private static let lazyMaterial = SharedServers.Lazy { try MutualTLSMaterial() }

    init() throws {
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("afn-mtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        func file(_ name: String) -> URL { base.appendingPathComponent(name) }
        func run(_ arguments: [String]) throws {
            let status = try Fixtures.run(openssl, arguments)
            guard status == 0 else {
                throw NSError(domain: "Fixtures", code: 3, userInfo: [
                    NSLocalizedDescriptionKey: "openssl \(arguments.joined(separator: " ")) exited with \(status)",
                ])
            }
        }

        let clientCA = file("client-ca.pem")
        let clientCAKey = file("client-ca.key")
        let clientCertificate = file("client.pem")
        let clientKey = file("client.key")
        let clientRequest = file("client.csr")
        let clientExtensions = file("client.ext")
        let bundle = file("client.p12")
        let rogueCertificate = file("rogue.pem")
        let rogueKey = file("rogue.key")
        let serverCertificate = file("server.pem")
        let serverKey = file("server.key")

        // The client CA.
        try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=AFNetworking Test Client CA",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
                 "-keyout", clientCAKey.path, "-out", clientCA.path])
        // The client certificate it signs, for TLS client authentication.
        try run(["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=afnetworking-test-client",
                 "-keyout", clientKey.path, "-out", clientRequest.path])
        try "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n"
            .write(to: clientExtensions, atomically: true, encoding: .utf8)
        try run(["x509", "-req", "-in", clientRequest.path, "-CA", clientCA.path, "-CAkey", clientCAKey.path,
                 "-set_serial", "4097", "-days", "3650", "-extfile", clientExtensions.path, "-out", clientCertificate.path])
        // The same identity as a PKCS#12 bundle with a passphrase.
        try run(["pkcs12", "-export", "-in", clientCertificate.path, "-inkey", clientKey.path, "-name", "afnetworking-test-client",
                 "-out", bundle.path, "-passout", "pass:\(MutualTLSMaterial.passphrase)"])
        // A client certificate no server here trusts.
        try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=afnetworking-rogue-client",
                 "-keyout", rogueKey.path, "-out", rogueCertificate.path])
        // The servers' own certificate.
        try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=localhost",
                 "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                 "-keyout", serverKey.path, "-out", serverCertificate.path])

        let serverPEM = try String(contentsOf: serverCertificate, encoding: .utf8)
        guard let der = MutualTLSMaterial.firstCertificateDER(inPEM: serverPEM) else {
            throw NSError(domain: "Fixtures", code: 4, userInfo: [NSLocalizedDescriptionKey: "the server certificate is not PEM"])
        }
        directory = base
        clientCAPEM = clientCA
        clientCertificatePEM = clientCertificate
        clientKeyPEM = clientKey
        clientPKCS12 = bundle
        rogueCertificatePEM = rogueCertificate
        rogueKeyPEM = rogueKey
        serverCertificatePEM = serverCertificate
        serverKeyPEM = serverKey
        serverCertificateDER = der
    }

    /// The DER bytes of the first certificate in PEM text.
    static func firstCertificateDER(inPEM text: String) -> Data? {
        guard let begin = text.range(of: "-----BEGIN CERTIFICATE-----"),
              let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex) else { return nil }
        let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(base64))
    }

    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Removes the shared material's files if they were made (call from a class tearDown).
    static func removeShared() {
        lazyMaterial.value?.remove()
    }
}

/// Two servers demanding a client certificate signed by the material's client CA:
///
/// - nginx (`ssl_verify_client on`) serving `hello.txt` (and `fresh/hello.txt`,
///   fresh for an hour): as documented, it
///   completes the handshake without a (trusted) client certificate and
///   answers such requests with an HTTP 400 page;
/// - `openssl s_server -Verify 1 -verify_return_error -www` (TLS 1.3 only),
///   which fails the TLS handshake itself with a "certificate required" alert
///   when no certificate is sent and an "unknown ca" alert for an untrusted one.
///   (`-verify_return_error` matters: without it s_server accepts a
///   certificate it cannot verify.)
final class MutualTLSFixture: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init; the processes
    // are only started in init and stopped in stop().
    let material: MutualTLSMaterial
    let directory: URL
    let nginxPort: Int
    let sServerPort: Int
    private let nginx: Process
    private let sServer: Process
    /// s_server's stdin: held open (s_server reads commands from it).
    private let sServerInput: Pipe

    /// nginx over TLS; the certificate names localhost and 127.0.0.1.
    var nginxURL: URL { URL(string: "https://localhost:\(nginxPort)")! }
    /// s_server; `/` answers with its status page once the handshake succeeded.
    var sServerURL: URL { URL(string: "https://127.0.0.1:\(sServerPort)/")! }
    var accessLog: String { (try? String(contentsOf: directory.appendingPathComponent("access.log"), encoding: .utf8)) ?? "" }

    static func shared() throws -> MutualTLSFixture { try lazyFixture.get() }
    private static let lazyFixture = SharedServers.Lazy { try MutualTLSFixture(material: MutualTLSMaterial.shared()) }

    /// Stops the shared fixture if it was started (call from a class tearDown).
    static func stopShared() {
        lazyFixture.value?.stop()
    }

    init(material: MutualTLSMaterial) throws {
        let nginxPath = try Fixtures.requireBinary("nginx", ["/usr/sbin/nginx", "/usr/bin/nginx"])
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("afn-mtls-servers-\(UUID().uuidString)")
        let root = base.appendingPathComponent("www")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try Data("hello, client\n".utf8).write(to: root.appendingPathComponent("hello.txt"))
        // The same greeting with an hour of explicit freshness, so a cache
        // that ignored the client identity would answer a second request itself.
        try FileManager.default.createDirectory(at: root.appendingPathComponent("fresh"), withIntermediateDirectories: true)
        try Data("hello, client\n".utf8).write(to: root.appendingPathComponent("fresh/hello.txt"))

        let httpsPort = Fixtures.freePort()
        let config = """
        worker_processes 1;
        daemon off;
        error_log \(base.path)/error.log;
        pid \(base.path)/nginx.pid;
        events { worker_connections 256; }
        http {
            access_log \(base.path)/access.log;
            client_body_temp_path \(base.path)/body;
            proxy_temp_path \(base.path)/proxy;
            fastcgi_temp_path \(base.path)/fastcgi;
            uwsgi_temp_path \(base.path)/uwsgi;
            scgi_temp_path \(base.path)/scgi;
            keepalive_requests 1000;
            types { text/plain txt; }
            server {
                listen 127.0.0.1:\(httpsPort) ssl;
                ssl_certificate \(material.serverCertificatePEM.path);
                ssl_certificate_key \(material.serverKeyPEM.path);
                ssl_verify_client on;
                ssl_verify_depth 2;
                ssl_client_certificate \(material.clientCAPEM.path);
                root \(root.path);
                location /fresh/ { add_header Cache-Control "private, max-age=3600"; }
                # To the same server under another origin (127.0.0.1 instead of localhost).
                location = /elsewhere { return 302 https://127.0.0.1:\(httpsPort)/hello.txt; }
            }
        }
        """
        let configPath = base.appendingPathComponent("nginx.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)
        let nginxProcess = Process()
        nginxProcess.executableURL = URL(fileURLWithPath: nginxPath)
        nginxProcess.arguments = ["-c", configPath.path, "-p", base.path]
        nginxProcess.standardOutput = FileHandle.nullDevice
        nginxProcess.standardError = FileHandle.nullDevice
        try Fixtures.launch(nginxProcess)

        let sslPort = Fixtures.freePort()
        let sslProcess = Process()
        sslProcess.executableURL = URL(fileURLWithPath: openssl)
        sslProcess.arguments = ["s_server", "-accept", "127.0.0.1:\(sslPort)",
                                "-cert", material.serverCertificatePEM.path, "-key", material.serverKeyPEM.path,
                                "-Verify", "1", "-verify_return_error", "-CAfile", material.clientCAPEM.path,
                                "-tls1_3", "-www"]
        let input = Pipe()
        sslProcess.standardInput = input
        sslProcess.standardOutput = FileHandle.nullDevice
        sslProcess.standardError = FileHandle.nullDevice
        do {
            try Fixtures.launch(sslProcess)
        } catch {
            Fixtures.stop(nginxProcess)
            throw error
        }

        self.material = material
        directory = base
        nginxPort = httpsPort
        sServerPort = sslPort
        nginx = nginxProcess
        sServer = sslProcess
        sServerInput = input
        guard Fixtures.waitForPort(httpsPort), Fixtures.waitForPort(sslPort) else {
            let log = (try? String(contentsOf: base.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
            stop()
            throw NSError(domain: "Fixtures", code: 5, userInfo: [NSLocalizedDescriptionKey: "the mutual TLS servers did not start: \(log)"])
        }
    }

    func stop() {
        for process in [nginx, sServer] { Fixtures.stop(process) }
        try? FileManager.default.removeItem(at: directory)
    }
}
