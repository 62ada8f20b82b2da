import Foundation

extension SecurityPolicy {
    /// The entry point for the TLS layer: judges the chain a server sent during
    /// the handshake, with 2.7's algorithm and this policy's settings.
    ///
    /// Call it from OpenSSL's certificate verification (e.g. a callback set with
    /// `SSL_CTX_set_cert_verify_callback` from `CURLOPT_SSL_CTX_FUNCTION`) with:
    /// - `peerChainDER`: the certificates exactly as the server sent them, leaf
    ///   first, DER (`X509_STORE_CTX_get0_cert` then `X509_STORE_CTX_get0_untrusted`,
    ///   or `SSL_get_peer_cert_chain` on the client side, each through `i2d_X509`,
    ///   e.g. `cafssl_cert_to_der`);
    /// - `host`: the request URL's host (DNS name or IP literal, brackets allowed),
    ///   which is the domain 2.7 passed;
    /// - `anchorCertificates`: DER anchors replacing the system store (`nil` =
    ///   OpenSSL's default store, honouring `SSL_CERT_FILE` / `SSL_CERT_DIR`).
    ///
    /// Returns `nil` to accept, or the rejection; `error.nsError(failingURL:)`
    /// gives the operation's `NSURLErrorServerCertificateUntrusted` error. It is
    /// synchronous, touches no global state besides the shared system store, and
    /// leaves the thread's OpenSSL error queue as it found it, so it is safe on
    /// libcurl's thread inside the handshake. Evaluate a `copy()` of the
    /// operation's policy if the caller may mutate the policy meanwhile.
    func evaluate(peerChainDER: [Data], host: String, anchorCertificates: [Data]? = nil) -> SecurityPolicyError? {
        let trust = ServerTrust(certificates: peerChainDER, anchorCertificates: anchorCertificates)
        if isSubclassInstance {
            // 2.7's entry point decides, as it did there (its default asks
            // `evaluate(_:forDomain:)`, which a subclass may override instead);
            // a refusal's reason comes from `evaluate`, or names the override.
            // The override runs here, inside the handshake on the library's
            // network thread (documented: it must be quick and not block).
            guard !evaluateServerTrust(trust, forDomain: host) else { return nil }
            if case .failure(let error) = evaluate(trust, forDomain: host) { return error }
            return SecurityPolicyError(.invalidChain, detail: "\(String(reflecting: type(of: self))).evaluateServerTrust(_:forDomain:) refused it")
        }
        switch evaluate(trust, forDomain: host) {
        case .success: return nil
        case .failure(let error): return error
        }
    }
}
