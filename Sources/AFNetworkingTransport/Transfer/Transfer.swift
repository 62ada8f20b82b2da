import CAFCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange: an easy handle configured from `TransferOptions`, the
/// state its callbacks accumulate, and the delegate it reports to.
///
/// Built on the caller's thread; from the moment it is handed to the engine
/// everything but `requestAbort(_:)` happens on the network thread. The engine
/// keeps a +1 retain on it while the easy handle is inside the multi handle,
/// because curl's callbacks receive it as an unretained pointer.
package final class Transfer: @unchecked Sendable {
    // @unchecked: the mutable fields below are network-thread-only once the
    // transfer is submitted (checked by `NetworkThread.assertCurrent()`); the
    // one field other threads write, the abort request, is behind a lock.
    package let options: TransferOptions
    let easy: EasyHandle
    /// Strong until completion: like NSURLConnection with its delegate, a
    /// running transfer keeps its owner alive.
    private(set) var delegate: (any TransferDelegate)?

    /// Sticky: the first abort requested, from any thread, before or after the
    /// engine has seen the start. The engine never adds a transfer whose abort
    /// was requested, so a cancel that overtakes the start still prevents
    /// every byte of the request from being sent.
    private let abortRequest = LockedState<AbortReason?>(nil)

    /// The reason this transfer was ended by the library, once the network
    /// thread has acted on it.
    var abortReason: AbortReason?
    /// Monotonic time of the last byte moved, for the idle timeout.
    var lastActivity = DispatchTime.now().uptimeNanoseconds
    /// Back-pressure and suspension, network thread only (see NetworkEngine+Pause).
    var pauseState = PauseState()
    private var head = ResponseHead()
    /// The proxy this transfer goes through (nil: direct), decided in `configure()`.
    package internal(set) var proxy: ProxyEndpoint?
    /// The system's anchors for a connection verified the standard way,
    /// decided in `configure()` (nil: libcurl's own CA settings).
    var handshakeStore: HandshakeStore?
    /// Whether the heads curl reports may still be a proxy's answers to
    /// CONNECT (an https request through an HTTP proxy, until the first
    /// origin head or a tunnel established).
    var awaitingTunnel = false
    /// Whether a head past the CONNECT phase may be the proxy's own answer,
    /// decided in `configure()`: only through an HTTP proxy that forwards the
    /// request (plain http). Through a CONNECT tunnel, a SOCKS proxy or no
    /// proxy every such head is the origin's, a 407 included (RFC 9110
    /// §15.5.8), so it names no proxy and no proxy challenge comes of it.
    var proxyMayAnswer = false
    /// The partition whose connections this transfer may use and leaves
    /// behind (`ConnectionPartitions`; nil: the multi handle's own), decided
    /// in `configure()`: the options' (policy, client identity) and the
    /// proxy credentials the transfer hands its proxy.
    package internal(set) var connectionPartition: String?
    /// The proxy's refusal of CONNECT (a 407 is answered like any challenge).
    private var refusedTunnel: ReceivedResponse?
    /// The head of the response whose body is arriving, once complete.
    private var currentResponse: ReceivedResponse?
    /// Undoes that response's codings but chunked (nil: its body is passed on as received; see `BodyDecoding`).
    private var contentDecoder: ContentDecoder?
    /// What curl measured, set when the transfer ends (before its delegate hears of it).
    package private(set) var timings: TransferTimings?
    /// The request body when it is a stream, read off the network thread.
    var bodyPump: RequestBodyPump?
    private var lastReportedUpload: Int64 = 0
    /// CURLOPT_ERRORBUFFER: curl writes its detailed message here.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private var resourcesReleased = false

    /// Builds the easy handle for `options`. Throws a `CurlOptionError` when
    /// libcurl refuses an option, or an `NSError` in `NSURLErrorDomain` when the
    /// request itself cannot be sent (see `RequestValidation`).
    package init(options: TransferOptions, delegate: any TransferDelegate) throws {
        self.options = options
        self.delegate = delegate
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        do {
            self.easy = try EasyHandle(fresh: options.receiveBufferSize != nil)
        } catch {
            errorBuffer.deallocate()
            throw error
        }
        do {
            try configure()
        } catch {
            releaseResources()
            throw error
        }
    }

    /// The tag the creator gave this transfer (`TransferOptions.tag`).
    package var tag: UInt64 { options.tag }

    /// Idle deadline in monotonic nanoseconds (`.max`: none).
    var idleDeadline: UInt64 {
        guard let timeout = options.idleTimeoutNanoseconds else { return .max }
        let (deadline, overflow) = lastActivity.addingReportingOverflow(timeout)
        return overflow ? .max : deadline
    }

    /// curl's own message for the last failure, if it wrote one.
    var curlMessage: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    /// Records `reason` unless an abort was already requested. Returns whether
    /// this call was the first. Any thread.
    func recordAbortRequest(_ reason: AbortReason) -> Bool {
        abortRequest.withLock { current in
            guard current == nil else { return false }
            current = reason
            return true
        }
    }

    /// The abort requested so far, if any. Any thread.
    var requestedAbort: AbortReason? { abortRequest.withLock { $0 } }

    /// Frees the easy handle and C buffers, and lets go of the body stream.
    /// Network thread, after the handle has left the multi handle (or before it
    /// ever joined), or the building thread if it never reached the engine.
    package func releaseResources() {
        guard !resourcesReleased else { return }
        resourcesReleased = true
        easy.cleanup()
        errorBuffer.deallocate()
        bodyPump?.close()
        bodyPump = nil
    }

    /// Hands the outcome to the delegate and drops it, ending the retain cycle.
    func finish(error: NSError?) {
        timings = TransferTimings(reading: easy)
        var response = currentResponse
        var error = error
        if error != nil, abortReason == nil, let refusal = refusedTunnel, let proxy {
            if refusal.statusCode == 407 {
                // An exchange with the proxy that asks for credentials: the
                // adapter's challenge handling answers it (or ends with it).
                response = refusal.asTunnelRefusal()
                error = nil
            } else {
                error = TransportErrors.make(NSURLErrorCannotConnectToHost, url: options.request.url, underlying: nil,
                                             description: "The proxy \(proxy.host):\(proxy.port) refused to open a tunnel (status \(refusal.statusCode)).")
            }
        }
        if let head = response, !self.head.trailerFields.isEmpty, !self.head.isInProgress {
            response = head.withTrailerFields(self.head.trailerFields)
        }
        if let head = response, (300..<400).contains(head.statusCode) {
            // The redirect target is only known once curl is done with the response.
            response = head.withRedirectURL(redirectTarget(of: head))
        }
        let delegate = self.delegate
        self.delegate = nil
        delegate?.transfer(self, didCompleteWithResponse: response, error: error)
    }

    /// Where a 3xx points. curl resolves `Location` against the URL it was
    /// given, which for a Unix socket is `http://localhost/…`: there the
    /// request's own URL is the base, so a relative redirect stays on the socket.
    ///
    /// A target without a scheme is none: curl hands back a `Location` it
    /// could not parse as it is, and that is no URL to follow (the 3xx is
    /// delivered). A target without a fragment keeps the request's (RFC 9110
    /// §10.2.2), which curl was not given.
    private func redirectTarget(of head: ReceivedResponse) -> URL? {
        let target: URL?
        if let url = options.request.url, UnixSocketURL.isUnixScheme(url.scheme) {
            guard let location = head.value(forField: "location") else { return nil }
            target = URL(string: location, relativeTo: url)?.absoluteURL
        } else {
            target = easy.info(string: CURLINFO_REDIRECT_URL).flatMap(URL.init(string:))
        }
        guard let target, target.scheme != nil else { return nil }
        // As written (still percent-encoded): taken from the string, not decoded and re-encoded.
        guard !target.absoluteString.contains("#"), let original = options.request.url?.absoluteString,
              let hash = original.firstIndex(of: "#"),
              let inherited = URL(string: target.absoluteString + original[hash...]) else { return target }
        return inherited
    }

    /// The error for curl's result `code`, or nil for a complete exchange.
    func outcomeError(for code: CURLcode) -> NSError? {
        let url = options.request.url
        guard code == CURLE_OK, abortReason == nil else {
            let refined = TransportErrors.refine(code, curlMessage: curlMessage, headInProgress: head.isInProgress,
                                                 gotStatus: head.statusCode != 0,
                                                 presentedClientCertificate: options.clientIdentity != nil)
            return TransportErrors.error(for: refined, abortReason: abortReason, url: url, curlMessage: curlMessage,
                                         tlsVerifyResult: easy.info(long: CURLINFO_SSL_VERIFYRESULT))
        }
        // curl treats a connection closed in the middle of a head as the end of
        // a body-less response; it is a lost connection.
        guard head.isComplete, !head.isInProgress else {
            return TransportErrors.make(NSURLErrorNetworkConnectionLost, url: url, underlying: nil,
                                        description: "The connection closed before the response header was complete.")
        }
        if let contentDecoder, !contentDecoder.isComplete {
            return TransportErrors.make(NSURLErrorCannotDecodeContentData, url: url, underlying: nil,
                                        description: "The response body ended inside its compressed data (Content-Encoding or Transfer-Encoding).")
        }
        return nil
    }

    // MARK: - Callbacks (network thread)

    func receiveHeaderLine(_ line: UnsafeBufferPointer<UInt8>) -> Int {
        NetworkThread.assertCurrent()
        lastActivity = DispatchTime.now().uptimeNanoseconds
        switch head.consume(line: line) {
        case .pending:
            return line.count
        case .invalid(let reason):
            abortReason = .badServerResponse(reason)
            return 0
        case .complete:
            guard let url = options.request.url else { return line.count }
            if awaitingTunnel {
                // curl reports the proxy's answer to CONNECT through this
                // callback too; it records that answer's status (after the
                // status line, so it is known by the blank line). Zero: no
                // CONNECT in this transfer (a reused tunnel), an origin head.
                let connectCode = easy.info(long: CURLINFO_HTTP_CONNECTCODE)
                if connectCode != 0 {
                    if (200..<300).contains(connectCode) {
                        awaitingTunnel = false
                        refusedTunnel = nil
                    } else {
                        // The proxy's own head: its 407 is its challenge.
                        refusedTunnel = head.response(for: url, proxy: proxy)
                    }
                    head = ResponseHead()
                    return line.count
                }
                awaitingTunnel = false
            }
            // Past CONNECT only a forwarding proxy can answer in the origin's
            // place. Through a tunnel a 407 is the origin's (RFC 9110
            // §15.5.8), one any server a redirect leads to can send: naming
            // the proxy would make it a proxy challenge, answered with
            // credentials sent to the proxy at that server's bidding.
            let response = head.response(for: url, proxy: proxyMayAnswer ? proxy : nil)
            currentResponse = response
            switch BodyDecoding.plan(for: response, method: options.request.httpMethod ?? "GET") {
            case .asReceived:
                contentDecoder = nil
            case .refuse(let reason):
                // curl's answer too (CURLE_BAD_CONTENT_ENCODING, its test 2119): the body cannot be decoded.
                contentDecoder = nil
                abortReason = .failed(TransportErrors.make(NSURLErrorCannotDecodeContentData, url: url, underlying: nil,
                                                           description: reason))
                return 0
            case .decode(let codings):
                guard let decoder = ContentDecoder(codings: codings) else {
                    abortReason = .failed(TransportErrors.make(NSURLErrorCannotDecodeContentData, url: url, underlying: nil,
                                                               description: "Out of memory for the response's content decoder."))
                    return 0
                }
                contentDecoder = decoder
            }
            if let refusal = delegate?.transfer(self, didReceiveHead: response) {
                abortReason = .failed(refusal)
                return 0
            }
            return line.count
        }
    }

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        NetworkThread.assertCurrent()
        lastActivity = DispatchTime.now().uptimeNanoseconds
        // Suspended before curl_easy_pause could take (no connection yet):
        // curl keeps these bytes until the transfer is unsuspended.
        if pauseState.suspended { return CAFCURL_WRITEFUNC_PAUSE }
        guard let delegate else { return 0 }
        if let contentDecoder { return receiveEncodedBody(bytes, decoder: contentDecoder, delegate: delegate) }
        switch delegate.transfer(self, didReceiveBodyBytes: bytes) {
        case .accepted:
            return bytes.count
        case .pause:
            pauseState.receiveBlocked = true
            return CAFCURL_WRITEFUNC_PAUSE
        case .abort(let error):
            abortReason = .failed(error)
            return bytes.count == 0 ? -1 : 0
        }
    }

    /// Decodes one delivery and hands the owner each decoded piece. A piece
    /// declined pauses the transfer; curl then hands the same delivery over
    /// again and the decoder carries on where it stopped.
    private func receiveEncodedBody(_ bytes: UnsafeRawBufferPointer, decoder: ContentDecoder,
                                    delegate: any TransferDelegate) -> Int {
        var refusal: NSError?
        do {
            let outcome = try decoder.decode(bytes) { piece in
                switch delegate.transfer(self, didReceiveBodyBytes: piece) {
                case .accepted: return true
                case .pause: return false
                case .abort(let error):
                    refusal = error
                    return false
                }
            }
            if let refusal {
                abortReason = .failed(refusal)
                return bytes.count == 0 ? -1 : 0
            }
            switch outcome {
            case .consumed:
                return bytes.count
            case .paused:
                pauseState.receiveBlocked = true
                return CAFCURL_WRITEFUNC_PAUSE
            }
        } catch {
            abortReason = .failed(TransportErrors.make(NSURLErrorCannotDecodeContentData, url: options.request.url, underlying: nil,
                                                       description: TransportErrors.specificDescription(for: CURLE_BAD_CONTENT_ENCODING)))
            return bytes.count == 0 ? -1 : 0
        }
    }

    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        NetworkThread.assertCurrent()
        if pauseState.suspended { return CAFCURL_READFUNC_PAUSE }
        guard let pump = bodyPump else { return 0 }
        switch pump.read(into: buffer) {
        case .bytes(let count):
            lastActivity = DispatchTime.now().uptimeNanoseconds
            reportUpload(total: lastReportedUpload + Int64(count), expected: pump.declaredLength)
            return count
        case .end:
            return 0
        case .wait:
            pauseState.sendStarved = true
            return CAFCURL_READFUNC_PAUSE
        case .fail(let reason):
            abortReason = reason
            return CAFCURL_READFUNC_ABORT
        }
    }

    /// curl asks to send the body again from its start (a connection that
    /// died before the answer, or Digest's second round).
    func rewindBody(offset: Int64, origin: Int32) -> Bool {
        NetworkThread.assertCurrent()
        guard offset == 0, origin == SEEK_SET, let pump = bodyPump, pump.rewind() else { return false }
        lastReportedUpload = 0
        return true
    }

    /// curl's progress tick; used for in-memory bodies, whose size is known
    /// (a stream body is counted as it is read, since curl's count would
    /// include chunked framing).
    func progress(uploaded: Int64, uploadTotal: Int64) {
        guard bodyPump == nil, uploaded != lastReportedUpload else { return }
        reportUpload(total: uploaded, expected: uploadTotal > 0 ? uploadTotal : -1)
    }

    private func reportUpload(total: Int64, expected: Int64) {
        lastActivity = DispatchTime.now().uptimeNanoseconds
        let delta = total - lastReportedUpload
        lastReportedUpload = total
        if options.reportsUploadProgress {
            delegate?.transfer(self, didSendBodyBytes: Int(delta), totalBytesSent: total, totalBytesExpected: expected)
        }
    }
}
