import Foundation

/// The pins of a policy in the forms evaluation needs, computed once per change
/// of `pinnedCertificates` / `pinnedPublicKeyHashes` (2.7 likewise derived its
/// pinned public keys in the setter). `SecurityPolicy` keeps it in its locked
/// state next to the properties it is built from; evaluations take a copy.
struct PinSnapshot: Sendable {
    /// Parseable pinned certificates: the anchors of `.certificate` mode.
    var anchors: [Certificate] = []
    /// Canonical DER of the pinned certificates, matched against the built chain.
    var certificateDERs: Set<Data> = []
    /// DER SubjectPublicKeyInfos of the pinned certificates.
    var publicKeys: Set<Data> = []
    /// SHA-256 digests from the well-formed `sha256/…` pins.
    var publicKeyDigests: Set<Data> = []
    /// How many certificates were pinned (2.7 counts them, parseable or not).
    var pinnedCertificateCount = 0

    init() {}

    init(certificates: [Data]?, hashes: Set<String>) {
        pinnedCertificateCount = certificates?.count ?? 0
        for der in certificates ?? [] {
            // Unparseable pins are skipped, as 2.7 skipped certificates it could
            // not extract a key from.
            guard let certificate = Certificate(der: der) else { continue }
            anchors.append(certificate)
            if let canonical = certificate.derData { certificateDERs.insert(canonical) }
            if let key = certificate.subjectPublicKeyInfo { publicKeys.insert(key) }
        }
        publicKeyDigests = Set(hashes.compactMap(PublicKeyPins.digest(fromPin:)))
    }
}
