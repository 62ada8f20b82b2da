import Foundation

/// The pins of a policy in the forms evaluation needs, computed once per change
/// of `pinnedCertificates` / `pinnedPublicKeyHashes` (2.7 likewise derived its
/// pinned public keys in the setter).
struct PinSnapshot {
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

/// A lock-guarded `PinSnapshot`, so an evaluation on a network thread always
/// sees one consistent set of pins.
final class PinSnapshotBox: @unchecked Sendable {
    private let lock = NSLock()
    private var snapshot = PinSnapshot()

    /// Rebuilds the snapshot from the policy's properties.
    func update(certificates: [Data]?, hashes: Set<String>) {
        let fresh = PinSnapshot(certificates: certificates, hashes: hashes)
        lock.lock()
        snapshot = fresh
        lock.unlock()
    }

    /// The current snapshot.
    var current: PinSnapshot {
        lock.lock()
        defer { lock.unlock() }
        return snapshot
    }
}
