import Foundation

/// Why a `SecurityPolicy` refused a server trust (not part of AFNetworking 2.7,
/// which only answered yes or no).
public enum SecurityPolicyFailureReason: String, Sendable, CaseIterable {
    /// A certificate of the chain has expired at the verification date.
    case expired
    /// A certificate of the chain is not valid yet at the verification date.
    case notYetValid
    /// The leaf certificate is not valid for the requested host.
    case hostnameMismatch
    /// The chain does not lead to a trusted anchor (self-signed, unknown issuer, …).
    case untrustedRoot
    /// The chain is trusted but no certificate or public key of it is pinned.
    case pinMismatch
    /// The chain is empty, or a certificate is not well-formed DER, or is too large.
    case malformedCertificate
    /// The chain is broken some other way: bad signature, CA constraints, key
    /// usage / purpose not allowing TLS server authentication, …
    case invalidChain
    /// 2.7's rule: validating the domain of a certificate that need not be
    /// trusted (`allowInvalidCertificates`) requires pinning.
    case domainValidationRequiresPinning
}
