import CAFOpenSSL
import Foundation

/// The outcome of building and verifying one chain (one `SecTrustEvaluate`).
struct ChainVerification {
    /// Why the chain is not valid, or `nil` when it is.
    var failure: SecurityPolicyError?
    /// The chain as OpenSSL built it, leaf first, anchor included when one was
    /// reached; as far as it got when the chain is not trusted.
    var chain: [Certificate]
    /// The first breach of the TLS floor (key size, signature digest, a CA
    /// certificate as the leaf), also when `failure` names something else
    /// first: `allowInvalidCertificates` forgives the rest, never this.
    var floorFailure: SecurityPolicyError? = nil
    /// Whether `floorFailure` is a CA certificate used as the leaf.
    var floorIsCAAsLeaf = false

    /// Whether the chain (and host, when one was checked) is valid.
    var isValid: Bool { failure == nil }
}

/// Chain building, verification and host matching on OpenSSL.
enum ChainVerifier {
    /// Verifies `leaf` + `intermediates` against `store`.
    /// - Parameters:
    ///   - sslServer: check the chain for TLS server use (2.7's `SecPolicyCreateSSL`)
    ///     rather than as a plain X.509 chain (`SecPolicyCreateBasicX509`).
    ///   - host: when non-nil, the leaf must also match this name (RFC 6125).
    static func verify(leaf: Certificate, intermediates: [Certificate], store: TrustStore,
                       at date: Date?, sslServer: Bool, host: String?) -> ChainVerification {
        guard let untrusted = CertificateStack(intermediates) else {
            return ChainVerification(failure: SecurityPolicyError(.invalidChain, detail: "out of memory"), chain: [])
        }
        var result = cafssl_verify_result()
        var built: OpaquePointer?
        let ran = cafssl_verify(store.handle, leaf.handle, untrusted.handle, date.map(unixSeconds) ?? -1,
                                sslServer ? 1 : 0, store.acceptsPartialChains ? 1 : 0, &result, &built)
        let chain = built.map { CertificateStack(owning: $0).certificates } ?? [leaf]
        guard ran == 1 else {
            return ChainVerification(failure: SecurityPolicyError(.invalidChain, detail: "chain verification could not run"),
                                     chain: chain)
        }
        var floor: SecurityPolicyError?
        if result.floor_code != 0 {
            var breach = result
            breach.code = result.floor_code
            breach.depth = result.floor_depth
            breach.kind = CAFSSL_VERIFY_INVALID
            floor = SecurityPolicyError(verifyResult: breach)
        }
        if result.kind != CAFSSL_VERIFY_OK {
            return ChainVerification(failure: SecurityPolicyError(verifyResult: result), chain: chain, floorFailure: floor,
                                     floorIsCAAsLeaf: result.floor_is_ca_leaf != 0)
        }
        if let host, !HostnameMatcher.matches(leaf, host: host) {
            return ChainVerification(failure: SecurityPolicyError(.hostnameMismatch,
                                                                  detail: "the certificate is not valid for the host name \(host) "
                                                                    + "(only DNS and IP subjectAltNames count, never the subject CN)"),
                                     chain: chain)
        }
        return ChainVerification(failure: nil, chain: chain.isEmpty ? [leaf] : chain)
    }

    /// Whole seconds since 1970, clamped to 1970...9999 so no `Date` can trap the
    /// conversion or be mistaken for "now" (a negative value).
    static func unixSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return seconds > 0 ? 253_402_300_799 : 0 }
        return Int64(min(max(seconds, 0), 253_402_300_799).rounded(.down))
    }
}
