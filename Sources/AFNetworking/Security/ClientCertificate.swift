@_spi(AFNetworkingInternal) import AFNetworkingTransport
import CAFOpenSSL
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client certificate and its private key, presented in the TLS handshake
/// (mutual TLS between services). AFNetworking 2.x presented one through the
/// challenge block with `NSURLCredential(identity:…)`; Linux has no
/// `SecIdentity`, so the identity is given to an operation, a manager or a
/// session manager up front (`clientCertificate`).
///
/// The factories check that the certificate and key parse and belong
/// together, and throw an `NSError` (`NSURLErrorDomain`,
/// `NSURLErrorClientCertificateRejected`) saying why when they do not. A
/// server that refuses the certificate sent makes the request fail with
/// `NSURLErrorClientCertificateRejected`; one that demands a certificate when
/// none was sent, with `NSURLErrorClientCertificateRequired` (servers such as
/// nginx answer either case with an HTTP 400 page instead).
public struct ClientCertificate: Sendable, Equatable {
    let identity: ClientIdentity

    private init(_ identity: ClientIdentity) {
        self.identity = identity
    }

    /// A PEM certificate chain (leaf first) and PEM private key, from memory.
    public static func pem(certificateChain: Data, privateKey: Data, passphrase: String? = nil) throws -> ClientCertificate {
        var message = [CChar](repeating: 0, count: 512)
        let usable = certificateChain.withUnsafeBytes { chain in
            privateKey.withUnsafeBytes { key in
                cafssl_check_pem_identity(chain.bindMemory(to: UInt8.self).baseAddress, chain.count,
                                          key.bindMemory(to: UInt8.self).baseAddress, key.count, passphrase, &message, message.count)
            }
        }
        guard usable == 1 else { throw invalid(text(message)) }
        return ClientCertificate(ClientIdentity(format: .pem(certificateChain: certificateChain, privateKey: privateKey),
                                                passphrase: passphrase, fingerprint: fingerprint(certificateChain + privateKey)))
    }

    /// A PEM certificate chain and private key read from files.
    public static func pem(certificateChainFile: URL, privateKeyFile: URL, passphrase: String? = nil) throws -> ClientCertificate {
        try pem(certificateChain: read(certificateChainFile), privateKey: read(privateKeyFile), passphrase: passphrase)
    }

    /// A PKCS#12 bundle (`.p12` / `.pfx`) holding the certificate and key, from memory.
    public static func pkcs12(_ data: Data, passphrase: String? = nil) throws -> ClientCertificate {
        var message = [CChar](repeating: 0, count: 512)
        let usable = data.withUnsafeBytes { bundle in
            cafssl_check_pkcs12_identity(bundle.bindMemory(to: UInt8.self).baseAddress, bundle.count, passphrase, &message, message.count)
        }
        guard usable == 1 else { throw invalid(text(message)) }
        return ClientCertificate(ClientIdentity(format: .pkcs12(data), passphrase: passphrase, fingerprint: fingerprint(data)))
    }

    /// A PKCS#12 bundle read from a file.
    public static func pkcs12(contentsOf url: URL, passphrase: String? = nil) throws -> ClientCertificate {
        try pkcs12(read(url), passphrase: passphrase)
    }

    /// The NUL-terminated message a check wrote.
    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func read(_ url: URL) throws -> Data {
        do {
            return try Data(contentsOf: url)
        } catch {
            throw invalid("\(url.path) cannot be read (\(error.localizedDescription))", underlying: error as NSError)
        }
    }

    private static func fingerprint(_ data: Data) -> String {
        (PublicKeyPins.sha256(data) ?? Data()).map { String(format: "%02x", $0) }.joined()
    }

    private static func invalid(_ reason: String, underlying: NSError? = nil) -> NSError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: "The client certificate cannot be used: \(reason)."]
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return NSError(domain: NSURLErrorDomain, code: NSURLErrorClientCertificateRejected, userInfo: info)
    }
}
