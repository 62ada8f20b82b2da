import Foundation

/// How a `SecurityPolicy` pins the server's certificate chain
/// (AFNetworking 2.7's `AFSSLPinningMode`).
///
/// The raw values are 2.7's, so archived policies keep their meaning.
public enum SSLPinningMode: UInt, Sendable {
    /// No pinning: the chain only has to be trusted by the trust store.
    case none = 0
    /// A public key (SubjectPublicKeyInfo) of the built chain must match a pinned one.
    case publicKey = 1
    /// A certificate of the built chain must be one of the pinned certificates.
    case certificate = 2
}
