import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

// AFNetworking 2.x spellings of the security policy, deprecated with `renamed:`
// and forwarding to the current API.

// MARK: - Security

extension SecurityPolicy {
    /// 2.7's `+defaultPolicy`.
    @available(*, deprecated, renamed: "default()")
    public static func defaultPolicy() -> SecurityPolicy {
        SecurityPolicy.default()
    }

    /// 2.7's `+policyWithPinningMode:` (pinned certificates: the `.cer` files of `Bundle.main`).
    @available(*, deprecated, renamed: "init(pinningMode:)")
    public static func policyWithPinningMode(_ pinningMode: SSLPinningMode) -> SecurityPolicy {
        SecurityPolicy(pinningMode: pinningMode)
    }
}

extension SSLPinningMode {
    /// Swift 2's spelling of `AFSSLPinningModeNone`.
    @available(*, deprecated, renamed: "none")
    public static var None: SSLPinningMode { .none }

    /// Swift 2's spelling of `AFSSLPinningModePublicKey`.
    @available(*, deprecated, renamed: "publicKey")
    public static var PublicKey: SSLPinningMode { .publicKey }

    /// Swift 2's spelling of `AFSSLPinningModeCertificate`.
    @available(*, deprecated, renamed: "certificate")
    public static var Certificate: SSLPinningMode { .certificate }
}
