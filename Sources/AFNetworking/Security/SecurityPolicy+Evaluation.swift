@_spi(AFNetworkingInternal) import AFNetworkingTransport
import CAFOpenSSL
import Foundation

extension SecurityPolicy {
    /// Longest chain a server may present; real chains have 2–5 certificates.
    static let maximumChainLength = 32

    /// The work of `evaluate(_:forDomain:)` (declared `open` in the class body,
    /// SecurityPolicy.swift, because Swift cannot override a member declared in
    /// an extension); the steps are listed there.
    func evaluateChain(_ trust: ServerTrust, forDomain domain: String?) -> Result<Void, SecurityPolicyError> {
        let presented: [Certificate]
        switch SecurityPolicy.parseChain(trust.certificates) {
        case .success(let certificates): presented = certificates
        case .failure(let error): return .failure(error)
        }
        // parseChain guarantees at least one certificate.
        guard let leaf = presented.first else { return .failure(SecurityPolicyError(.malformedCertificate)) }
        let intermediates = Array(presented.dropFirst())

        // One snapshot of the settings for the whole evaluation: another thread may
        // change the (shared) policy meanwhile.
        let settings = self.settings
        let pins = settings.pins
        let allowInvalidCertificates = settings.allowInvalidCertificates
        let validatesDomainName = settings.validatesDomainName
        let hasPins = pins.pinnedCertificateCount > 0
            || (sslPinningMode == .publicKey && !pins.publicKeyDigests.isEmpty)
        if domain != nil, allowInvalidCertificates, validatesDomainName, sslPinningMode == .none || !hasPins {
            return .failure(SecurityPolicyError(.domainValidationRequiresPinning,
                                                detail: Self.missingPinsAdvice(mode: sslPinningMode)))
        }

        let host = validatesDomainName ? domain : nil
        let verifyAgainst = { (store: TrustStore) in
            ChainVerifier.verify(leaf: leaf, intermediates: intermediates, store: store,
                                 at: trust.verificationDate, sslServer: validatesDomainName, host: host)
        }
        if sslPinningMode == .none && allowInvalidCertificates {
            return .success(())
        }
        guard let anchors = trustStore(for: trust, adding: settings.additionalTrustedCertificates) else {
            return .failure(SecurityPolicyError(.invalidChain, detail: "the trust store could not be loaded"))
        }
        let verification = verifyAgainst(anchors)
        // Public-key pins keep the floor even when invalid certificates are
        // allowed (certificate pins verify again against the pins, floor
        // included): a CA certificate as the leaf passes only when its own
        // key is the pinned one.
        if allowInvalidCertificates, sslPinningMode == .publicKey, let floor = verification.floorFailure,
           !(verification.floorIsCAAsLeaf && Self.keyIsPinned(of: leaf, in: pins)) {
            return .failure(floor)
        }
        if var failure = verification.failure, !allowInvalidCertificates {
            // The pins may have matched on their own: then say which setting is
            // missing rather than only that the root is unknown.
            if failure.reason == .untrustedRoot, sslPinningMode != .none,
               pinFailure(pins, verification: verification, verifyAgainst: verifyAgainst) == nil {
                failure.detail = Self.untrustedPinsAdvice(mode: sslPinningMode, chainFailure: failure.detail,
                                                          explicitAnchors: trust.anchorCertificates != nil)
            }
            return .failure(failure)
        }
        return pinFailure(pins, verification: verification, verifyAgainst: verifyAgainst).map { .failure($0) } ?? .success(())
    }

    /// Steps 6 and 7: why the pins refuse the chain, or `nil` when they accept
    /// it (always `nil` in mode `.none`). `verification` is step 3's outcome.
    private func pinFailure(_ pins: PinSnapshot, verification: ChainVerification,
                            verifyAgainst: (TrustStore) -> ChainVerification) -> SecurityPolicyError? {
        switch sslPinningMode {
        case .none:
            return nil
        case .certificate:
            guard let pinStore = TrustStore.anchored(by: pins.anchors) else {
                return SecurityPolicyError(.invalidChain, detail: "the pinned anchors could not be loaded")
            }
            let pinnedVerification = verifyAgainst(pinStore)
            if var failure = pinnedVerification.failure {
                // Not reaching a pinned certificate is a pin mismatch, not an unknown root.
                if failure.reason == .untrustedRoot { failure.reason = .pinMismatch }
                return failure
            }
            // As 2.7 reads the trust's chain after re-evaluating it with the pinned
            // anchors: the chain built up to a pinned certificate, which is where a
            // pinned private root appears (the system store never built it).
            let pinnedInChain = pinnedVerification.chain.contains { certificate in
                certificate.derData.map(pins.certificateDERs.contains) ?? false
            }
            return pinnedInChain ? nil : SecurityPolicyError(.pinMismatch, detail: "no certificate of the chain is pinned")
        case .publicKey:
            // A pinned key counts where the chain below it hangs from it: the
            // handshake proves the server holds the leaf's key, and each
            // signature up to the pinned certificate proves the rest. (With
            // `allowInvalidCertificates` the chain was built by names alone: a
            // leaf signed by any key, naming the pinned CA as its issuer and
            // sent with that CA's certificate, would otherwise pass.)
            let chain = verification.chain
            var linked = true
            for (index, certificate) in chain.enumerated() {
                if index > 0 {
                    linked = linked && cafssl_cert_signed_by(chain[index - 1].handle, certificate.handle) == 1
                    guard linked else { break }
                }
                if Self.keyIsPinned(of: certificate, in: pins) { return nil }
            }
            return SecurityPolicyError(.pinMismatch, detail: linked ? "no public key of the chain is pinned"
                                                                    : "no public key of the chain is pinned (above a certificate its issuer did not sign)")
        }
    }

    /// Whether `certificate`'s own public key is among the pins.
    private static func keyIsPinned(of certificate: Certificate, in pins: PinSnapshot) -> Bool {
        guard let key = certificate.subjectPublicKeyInfo else { return false }
        if pins.publicKeys.contains(key) { return true }
        return !pins.publicKeyDigests.isEmpty && PublicKeyPins.sha256(key).map(pins.publicKeyDigests.contains) == true
    }

    /// Parses the presented chain, refusing it whole if any part is bad.
    static func parseChain(_ ders: [Data]) -> Result<[Certificate], SecurityPolicyError> {
        guard !ders.isEmpty else {
            return .failure(SecurityPolicyError(.malformedCertificate, detail: "the server presented no certificate"))
        }
        guard ders.count <= maximumChainLength else {
            return .failure(SecurityPolicyError(.malformedCertificate,
                                                detail: "the server presented \(ders.count) certificates"))
        }
        var certificates: [Certificate] = []
        for (index, der) in ders.enumerated() {
            guard let certificate = Certificate(der: der) else {
                return .failure(SecurityPolicyError(.malformedCertificate,
                                                    detail: "certificate \(index) is not a well-formed DER certificate"))
            }
            certificates.append(certificate)
        }
        return .success(certificates)
    }

    /// The given anchors (unparseable ones ignored), or the system store.
    static func trustStore(for trust: ServerTrust) -> TrustStore? {
        guard let anchorDERs = trust.anchorCertificates else { return TrustStore.system() }
        return TrustStore.anchored(by: anchorDERs.compactMap(Certificate.init(der:)))
    }

    /// The anchors to verify `trust` against: its own, else the system store
    /// with `extra` added.
    func trustStore(for trust: ServerTrust, adding extra: [Data]) -> TrustStore? {
        guard trust.anchorCertificates == nil, !extra.isEmpty else { return SecurityPolicy.trustStore(for: trust) }
        return extendedStore(adding: extra)
    }

    /// The system store with `extra` added: kept by the policy (and its
    /// copies), and shared by every policy with the same anchors.
    func extendedStore(adding extra: [Data]) -> TrustStore? {
        if let built = state[\.extendedStore] { return built }
        // Found or made outside the policy's lock (making one reads the system bundle).
        guard let store = TrustStore.system(adding: extra) else { return nil }
        state.withLock { state in
            if state.additionalTrustedCertificates == extra { state.extendedStore = store }
        }
        return store
    }

    /// Makes the policy's extended store ready before a handshake needs it:
    /// the handshake runs on the network thread, which must not read the
    /// system bundle from disk.
    func prepareExtendedStore() {
        let extra = state[\.additionalTrustedCertificates]
        guard !extra.isEmpty else { return }
        _ = extendedStore(adding: extra)
    }

    /// The `sha256/BASE64` pin of a DER certificate's public key, for filling
    /// `pinnedPublicKeyHashes`; `nil` if `certificate` is not a DER certificate.
    public static func publicKeyHash(forCertificate certificate: Data) -> String? {
        Certificate(der: certificate)?.subjectPublicKeyInfo.flatMap(PublicKeyPins.pin(forSubjectPublicKeyInfo:))
    }
}
