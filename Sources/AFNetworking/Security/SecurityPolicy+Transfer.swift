import CAFOpenSSL
import Foundation

/// How a policy turns into the transport's certificate checks.
extension SecurityPolicy {
    /// True when the policy asks exactly what OpenSSL's standard verification
    /// does (a chain to a trusted root, the host name, no pins): libcurl then
    /// verifies natively. Any other policy runs inside the handshake.
    var isStandardVerification: Bool {
        sslPinningMode == .none && !allowInvalidCertificates && validatesDomainName && pinnedPublicKeyHashes.isEmpty
    }

    var transferVerification: TLSVerification {
        var verification = TLSVerification()
        guard !isStandardVerification else { return verification }
        // A snapshot: the caller may change the policy while the request runs.
        let snapshot = (copy() as? SecurityPolicy) ?? self
        verification.policy = snapshot
        verification.partition = snapshot.handshakeFingerprint
        // OpenSSL must abort the handshake when the policy says no (peer
        // verification on, our callback decides); the policy checks the name.
        verification.verifiesPeer = true
        verification.verifiesHost = false
        return verification
    }

    /// Identifies what the policy would decide: SHA-256 over its settings and
    /// pins, so two policies share connections only if they judge alike.
    var handshakeFingerprint: String {
        var canonical = Data("\(sslPinningMode.rawValue)|\(allowInvalidCertificates)|\(validatesDomainName)|".utf8)
        for certificate in (pinnedCertificates ?? []).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            canonical.append(contentsOf: PublicKeyPins.sha256(certificate) ?? certificate)
            canonical.append(UInt8(ascii: "|"))
        }
        for pin in pinnedPublicKeyHashes.sorted() {
            canonical.append(contentsOf: Data(pin.utf8))
            canonical.append(UInt8(ascii: "|"))
        }
        return (PublicKeyPins.sha256(canonical) ?? canonical).base64EncodedString()
    }
}
