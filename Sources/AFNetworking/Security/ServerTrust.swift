import Foundation

/// The certificates a server presented, with the context to judge them
/// (the Linux stand-in for `SecTrustRef`).
public struct ServerTrust: Sendable {
    /// DER certificates, leaf first, exactly as the server sent them.
    public var certificates: [Data]
    /// DER trust anchors to use instead of the system trust store, or `nil` for the system store.
    public var anchorCertificates: [Data]?
    /// The instant the chain must be valid at, or `nil` for "now".
    public var verificationDate: Date?

    /// Creates a trust to evaluate.
    /// - Parameters:
    ///   - certificates: DER certificates, leaf first, as the server sent them.
    ///   - anchorCertificates: DER anchors; `nil` means OpenSSL's default store
    ///     (`/etc/ssl/certs`, honouring `SSL_CERT_FILE` / `SSL_CERT_DIR`).
    ///   - verificationDate: when the chain must be valid; `nil` means now.
    public init(certificates: [Data], anchorCertificates: [Data]? = nil, verificationDate: Date? = nil) {
        self.certificates = certificates
        self.anchorCertificates = anchorCertificates
        self.verificationDate = verificationDate
    }
}
