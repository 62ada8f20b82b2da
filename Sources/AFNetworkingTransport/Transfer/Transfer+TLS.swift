import CAFCurl
import CAFOpenSSL
import Foundation

extension Transfer {
    /// Applies the package's TLS floor to every connection this transfer
    /// opens (TLS 1.2 or newer, OpenSSL security level 2 or the system's
    /// stricter one, no subject-CN host names, no CA certificate as the
    /// server's own) and installs the owner's certificate evaluator, if any,
    /// inside OpenSSL's certificate verification, so a server the floor or the
    /// evaluator rejects never receives a request byte.
    func configurePolicyVerification(_ userdata: UnsafeMutableRawPointer) throws {
        // Also said to curl, not only to OpenSSL: curl then refuses older
        // versions itself, before the context callback runs.
        try easy.set(CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2))
        try cafcurl_easy_setopt_ssl_ctx_function(easy.raw, transferSSLContextCallback).check("TLS context callback")
        try easy.set(CURLOPT_SSL_CTX_DATA, pointer: userdata)
        guard options.tls.evaluator != nil else { return }
        // A resumed session skips certificate verification: never resume.
        try easy.set(CURLOPT_SSL_SESSIONID_CACHE, false)
    }

    /// Prepares the OpenSSL context libcurl made for one new connection.
    /// Network thread, before the handshake.
    func prepareTLSContext(_ sslContext: UnsafeMutableRawPointer, userdata: UnsafeMutableRawPointer) -> Bool {
        NetworkThread.assertCurrent()
        if options.tls.evaluator != nil {
            // libcurl 7.88 asks here for an HTTPS proxy's connection too. The
            // origin's context verifies nothing itself (CURLOPT_SSL_VERIFYPEER
            // is off: the evaluator judges it); the proxy's keeps libcurl's
            // verification (CURLOPT_PROXY_SSL_VERIFYPEER, never turned off:
            // the system's trust store and the proxy's name). The policy is
            // the origin's: it never judges, or forgives, the proxy's certificate.
            if cafssl_ctx_verifies_peer(sslContext) == 1 {
                return cafssl_ctx_apply_floor(sslContext, Int32(CAFSSL_FLOOR_CHECK_LEAF | CAFSSL_FLOOR_CHECK_NAMES)) == 1
            }
            // The evaluator replaces OpenSSL's chain verification and applies the floor itself.
            guard cafssl_ctx_apply_floor(sslContext, 0) == 1 else { return false }
            cafssl_ctx_set_verify_callback(sslContext, transferVerifyCallback, userdata)
            return true
        }
        if let handshakeStore, cafssl_ctx_use_store(sslContext, handshakeStore.handle) != 1 { return false }
        var checks: Int32 = 0
        if options.tls.verifiesPeer { checks |= Int32(CAFSSL_FLOOR_CHECK_LEAF) }
        if options.tls.verifiesHost { checks |= Int32(CAFSSL_FLOOR_CHECK_NAMES) }
        return cafssl_ctx_apply_floor(sslContext, checks) == 1
    }

    /// OpenSSL's verification step for one connection: the chain the server
    /// sent, judged by the evaluator. Network thread, inside the handshake.
    func verifyPeer(_ storeContext: OpaquePointer) -> Bool {
        NetworkThread.assertCurrent()
        guard let evaluator = options.tls.evaluator else { return false }
        let count = min(Int(cafssl_store_ctx_peer_count(storeContext)), 64)
        var chain: [Data] = []
        chain.reserveCapacity(count)
        for index in 0..<count {
            let length = cafssl_store_ctx_peer_der(storeContext, Int32(index), nil, 0)
            guard length > 0 else { break }
            var der = Data(count: length)
            let written = der.withUnsafeMutableBytes { buffer in
                cafssl_store_ctx_peer_der(storeContext, Int32(index), buffer.bindMemory(to: UInt8.self).baseAddress, buffer.count)
            }
            guard written == length else { break }
            chain.append(der)
        }
        // SNI names the host of this very connection (after any redirect);
        // IP literals are sent without SNI, so fall back to the URL curl is on.
        let host = cafssl_store_ctx_server_name(storeContext).map { String(cString: $0) }
            ?? easy.info(string: CURLINFO_EFFECTIVE_URL).flatMap { URL(string: $0)?.host }
            ?? options.request.url?.host
            ?? ""
        if let rejection = evaluator.evaluate(peerChainDER: chain, host: host) {
            abortReason = .certificateRejected(rejection)
            cafssl_store_ctx_reject(storeContext)
            return false
        }
        return true
    }
}

// Both callbacks receive the Transfer as an unretained pointer; the engine
// holds its retain while the handle (and so any handshake) is active.

private let transferSSLContextCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> CURLcode = { _, sslContext, userdata in
    guard let sslContext, let userdata else { return CURLE_ABORTED_BY_CALLBACK }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.prepareTLSContext(sslContext, userdata: userdata) ? CURLE_OK : CURLE_SSL_CONNECT_ERROR
}

private let transferVerifyCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { storeContext, userdata in
    guard let storeContext, let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.verifyPeer(storeContext) ? 1 : 0
}
