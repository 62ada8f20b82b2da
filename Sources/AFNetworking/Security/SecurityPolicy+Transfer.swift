@_spi(AFNetworkingInternal) import AFNetworkingTransport
import CAFOpenSSL
import Foundation

/// How a policy turns into the transport's certificate checks.
extension SecurityPolicy {
    /// True when the policy asks exactly what OpenSSL's standard verification
    /// does (a chain to a trusted root, the host name, no pins): libcurl then
    /// verifies natively. Any other policy runs inside the handshake.
    /// A subclass never is: its overrides decide.
    var isStandardVerification: Bool {
        guard !isSubclassInstance else { return false }
        let settings = self.settings
        return sslPinningMode == .none && !settings.allowInvalidCertificates && settings.validatesDomainName
            && settings.pinnedPublicKeyHashes.isEmpty && settings.additionalTrustedCertificates.isEmpty
    }

    /// Whether this is an instance of a subclass (whose overrides of
    /// `evaluateServerTrust(_:forDomain:)` or `evaluate(_:forDomain:)` judge).
    var isSubclassInstance: Bool { type(of: self) != SecurityPolicy.self }

    /// What a request is judged by: a copy, so later changes to this object
    /// do not reach it — unless the copy would not be of this object's class
    /// (a subclass that does not override `copy(with:)`): then this object
    /// itself, so its overrides still judge.
    var evaluationSnapshot: SecurityPolicy {
        guard let copy = copy() as? SecurityPolicy, type(of: copy) == type(of: self) else { return self }
        return copy
    }

    /// Which connections and cached answers a request under this policy may
    /// share: those judged alike. For a subclass (whose own state the
    /// library cannot see), only those of this very object.
    var partitionKey: String {
        guard isSubclassInstance else { return handshakeFingerprint }
        return "\(handshakeFingerprint)|\(String(reflecting: type(of: self)))|\(instanceSerial)"
    }

    var transferVerification: TLSVerification {
        var verification = TLSVerification()
        guard !isStandardVerification else { return verification }
        // Kept by this policy first, so the snapshot (and every later one) carries them.
        prepareExtendedStore()
        _ = handshakeFingerprint
        // A snapshot: the caller may change the policy while the request runs.
        let snapshot = evaluationSnapshot
        // The evaluation runs on the network thread inside the handshake and
        // must not read the system trust store from disk there: load it now,
        // on the thread building the request (it is cached afterwards).
        _ = TrustStore.system()
        // Again on the snapshot: anchors changed between the two calls leave it without a store.
        snapshot.prepareExtendedStore()
        verification.evaluator = HandshakeEvaluator(policy: snapshot)
        verification.partition = partitionKey
        // OpenSSL must abort the handshake when the policy says no (the
        // transfer makes the context require peer verification and our
        // callback decides); the policy checks the name.
        verification.verifiesPeer = true
        verification.verifiesHost = false
        return verification
    }

    /// Identifies what the policy would decide: SHA-256 over its settings and
    /// pins, so two policies share connections only if they judge alike.
    var handshakeFingerprint: String {
        // One snapshot, so the fingerprint describes settings that existed together.
        let settings = self.settings
        if let known = settings.fingerprint { return known }
        let fingerprint = Self.fingerprint(of: settings, mode: sslPinningMode)
        state.withLock { state in
            if state.generation == settings.generation { state.fingerprint = fingerprint }
        }
        return fingerprint
    }

    private static func fingerprint(of settings: State, mode sslPinningMode: SSLPinningMode) -> String {
        var canonical = Data("\(sslPinningMode.rawValue)|\(settings.allowInvalidCertificates)|\(settings.validatesDomainName)|".utf8)
        for certificate in (settings.pinnedCertificates ?? []).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            canonical.append(contentsOf: PublicKeyPins.sha256(certificate) ?? certificate)
            canonical.append(UInt8(ascii: "|"))
        }
        for pin in settings.pinnedPublicKeyHashes.sorted() {
            canonical.append(contentsOf: Data(pin.utf8))
            canonical.append(UInt8(ascii: "|"))
        }
        canonical.append(contentsOf: Data("anchors|".utf8))
        for certificate in settings.additionalTrustedCertificates.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            canonical.append(contentsOf: PublicKeyPins.sha256(certificate) ?? certificate)
            canonical.append(UInt8(ascii: "|"))
        }
        return (PublicKeyPins.sha256(canonical) ?? canonical).base64EncodedString()
    }
}

/// What the engine calls inside the handshake: the policy's handshake entry
/// point, behind the engine's protocol. A wrapper rather than a conformance of
/// `SecurityPolicy` itself, so the public class gains no second
/// `evaluate(peerChainDER:host:)` overload.
struct HandshakeEvaluator: PeerTrustEvaluator {
    let policy: SecurityPolicy

    func evaluate(peerChainDER: [Data], host: String) -> (any PeerRejection)? {
        policy.evaluate(peerChainDER: peerChainDER, host: host, anchorCertificates: nil)
    }
}

/// A rejection the engine can turn into the failed transfer's error.
extension SecurityPolicyError: PeerRejection {}
