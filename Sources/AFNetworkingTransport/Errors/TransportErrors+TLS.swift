import CAFCurl
import Foundation

/// Why a TLS connection was refused, in words a reader can act on: the
/// same phrases whichever path found the problem (libcurl's own verification
/// or the package's verifier inside the handshake).
package enum TLSRejectionReason {
    /// The reason for OpenSSL's `X509_V_ERR_*` code, or nil for codes without a specific reason.
    package static func phrase(forVerifyResult code: Int) -> String? {
        switch code {
        case 9: return "the certificate is not valid yet"
        case 10: return "the certificate has expired"
        case 13, 14: return "the certificate's validity dates are malformed"
        case 2, 20, 21: return "the certificate was issued by an unknown certifying authority"
        case 18, 19: return "the certificate chain ends in a self-signed certificate that is not trusted"
        case 7: return "the certificate's signature does not verify"
        case 26: return "the certificate is not meant for TLS servers (its extended key usage lacks serverAuth)"
        case 37: return "the server's own certificate is a CA certificate (basicConstraints CA:TRUE)"
        case 47, 48, 49, 51, 52, 53:
            return "the certificate names a host outside its CA's name constraints"
        case 62, 64:
            return "the certificate is not valid for this host name (only DNS and IP subjectAltNames count, never the subject CN)"
        case 66: return "the server's key is too weak (RSA and DH keys need at least 2048 bits)"
        case 67: return "a CA key in the certificate chain is too weak (RSA and DH keys need at least 2048 bits)"
        case 68: return "a certificate in the chain is signed with a weak digest (SHA-1 or MD5)"
        default: return nil
        }
    }

    /// The reason for a failed handshake from libcurl's message (OpenSSL's
    /// error text), or nil when the message says nothing specific.
    package static func phrase(forHandshakeMessage message: String) -> String? {
        let text = message.lowercased()
        let oldVersion = ["unsupported protocol", "protocol version", "no protocols available", "wrong ssl version",
                          "unsupported ssl version", "legacy sigalg disallowed"]
        if oldVersion.contains(where: text.contains) {
            return "the server offers only TLS versions older than 1.2, which are refused"
        }
        if text.contains("subject name") && text.contains("host name") {
            return phrase(forVerifyResult: 62)
        }
        if text.contains("ee key too small") || text.contains("dh key too small") || text.contains("key too small") {
            return phrase(forVerifyResult: 66)
        }
        if text.contains("md too weak") || text.contains("digest algorithm too weak") {
            return phrase(forVerifyResult: 68)
        }
        if text.contains("no shared cipher") || text.contains("no cipher") || text.contains("handshake failure") {
            return "the server offers no cipher suite this client accepts"
        }
        return nil
    }
}

extension TransportErrors {
    /// The description of a TLS failure that names its reason; nil for other
    /// failures (they keep the code's own wording).
    static func tlsDescription(forURLErrorCode urlCode: Int, curlCode: CURLcode, verifyResult: Int,
                               curlMessage: String?) -> String? {
        let tlsCodes = [NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateUntrusted,
                        NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateHasUnknownRoot,
                        NSURLErrorServerCertificateNotYetValid]
        guard tlsCodes.contains(urlCode) else { return nil }
        var reason: String?
        // A verify result only describes a failed certificate check.
        if curlCode == CURLE_PEER_FAILED_VERIFICATION, verifyResult != 0 {
            reason = TLSRejectionReason.phrase(forVerifyResult: verifyResult)
        }
        if reason == nil, let curlMessage { reason = TLSRejectionReason.phrase(forHandshakeMessage: curlMessage) }
        // Failing that, OpenSSL's own words (through curl) beat a generic sentence.
        if reason == nil, let curlMessage, !curlMessage.isEmpty { reason = curlMessage }
        guard let reason else { return nil }
        var base = localizedDescription(for: urlCode)
        if base.hasSuffix(".") { base.removeLast() }
        return "\(base): \(reason)."
    }
}
