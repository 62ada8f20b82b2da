import Foundation
import XCTest

/// Server certificates on both sides of the package's TLS floor, made with the
/// `openssl` CLI when first needed, all under one RSA-2048 root (`rootPEM`):
/// a good leaf and one leaf per way to fail the floor. Served one at a time
/// by `TLSFloorServer`.
final class TLSFloorMaterial: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init.

    /// One server certificate (and its chain) of the material.
    enum Leaf: String, CaseIterable, Sendable {
        /// RSA-2048, SHA-256, SANs localhost and 127.0.0.1, serverAuth: passes the floor.
        case good
        /// Like `good`, signed with SHA-1.
        case sha1
        /// Like `good`, with an RSA-1024 key.
        case rsa1024
        /// `CN=localhost` and no subjectAltName.
        case commonNameOnly
        /// `CN=127.0.0.1` and no subjectAltName.
        case ipInCommonName
        /// Like `good`, but `basicConstraints=CA:TRUE`.
        case caAsLeaf
        /// Names only `wrong.test`.
        case wrongHost
        /// extendedKeyUsage clientAuth only.
        case clientAuthOnly
        /// Issued by an intermediate constrained to `example.test`, naming localhost (the intermediate is sent too).
        case outsideNameConstraints
        /// The test PKI's expired leaf (2000–2001) with its intermediate: anchor `TestPKI.root`, not `rootPEM`.
        case expired
    }

    let directory: URL
    let rootPEM: URL
    let rootDER: Data

    /// The PEM file holding `leaf`'s certificate.
    func certificate(_ leaf: Leaf) -> URL { directory.appendingPathComponent("\(leaf.rawValue).pem") }
    /// The PEM private key of `leaf`.
    func key(_ leaf: Leaf) -> URL {
        leaf == .expired ? TestPKI.directory.appendingPathComponent("keys/expired-leaf.key.pem")
            : directory.appendingPathComponent("\(leaf.rawValue).key")
    }
    /// The intermediates to send after `leaf`, if any.
    func chain(_ leaf: Leaf) -> URL? {
        switch leaf {
        case .outsideNameConstraints: return directory.appendingPathComponent("constrained-ca.pem")
        case .expired: return directory.appendingPathComponent("testpki-intermediate.pem")
        default: return nil
        }
    }
    /// The PEM anchor a client needs for `leaf`.
    func anchorPEM(_ leaf: Leaf) -> URL { leaf == .expired ? directory.appendingPathComponent("testpki-root.pem") : rootPEM }
    /// The DER anchor a client needs for `leaf`.
    func anchorDER(_ leaf: Leaf) -> Data { leaf == .expired ? TestPKI.root : rootDER }

    static func shared() throws -> TLSFloorMaterial { try lazyMaterial.get() }
    private static let lazyMaterial = SharedServers.Lazy { try TLSFloorMaterial() }

    /// Removes the shared material's files if they were made (call from a class tearDown).
    static func removeShared() { lazyMaterial.value?.remove() }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    init() throws {
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("afn-tls-floor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        func file(_ name: String) -> String { base.appendingPathComponent(name).path }
        func run(_ arguments: [String]) throws {
            let status = try Fixtures.run(openssl, arguments)
            guard status == 0 else {
                throw NSError(domain: "Fixtures", code: 3, userInfo: [
                    NSLocalizedDescriptionKey: "openssl \(arguments.joined(separator: " ")) exited with \(status)",
                ])
            }
        }
        let caExtensions = ["basicConstraints=critical,CA:TRUE", "keyUsage=critical,keyCertSign,cRLSign"]
        /// Signs a new key's request with `issuer`, with `extensions` and `digest`.
        func issue(_ name: String, subject: String, bits: Int = 2048, digest: String = "sha256",
                   issuer: String = "root", extensions: [String]) throws {
            try run(["req", "-newkey", "rsa:\(bits)", "-nodes", "-subj", subject,
                     "-keyout", file("\(name).key"), "-out", file("\(name).csr")])
            try (["[v3]"] + extensions).joined(separator: "\n").appending("\n")
                .write(toFile: file("\(name).ext"), atomically: true, encoding: .utf8)
            try run(["x509", "-req", "-in", file("\(name).csr"), "-CA", file("\(issuer).pem"), "-CAkey", file("\(issuer).key"),
                     "-set_serial", "\(Int.random(in: 1_000...1_000_000_000))", "-days", "3650", "-\(digest)",
                     "-extfile", file("\(name).ext"), "-extensions", "v3", "-out", file("\(name).pem")])
        }

        try run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-sha256",
                 "-subj", "/CN=AFNetworking TLS Floor Test Root"]
                + caExtensions.flatMap { ["-addext", $0] } + ["-keyout", file("root.key"), "-out", file("root.pem")])
        let server = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
                      "extendedKeyUsage=serverAuth"]
        let names = "subjectAltName=DNS:localhost,IP:127.0.0.1"
        try issue("good", subject: "/CN=localhost", extensions: server + [names])
        try issue("sha1", subject: "/CN=localhost", digest: "sha1", extensions: server + [names])
        try issue("rsa1024", subject: "/CN=localhost", bits: 1024, extensions: server + [names])
        try issue("commonNameOnly", subject: "/CN=localhost", extensions: server)
        try issue("ipInCommonName", subject: "/CN=127.0.0.1", extensions: server)
        try issue("caAsLeaf", subject: "/CN=localhost", extensions: [
            "basicConstraints=critical,CA:TRUE", "keyUsage=critical,digitalSignature,keyEncipherment,keyCertSign",
            "extendedKeyUsage=serverAuth", names,
        ])
        try issue("wrongHost", subject: "/CN=wrong.test", extensions: server + ["subjectAltName=DNS:wrong.test"])
        try issue("clientAuthOnly", subject: "/CN=localhost", extensions: [
            "basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
            "extendedKeyUsage=clientAuth", names,
        ])
        try issue("constrained-ca", subject: "/CN=AFNetworking Constrained CA",
                  extensions: caExtensions + ["nameConstraints=critical,permitted;DNS:example.test"])
        try issue("outsideNameConstraints", subject: "/CN=localhost", issuer: "constrained-ca",
                  extensions: server + ["subjectAltName=DNS:localhost"])

        // The test PKI's expired leaf, in PEM for s_server.
        for (name, source) in [("expired", "expired-leaf"), ("testpki-intermediate", "intermediate-ca"), ("testpki-root", "root-ca")] {
            try run(["x509", "-inform", "DER", "-in", TestPKI.directory.appendingPathComponent("\(source).cer").path,
                     "-outform", "PEM", "-out", file("\(name).pem")])
        }

        let rootText = try String(contentsOfFile: file("root.pem"), encoding: .utf8)
        guard let der = MutualTLSMaterial.firstCertificateDER(inPEM: rootText) else {
            throw NSError(domain: "Fixtures", code: 4, userInfo: [NSLocalizedDescriptionKey: "the floor root is not PEM"])
        }
        directory = base
        rootPEM = URL(fileURLWithPath: file("root.pem"))
        rootDER = der
    }
}

/// `openssl s_server -www` on a free loopback port, serving one leaf of
/// `TLSFloorMaterial` and answering `GET /` with its status page. Its own
/// security level is 0, so it serves whatever the test asks for; `protocols`
/// restricts the TLS versions it speaks (e.g. `["-tls1"]`).
final class TLSFloorServer {
    let port: Int
    private let process: Process
    /// s_server's stdin, held open: it reads commands from it.
    private let input = Pipe()

    /// `https://host:port/`.
    func url(host: String = "localhost") -> URL { URL(string: "https://\(host):\(port)/")! }

    init(_ material: TLSFloorMaterial, leaf: TLSFloorMaterial.Leaf, protocols: [String] = [],
         cipher: String = "DEFAULT:@SECLEVEL=0") throws {
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        port = Fixtures.freePort()
        var arguments = ["s_server", "-accept", "127.0.0.1:\(port)", "-www",
                         "-cert", material.certificate(leaf).path, "-key", material.key(leaf).path, "-cipher", cipher]
        if let chain = material.chain(leaf) { arguments += ["-cert_chain", chain.path] }
        process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = arguments + protocols
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try Fixtures.launch(process)
        guard Fixtures.waitForPort(port) else {
            stop()
            throw NSError(domain: "Fixtures", code: 5, userInfo: [NSLocalizedDescriptionKey: "s_server did not start for \(leaf)"])
        }
    }

    func stop() { Fixtures.stop(process) }
}
