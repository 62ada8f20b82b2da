import CAFOpenSSL
import Foundation

/// SPKI SHA-256 pins in OkHttp's notation: `sha256/` + base64 of the SHA-256 of
/// the DER SubjectPublicKeyInfo.
enum PublicKeyPins {
    /// The prefix every pin string carries.
    static let prefix = "sha256/"

    /// The 32-byte digest a pin string stands for, or `nil` if it is not a pin.
    static func digest(fromPin pin: String) -> Data? {
        let trimmed = pin.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix(prefix),
              let digest = Data(base64Encoded: String(trimmed.dropFirst(prefix.count))),
              digest.count == 32 else { return nil }
        return digest
    }

    /// The SHA-256 of `data`.
    static func sha256(_ data: Data) -> Data? {
        var digest = Data(count: 32)
        let ok = digest.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { input in
                guard let outBase = out.bindMemory(to: UInt8.self).baseAddress else { return Int32(0) }
                return cafssl_sha256(input.bindMemory(to: UInt8.self).baseAddress, input.count, outBase)
            }
        }
        return ok == 1 ? digest : nil
    }

    /// The pin string of a DER SubjectPublicKeyInfo.
    static func pin(forSubjectPublicKeyInfo spki: Data) -> String? {
        sha256(spki).map { prefix + $0.base64EncodedString() }
    }
}
