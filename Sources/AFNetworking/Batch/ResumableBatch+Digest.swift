import CAFOpenSSL
import Foundation

extension ResumableBatch {
    /// Lowercase hex SHA-256 of `data` (OpenSSL's, through the package's shim:
    /// Foundation on Linux has no digest API).
    static func sha256Hex(_ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        let ok = data.withUnsafeBytes { input in
            cafssl_sha256(input.bindMemory(to: UInt8.self).baseAddress, input.count, &digest)
        }
        // EVP_Digest fails only without memory; an empty digest then never matches a manifest's.
        guard ok == 1 else { return "" }
        return digest.map { String(format: "%02x", $0) }.joined()
    }

    /// What identifies a list given as entries (no list text): each entry's
    /// id, URL, dependencies and output path, one line each.
    static func canonicalContent(of entries: [ResumableBatchEntry]) -> Data {
        let lines = entries.map { entry in
            [entry.id, entry.request.httpMethod ?? "GET", entry.request.url?.absoluteString ?? "",
             entry.dependencies.joined(separator: ","), entry.outputPath ?? ""].joined(separator: "\t")
        }
        return Data(lines.joined(separator: "\n").utf8)
    }
}
