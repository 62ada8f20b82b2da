import CAFCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Transfer {
    /// Maps the `URLRequest` onto the easy handle. Throws an `NSError` for a
    /// request that must not be sent as it is, and a `CurlOptionError` if
    /// libcurl refuses an option, so the request fails with a reason instead
    /// of the process.
    func configure() throws {
        let request = options.request
        let url = try RequestValidation.targetURL(of: request).get()
        if let problem = RequestValidation.methodProblem(in: request, url: url) { throw problem }
        if let problem = RequestValidation.headerProblem(in: request, url: url) { throw problem }
        let userdata = Unmanaged.passUnretained(self).toOpaque()

        // Options equal to curl's defaults after curl_easy_reset are not set
        // again (this runs for every request): redirects stay off
        // (FOLLOWLOCATION; the library follows them one hop at a time, so the
        // redirect block, cookies, credentials and the security policy see
        // each), HTTP/2 is negotiated over TLS (CURL_HTTP_VERSION_2TLS), and
        // peer and host verification are on. Only http and https ever reach
        // curl: RequestValidation refuses other schemes and redirects are ours.
        if let unix = UnixSocketURL.target(of: url) {
            // curl talks HTTP to the socket; the Host header is "localhost".
            try easy.set(CURLOPT_URL, unix.curlURL)
            try easy.set(CURLOPT_UNIX_SOCKET_PATH, unix.socketPath)
        } else {
            // Without its fragment, which is never sent: curl 7.88 resolves a
            // relative Location inside it (`/a#x/y` + `b` asked for `/a`).
            try easy.set(CURLOPT_URL, Self.withoutFragment(url.absoluteString))
        }
        // Signals are process-wide; a library on its own thread must not use them.
        try easy.set(CURLOPT_NOSIGNAL, true)
        try easy.set(CURLOPT_PRIVATE, pointer: userdata)
        try easy.set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        // Idle time is watched by the engine (NSURLRequest semantics); curl only
        // bounds connection setup, which makes no progress callbacks of its own.
        try easy.set(CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeoutMilliseconds)
        // Asks for the codings `ContentDecoder` undoes; curl only sends the
        // field and passes the body on as received (the library decodes it in
        // bounded steps, so a pause never makes curl hold an expansion).
        // A ranged request (a resume) asks for the identity encoding: its
        // offset counts the entity's own bytes, which is what a decoded
        // earlier answer wrote; a range of gzip bytes would not line up.
        let ranged = options.request.value(forHTTPHeaderField: "Range") != nil
        try easy.set(CURLOPT_ACCEPT_ENCODING, pointer: ranged ? Transfer.identityEncoding : Transfer.everyEncoding)
        try easy.set(CURLOPT_HTTP_CONTENT_DECODING, false)
        if easy.isFresh { try easy.set(CURLOPT_BUFFERSIZE, options.receiveBufferSize ?? 64 * 1024) }
        // The receive cap is kept by the delegate alone (pausing the transfer
        // stops curl reading the socket): curl's own CURLOPT_MAX_RECV_SPEED_LARGE
        // on top of those pauses left a transfer stalled for good now and then
        // (curl 7.88's rate-limiting state and an unpause of the last piece).
        if options.maximumSendBytesPerSecond > 0 {
            try easy.set(CURLOPT_MAX_SEND_SPEED_LARGE, size: options.maximumSendBytesPerSecond)
        }

        try configureProxy(for: url)
        if url.scheme?.lowercased() == "https" {
            // A burst to one origin waits for the connection being set up and,
            // if ALPN picks HTTP/2, shares it as streams, instead of opening a
            // connection (and a TLS handshake) per request; an HTTP/1.1 answer
            // lets the waiting requests open their own. Plain http never
            // multiplexes (no h2c), so nothing there ever waits. Connections
            // stay inside their partition (policy, client identity, proxy
            // credentials), so streams never cross one.
            try easy.set(CURLOPT_PIPEWAIT, true)
        }
        try configureTLS()
        try configurePolicyVerification(userdata)
        try configureCredentials()
        let (requestLines, contentLength) = headerLines(for: request)
        try configureMethodAndBody(request, contentLength: contentLength, userdata: userdata)
        var lines = requestLines
        var proxyFields: [String] = []
        // Proxy credentials the caller set go to the proxy alone: in the
        // origin's header list they would travel inside a CONNECT tunnel to
        // the origin, or straight to it without a proxy (then not at all).
        if lines.contains(where: Transfer.isProxyAuthorization) {
            let forProxy = lines.filter(Transfer.isProxyAuthorization)
            lines.removeAll(where: Transfer.isProxyAuthorization)
            if proxy?.kind.speaksHTTP == true {
                try easy.setProxyHeaders(forProxy)
                proxyFields = forProxy
            }
        }
        if !lines.isEmpty { try easy.setHeaders(lines) }
        try decideConnectionPartition(proxyFields: proxyFields)

        try cafcurl_easy_setopt_write_function(easy.raw, CURLOPT_WRITEFUNCTION, transferWriteCallback).check("write callback")
        try easy.set(CURLOPT_WRITEDATA, pointer: userdata)
        try cafcurl_easy_setopt_write_function(easy.raw, CURLOPT_HEADERFUNCTION, transferHeaderCallback).check("header callback")
        try easy.set(CURLOPT_HEADERDATA, pointer: userdata)
    }

    /// Always names the proxy (or "" for none), so curl never applies its own
    /// reading of the environment: the library must know the proxy to tell
    /// its answers from the origin's. A Unix-socket URL never uses a proxy.
    private func configureProxy(for url: URL) throws {
        let scheme = url.scheme?.lowercased() ?? "http"
        if UnixSocketURL.isUnixScheme(scheme) {
            proxy = nil
        } else if let configured = options.proxies {
            proxy = configured.endpoint(forScheme: scheme)
        } else {
            // No proxy variable set (the common case): nothing to look up for this URL.
            let environment = ProxyEnvironment.process
            proxy = environment.isEmpty ? nil : try environment.endpoint(for: url).get()
        }
        try easy.set(CURLOPT_PROXY, proxy?.curlValue ?? "")
        // An empty exception list: the choice above is final, and curl skips
        // reading no_proxy/NO_PROXY itself (two more walks of the environment).
        try easy.set(CURLOPT_NOPROXY, "")
        // curl tunnels https through an HTTP proxy and forwards plain http
        // (CURLOPT_HTTPPROXYTUNNEL, which would tunnel that too, is never set).
        let tunnels = proxy?.tunnels(scheme: scheme) ?? false
        awaitingTunnel = tunnels
        proxyMayAnswer = proxy?.kind.speaksHTTP == true && !tunnels
    }

    /// Keeps apart the connections of different proxy identities, on top of
    /// the options' partition (policy, client identity). libcurl 7.88 reuses
    /// a connection to an HTTP proxy — a CONNECT tunnel included — for any
    /// transfer through the same proxy, whoever's credentials opened it: it
    /// compares them for NTLM only. curl 8.19 compares the user and password
    /// too (a fix some 7.88 builds carry, Debian's among them), but never a
    /// Proxy-Authorization field in CURLOPT_PROXYHEADER. A tunnel opened as
    /// one user would carry another's requests — or a request with no
    /// credentials at all — and a proxy that authenticates at CONNECT counts
    /// them as the first user's. `proxyFields`: the caller's
    /// Proxy-Authorization lines sent to the proxy.
    private func decideConnectionPartition(proxyFields: [String]) throws {
        var credentials: [String] = []
        if let proxy {
            // In the proxy URL (an environment variable's userinfo), curl's
            // own user and password for the proxy.
            if let userInfo = proxy.userInfo { credentials += ["userinfo", userInfo] }
            if let answer = options.credentials, answer.forProxy { credentials += ["answer", answer.user, answer.password] }
            credentials += proxyFields
        }
        connectionPartition = try ConnectionPartitions.key(base: options.connectionPartition, proxyCredentials: credentials)
    }

    private func configureCredentials() throws {
        guard let credentials = options.credentials else { return }
        let scheme = credentials.scheme == .basic ? CAFCURL_AUTH_BASIC : CAFCURL_AUTH_DIGEST
        if credentials.forProxy {
            try easy.set(CURLOPT_PROXYUSERNAME, credentials.user)
            try easy.set(CURLOPT_PROXYPASSWORD, credentials.password)
            try easy.set(CURLOPT_PROXYAUTH, Int(scheme))
        } else {
            try easy.set(CURLOPT_USERNAME, credentials.user)
            try easy.set(CURLOPT_PASSWORD, credentials.password)
            try easy.set(CURLOPT_HTTPAUTH, Int(scheme))
        }
    }

    /// The codings `ContentDecoder` undoes, for CURLOPT_ACCEPT_ENCODING, made once (curl copies it).
    nonisolated(unsafe) private static let everyEncoding = UnsafeMutableRawPointer(strdup(ContentDecoder.acceptEncoding))
    /// "identity" for CURLOPT_ACCEPT_ENCODING: no decoding, the offsets of a range hold.
    nonisolated(unsafe) private static let identityEncoding = UnsafeMutableRawPointer(strdup("identity"))

    private func configureTLS() throws {
        // Both are on after a reset; only a policy judged in the handshake
        // changes them. A policy's evaluator replaces OpenSSL's chain
        // verification (and still ends a handshake it refuses, see
        // `prepareTLSContext`): libcurl is told not to verify, or it would
        // parse the whole CA bundle into every new connection's store
        // (~230M instructions each; Debian's build sets a CA directory, which
        // keeps libcurl from caching the store) for nothing.
        if !options.tls.verifiesPeer || options.tls.evaluator != nil { try easy.set(CURLOPT_SSL_VERIFYPEER, false) }
        if !options.tls.verifiesHost { try easy.set(CURLOPT_SSL_VERIFYHOST, 0) }
        if options.tls.evaluator == nil, options.tls.verifiesPeer,
           let store = HandshakeStore.current(file: options.tls.caFile, directory: options.tls.caDirectory) {
            // Verified the standard way: one store of the anchors for every
            // connection (`prepareTLSContext` hands it over) instead of
            // libcurl's bundle parsed into each; libcurl loads no file and
            // caches nothing of its own.
            handshakeStore = store
            try easy.set(CURLOPT_CAINFO, pointer: nil)
            try easy.set(CURLOPT_CAPATH, pointer: nil)
            try easy.set(CURLOPT_CA_CACHE_TIMEOUT, 0)
        } else {
            if let file = options.tls.caFile { try easy.set(CURLOPT_CAINFO, file) }
            if let directory = options.tls.caDirectory { try easy.set(CURLOPT_CAPATH, directory) }
        }
        try configureClientIdentity()
    }

    /// `url` up to its fragment.
    static func withoutFragment(_ url: String) -> String {
        // memchr over the bytes: a Character search breaks graphemes (~9k
        // instructions a request), a generic byte search still costs ~1.7k.
        var text = url
        let cut: Int? = text.withUTF8 { bytes in
            guard let base = bytes.baseAddress, let hash = memchr(base, Int32(UInt8(ascii: "#")), bytes.count) else { return nil }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hash))
        }
        guard let cut else { return url }
        return String(url.utf8.prefix(cut)) ?? url
    }

    /// The caller's own `Content-Length`, which curl sends as it is (and
    /// then adds no length of its own): digits only (RFC 9110 §8.6), equal
    /// to an in-memory body's size, zero without a body. Anything else would
    /// frame the request wrongly — a value curl sends beside
    /// `Transfer-Encoding: chunked`, or bytes a server reads as the next
    /// request — so it is refused before anything is sent.
    static func declaredContentLength(_ text: String?, of request: URLRequest) throws -> Int64? {
        guard let text else { return nil }
        let value = text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
        func refuse(_ why: String) -> NSError {
            TransportErrors.make(NSURLErrorBadURL, url: request.url, underlying: nil,
                                 description: "The request's Content-Length \(why); nothing was sent.")
        }
        guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let length = Int64(value) else {
            throw refuse("is not a number of bytes")
        }
        if request.httpBodyStream == nil {
            let size = Int64(request.httpBody?.count ?? 0)
            guard length == size else { throw refuse("(\(length)) is not the size of its body (\(size) bytes)") }
        }
        return length
    }

    /// `contentLength`: the request's own `Content-Length` field, if any.
    private func configureMethodAndBody(_ request: URLRequest, contentLength: String?, userdata: UnsafeMutableRawPointer) throws {
        let method = (request.httpMethod ?? "GET").uppercased()
        // A HEAD with content would go out as a POST (curl sends a body only
        // with POST or a custom method, and then waits for a response body a
        // HEAD answer never has): refused, not changed. An empty body is none.
        if method == "HEAD", request.httpBodyStream != nil || request.httpBody?.isEmpty == false {
            throw TransportErrors.make(NSURLErrorBadURL, url: request.url, underlying: nil,
                                       description: "The request is a HEAD with a body, which HEAD cannot carry (RFC 9110 §9.3.2); nothing was sent.")
        }
        let declaredLength = try Self.declaredContentLength(contentLength, of: request)
        if let stream = request.httpBodyStream {
            let declared = declaredLength ?? -1
            // Read off the network thread, a bounded amount ahead of curl.
            bodyPump = RequestBodyPump(stream: stream, declaredLength: declared) { [weak self] in
                guard let self else { return }
                NetworkEngine.shared.resumeSending(self)
            }
            try easy.set(CURLOPT_POST, true)
            // Fewer, larger reads and sends than curl's 64 KiB default.
            try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, options.sendBufferSize ?? RequestBodyPump.readSize)
            // -1 makes curl send the body chunked when the caller gave no length.
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, size: declared)
            try cafcurl_easy_setopt_write_function(easy.raw, CURLOPT_READFUNCTION, transferReadCallback).check("read callback")
            try easy.set(CURLOPT_READDATA, pointer: userdata)
            // A connection that died before the answer, or Digest's second
            // round, sends the body again: curl asks to rewind.
            try cafcurl_easy_setopt_seek_function(easy.raw, transferSeekCallback).check("seek callback")
            try easy.set(CURLOPT_SEEKDATA, pointer: userdata)
        } else if let body = request.httpBody, method != "HEAD" {
            try easy.set(CURLOPT_POST, true)
            try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, size: Int64(body.count))
            // COPYPOSTFIELDS copies, so the Data need not outlive this call. An
            // empty body still needs a valid pointer.
            let bytes = body.isEmpty ? Data([0]) : body
            try bytes.withUnsafeBytes { buffer in
                guard let pointer = buffer.baseAddress?.assumingMemoryBound(to: CChar.self) else { return }
                let status = cafcurl_easy_setopt_string(easy.raw, CURLOPT_COPYPOSTFIELDS, pointer)
                try status.check("request body")
            }
            if let size = options.sendBufferSize { try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, size) }
            // curl calls nothing else while it sends an in-memory body: the
            // progress tick is what keeps a long upload from looking idle.
            try installProgressCallback(userdata)
        } else if method == "HEAD" {
            try easy.set(CURLOPT_NOBODY, true)
        }
        let hasBody = request.httpBodyStream != nil || request.httpBody != nil
        // A body makes curl send POST: any other method with a body (a GET
        // with a body included) names itself, or it would go out as a POST.
        if !(method == "GET" && !hasBody) && method != "HEAD" && !(method == "POST" && hasBody) {
            try easy.set(CURLOPT_CUSTOMREQUEST, method)
        }
    }

    private func installProgressCallback(_ userdata: UnsafeMutableRawPointer) throws {
        try cafcurl_easy_setopt_xferinfo_function(easy.raw, transferProgressCallback).check("progress callback")
        try easy.set(CURLOPT_XFERINFODATA, pointer: userdata)
        try easy.set(CURLOPT_NOPROGRESS, false)
    }

    /// The request's own header fields (already checked by `RequestValidation`),
    /// plus removals of the headers curl would otherwise add on its own and
    /// Foundation does not send.
    private static func isProxyAuthorization(_ line: String) -> Bool {
        line.utf8.count > 19 && line.utf8.prefix(19).elementsEqual("proxy-authorization".utf8, by: { ($0 | 0x20) == $1 })
            && [UInt8(ascii: ":"), UInt8(ascii: ";")].contains(line.utf8.dropFirst(19).first)
    }

    /// The lines, and the value of the request's `Content-Length` (found on
    /// the way: a lookup of its own costs a bridged string per request).
    private func headerLines(for request: URLRequest) -> (lines: [String], contentLength: String?) {
        var lines: [String] = []
        var sendsExpect = false
        var contentLength: String?
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            if !sendsExpect, name.utf8.count == 6, name.lowercased() == "expect" { sendsExpect = true }
            if name.utf8.count == 14, name.lowercased() == "content-length" { contentLength = value }
            // "Name;" is curl's spelling for a header with an empty value.
            lines.append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        // curl announces a large or unknown-length body with
        // "Expect: 100-continue" and waits; Foundation never does.
        if !sendsExpect && (request.httpBody != nil || request.httpBodyStream != nil) { lines.append("Expect:") }
        return (lines, contentLength)
    }
}

// MARK: - C callbacks
// Each receives the Transfer as an unretained pointer: the engine holds the
// retain while the easy handle is inside the multi handle, the only time curl
// calls these.

private let transferWriteCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, userdata in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: data, count: size * count))
}

private let transferHeaderCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { data, size, count, userdata in
    guard let userdata, let data else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    let line = UnsafeBufferPointer(start: UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), count: size * count)
    return transfer.receiveHeaderLine(line)
}

private let transferReadCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = { buffer, size, count, userdata in
    guard let userdata else { return CAFCURL_READFUNC_ABORT }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.readBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
}

private let transferSeekCallback: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, Int32) -> Int32 = { userdata, offset, origin in
    guard let userdata else { return Int32(CURL_SEEKFUNC_FAIL) }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    return transfer.rewindBody(offset: Int64(offset), origin: origin) ? Int32(CURL_SEEKFUNC_OK) : Int32(CURL_SEEKFUNC_CANTSEEK)
}

private let transferProgressCallback: @convention(c) (UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t) -> Int32 = { userdata, _, _, uploadTotal, uploaded in
    guard let userdata else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
    transfer.progress(uploaded: Int64(uploaded), uploadTotal: Int64(uploadTotal))
    return 0
}
