import Foundation

/// The words of a refusal that a setting would have avoided: they name the
/// setting, so a reader knows what to change without reading the algorithm.
extension SecurityPolicy {
    /// Step 2's refusal: `allowInvalidCertificates` with `validatesDomainName`
    /// and nothing pinned.
    static func missingPinsAdvice(mode: SSLPinningMode) -> String {
        let missing = mode == .none
            ? "the pinning mode is .none"
            : "pinnedCertificates (and pinnedPublicKeyHashes) are empty"
        return "allowInvalidCertificates with validatesDomainName requires pinning, but \(missing): "
            + "pin the server's certificate or its CA (SecurityPolicy(pinningMode: .certificate, withPinnedCertificates:)), "
            + "trust the CA with additionalTrustedCertificates instead of allowInvalidCertificates, "
            + "or set validatesDomainName = false to accept any certificate"
    }

    /// A chain that reaches the pins but no trusted anchor, and
    /// `allowInvalidCertificates` is off: step 3 refused before the pins counted.
    /// `explicitAnchors`: the trust named its own anchors, which replace the
    /// system store and `additionalTrustedCertificates` alike.
    static func untrustedPinsAdvice(mode: SSLPinningMode, chainFailure: String, explicitAnchors: Bool) -> String {
        let matched = mode == .publicKey ? "a pinned public key matched" : "the chain leads to a pinned certificate"
        let anchors = explicitAnchors ? "the trust's anchorCertificates" : "additionalTrustedCertificates"
        return "\(matched), but not to a trusted anchor (\(chainFailure)); pins restrict trust, they do not grant it: "
            + "add the CA (or the self-signed certificate) to \(anchors), "
            + "or set allowInvalidCertificates = true to trust the pins alone"
    }
}
