import Foundation

/// TEMPORARY minimal policy until the OpenSSL evaluation lands.
public enum SSLPinningMode: Int { case none, publicKey, certificate }

open class SecurityPolicy: NSObject {
    public static func `default`() -> SecurityPolicy { SecurityPolicy(pinningMode: .none) }
    public init(pinningMode: SSLPinningMode) { sslPinningMode = pinningMode }
    public private(set) var sslPinningMode: SSLPinningMode
    public var pinnedCertificates: [Data]?
    public var allowInvalidCertificates = false
    public var validatesDomainName = true
}
