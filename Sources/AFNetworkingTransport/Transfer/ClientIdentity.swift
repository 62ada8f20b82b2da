import CAFCurl
import Foundation

/// A client certificate and its private key, presented in the TLS handshake
/// of every connection a transfer opens (mutual TLS). Checked by its maker
/// before it gets here; libcurl receives copies of the bytes.
package struct ClientIdentity: Sendable, Equatable {
    package enum Format: Sendable, Equatable {
        /// A PEM chain (leaf first) and a PEM private key.
        case pem(certificateChain: Data, privateKey: Data)
        /// A PKCS#12 bundle holding both.
        case pkcs12(Data)
    }

    package let format: Format
    package let passphrase: String?
    /// Names the identity in connection partitions (a hash of its bytes):
    /// a connection opened with one identity never carries a request that
    /// should present another, or none.
    package let fingerprint: String

    package init(format: Format, passphrase: String?, fingerprint: String) {
        self.format = format
        self.passphrase = passphrase
        self.fingerprint = fingerprint
    }
}

extension Transfer {
    /// Hands the identity to libcurl (CURLOPT_SSLCERT_BLOB and friends).
    func configureClientIdentity() throws {
        guard let identity = options.clientIdentity else { return }
        switch identity.format {
        case .pem(let chain, let key):
            try easy.set(CURLOPT_SSLCERT_BLOB, blob: chain)
            try easy.set(CURLOPT_SSLCERTTYPE, "PEM")
            try easy.set(CURLOPT_SSLKEY_BLOB, blob: key)
            try easy.set(CURLOPT_SSLKEYTYPE, "PEM")
        case .pkcs12(let bundle):
            try easy.set(CURLOPT_SSLCERT_BLOB, blob: bundle)
            try easy.set(CURLOPT_SSLCERTTYPE, "P12")
        }
        if let passphrase = identity.passphrase { try easy.set(CURLOPT_KEYPASSWD, passphrase) }
    }
}

extension EasyHandle {
    func set(_ option: CURLoption, blob: Data) throws {
        try blob.withUnsafeBytes { buffer in
            try cafcurl_easy_setopt_blob(raw, option, buffer.baseAddress, buffer.count).check("option \(option.rawValue) (blob)")
        }
    }
}
