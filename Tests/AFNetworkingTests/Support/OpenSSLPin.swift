import Foundation
import XCTest

/// SPKI pins computed by the openssl command line, an oracle independent of
/// `SecurityPolicy.publicKeyHash`: the pin curl, OkHttp and HPKP documents give
/// for a certificate (SHA-256 over the DER SubjectPublicKeyInfo, base64).
enum OpenSSLPin {
    /// The `sha256/…` pin of the certificate in `file` (PEM or DER, as `form` says).
    static func pin(ofCertificateFile file: String, form: String = "PEM") throws -> String {
        let openssl = try Fixtures.requireBinary("openssl", ["/usr/bin/openssl"])
        let quoted = "'" + file.replacingOccurrences(of: "'", with: "'\\''") + "'"
        let script = "set -o pipefail; \(openssl) x509 -inform \(form) -in \(quoted) -pubkey -noout"
            + " | \(openssl) pkey -pubin -outform DER | \(openssl) dgst -sha256 -binary | base64"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", script]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let base64 = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, Data(base64Encoded: base64)?.count == 32 else {
            throw NSError(domain: "OpenSSLPin", code: Int(process.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "openssl gave no pin for \(file): \(base64)"])
        }
        return "sha256/" + base64
    }

    /// The pin of a DER certificate held in memory.
    static func pin(ofDER der: Data) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("afn-pin-\(UUID().uuidString).der")
        try der.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try pin(ofCertificateFile: file.path, form: "DER")
    }
}
