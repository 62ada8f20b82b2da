import CAFCurl
import CAFOpenSSL
import Foundation

extension Transfer {
    /// Installs the owner's certificate evaluator inside OpenSSL's certificate
    /// verification for every connection this transfer opens, so a server the
    /// evaluator rejects never receives a request byte.
    func configurePolicyVerification(_ userdata: UnsafeMutableRawPointer) throws {
        guard options.tls.evaluator != nil else { return }
        try cafcurl_easy_setopt_ssl_ctx_function(easy.raw, transferSSLContextCallback).check("TLS context callback")
        try easy.set(CURLOPT_SSL_CTX_DATA, pointer: userdata)
        // A resumed session skips certificate verification: never resume.
        try easy.set(CURLOPT_SSL_SESSIONID_CACHE, false)
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
    cafssl_ctx_set_verify_callback(sslContext, transferVerifyCallback, userdata)
    return CURLE_OK
}

private let transferVerifyCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { storeContext, userdata in
    guard let storeContext, let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.verifyPeer(storeContext) ? 1 : 0
}
