import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The TLS options every request command shares: extra trust, a client
/// certificate, public-key pins and `--insecure`.
///
/// As with curl, pins are checked in addition to the usual chain and host
/// name checks: for a self-signed or private server, combine `--pin` with
/// `--cacert` (or with `--insecure` to rely on the pin alone).
struct TLSOptions: ParsableArguments {
    @Option(help: ArgumentHelp("A CA certificate (PEM or DER) trusted in addition to the system store.", valueName: "file"))
    var cacert: String?

    @Option(help: ArgumentHelp("Client certificate: a PEM chain (with --key, or holding the key too) or a PKCS#12 file.", valueName: "file"))
    var cert: String?

    @Option(help: ArgumentHelp("The client certificate's private key (PEM).", valueName: "file"))
    var key: String?

    @Option(help: ArgumentHelp("Passphrase of the private key or the PKCS#12 file.", valueName: "passphrase"))
    var pass: String?

    @Option(help: ArgumentHelp("Require this public key in the server's chain: sha256/BASE64 of its SubjectPublicKeyInfo (repeatable).",
                               valueName: "sha256/base64"))
    var pin: [String] = []

    @Flag(name: [.customShort("k"), .long], help: "Accept any server certificate and host name (pins still apply).")
    var insecure = false

    mutating func validate() throws {
        if key != nil, cert == nil { throw ValidationError("--key needs --cert") }
        if pass != nil, cert == nil { throw ValidationError("--pass needs --cert") }
        for value in pin {
            let prefix = "sha256/"
            guard value.hasPrefix(prefix), let digest = Data(base64Encoded: String(value.dropFirst(prefix.count))), digest.count == 32 else {
                throw ValidationError("a pin reads sha256/ followed by the base64 of 32 bytes: \(value)")
            }
        }
    }

    /// The policy the flags describe: the default one, `.publicKey` pinning
    /// with `--pin`, invalid chains and host names accepted with `--insecure`,
    /// `--cacert`'s certificates trusted besides the system store. Throws a
    /// `ToolFailure` (77) when the `--cacert` file is unusable.
    func securityPolicy() throws -> SecurityPolicy {
        // Never `init(pinningMode:)`: it would also pin .cer files found next to the executable.
        let policy = pin.isEmpty ? SecurityPolicy.default() : SecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [])
        policy.pinnedPublicKeyHashes = Set(pin)
        if insecure {
            policy.allowInvalidCertificates = true
            policy.validatesDomainName = false
        }
        if let cacert {
            guard let contents = FileManager.default.contents(atPath: cacert) else {
                throw ToolFailure(status: ExitStatus.caCertificateFile, message: "cannot read the CA certificate file \(cacert)")
            }
            let certificates = CertificateFile.derCertificates(in: contents)
            guard !certificates.isEmpty else {
                throw ToolFailure(status: ExitStatus.caCertificateFile, message: "no PEM or DER certificate in \(cacert)")
            }
            policy.additionalTrustedCertificates = certificates
        }
        return policy
    }

    /// The client certificate `--cert`/`--key`/`--pass` name, or nil. Throws
    /// a `ToolFailure` (58) when it cannot be loaded.
    func clientCertificate() throws -> ClientCertificate? {
        guard let cert else { return nil }
        guard let contents = FileManager.default.contents(atPath: cert) else {
            throw ToolFailure(status: ExitStatus.clientCertificate, message: "cannot read the client certificate \(cert)")
        }
        do {
            if CertificateFile.isPEM(contents) {
                return try ClientCertificate.pem(certificateChainFile: URL(fileURLWithPath: cert),
                                                 privateKeyFile: URL(fileURLWithPath: key ?? cert), passphrase: pass)
            }
            if key != nil {
                throw ToolFailure(status: ExitStatus.clientCertificate, message: "--key goes with a PEM --cert; \(cert) is not PEM (PKCS#12 holds its key)")
            }
            return try ClientCertificate.pkcs12(contents, passphrase: pass)
        } catch let failure as ToolFailure {
            throw failure
        } catch {
            throw ToolFailure(status: ExitStatus.clientCertificate, message: "client certificate \(cert): \(error.localizedDescription)")
        }
    }
}

/// Certificates read from a file that holds PEM blocks or one DER certificate.
enum CertificateFile {
    private static let begin = "-----BEGIN CERTIFICATE-----"
    private static let end = "-----END CERTIFICATE-----"

    /// Whether `contents` is PEM text (any `-----BEGIN` block).
    static func isPEM(_ contents: Data) -> Bool {
        String(decoding: contents.prefix(64 * 1024), as: UTF8.self).contains("-----BEGIN ")
    }

    /// The DER certificates in `contents`: every PEM certificate block, or the
    /// whole file when it is one DER certificate. Anything that does not parse
    /// as a certificate is left out.
    static func derCertificates(in contents: Data) -> [Data] {
        let candidates: [Data]
        if isPEM(contents) {
            let text = String(decoding: contents, as: UTF8.self)
            candidates = text.components(separatedBy: begin).dropFirst().compactMap { (block: String) -> Data? in
                guard let stop = block.range(of: end) else { return nil }
                let base64 = block[..<stop.lowerBound].filter { !$0.isWhitespace }
                return Data(base64Encoded: String(base64))
            }
        } else {
            candidates = [contents]
        }
        // A certificate whose public key can be read is a well-formed one.
        return candidates.filter { SecurityPolicy.publicKeyHash(forCertificate: $0) != nil }
    }
}
