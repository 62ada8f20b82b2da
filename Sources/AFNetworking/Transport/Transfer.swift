import CAFCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP exchange: an easy handle configured from `TransferOptions`, the
/// state its callbacks accumulate, and the delegate it reports to.
///
/// Built on the caller's thread; from the moment it is handed to the
/// `NetworkEngine` it is touched only on the network thread. The engine keeps
/// a +1 retain on it for as long as the easy handle is inside the multi handle,
/// because curl's callbacks receive it as an unretained pointer.
final class Transfer {
    /// Why the library (not the network or the server) ended a transfer.
    enum AbortReason {
        case cancelled
        case timedOut
        /// The delegate refused a piece of the body (its output stream failed).
        case delegateFailed(Error)
        /// The request body stream failed or ended early.
        case bodyStreamFailed(Error?)
        /// The security policy rejected the server inside the TLS handshake.
        case certificateRejected(SecurityPolicyError)
    }

    let options: TransferOptions
    let easy: EasyHandle
    /// Strong until completion: like NSURLConnection with its delegate, a
    /// running transfer keeps its operation alive.
    private(set) var delegate: TransferDelegate?

    var abortReason: AbortReason?
    /// Monotonic time of the last byte moved, for the idle timeout.
    private(set) var lastActivity = DispatchTime.now().uptimeNanoseconds
    private var head = ResponseHead()
    private var deliveredResponse: ReceivedResponse?
    /// The request body stream, opened by `configure()` and read by curl.
    var bodyStream: InputStream?
    private var lastReportedUpload: Int64 = 0
    private var bodyBytesRead: Int64 = 0
    /// The stream body's Content-Length, or -1 (sent chunked).
    var declaredBodyLength: Int64 = -1
    /// CURLOPT_ERRORBUFFER: curl writes its detailed message here.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)

    init(options: TransferOptions, delegate: TransferDelegate) throws {
        self.options = options
        self.delegate = delegate
        self.easy = try EasyHandle()
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        do {
            try configure()
        } catch {
            releaseResources()
            throw error
        }
    }

    /// Idle deadline in monotonic nanoseconds.
    var idleDeadline: UInt64 {
        lastActivity &+ UInt64(options.idleTimeout * 1_000_000_000)
    }

    /// curl's own message for the last failure, if it wrote one.
    var curlMessage: String? {
        errorBuffer[0] == 0 ? nil : String(cString: errorBuffer)
    }

    /// Frees the easy handle and C buffers. Network thread, after the handle has
    /// left the multi handle (or before it ever joined).
    func releaseResources() {
        easy.cleanup()
        errorBuffer.deallocate()
        bodyStream?.close()
        bodyStream = nil
    }

    /// Hands the outcome to the delegate and drops it, ending the retain cycle.
    func finish(error: NSError?) {
        var response = deliveredResponse
        // A redirect's target (CURLINFO_REDIRECT_URL) is only known now.
        if response == nil || (300..<400).contains(response?.statusCode ?? 0) {
            response = easy.info(long: CURLINFO_RESPONSE_CODE) > 0 ? makeResponse() : response
        }
        let delegate = self.delegate
        self.delegate = nil
        delegate?.transfer(self, didCompleteWithResponse: response, error: error)
    }

    // MARK: - Callbacks (network thread)

    func receiveHeaderLine(_ line: UnsafeBufferPointer<UInt8>) -> Int {
        lastActivity = DispatchTime.now().uptimeNanoseconds
        head.consume(line: line)
        return line.count
    }

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        lastActivity = DispatchTime.now().uptimeNanoseconds
        if deliveredResponse == nil, let response = makeResponse() {
            deliveredResponse = response
            delegate?.transfer(self, didReceiveResponse: response)
        }
        if let failure = delegate?.transfer(self, didReceiveBodyBytes: bytes) {
            abortReason = .delegateFailed(failure)
            return bytes.count == 0 ? -1 : 0
        }
        return bytes.count
    }

    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let stream = bodyStream, let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return 0 }
        let count = stream.read(base, maxLength: buffer.count)
        if count < 0 {
            abortReason = .bodyStreamFailed(stream.streamError)
            return Int(CURL_READFUNC_ABORT)
        }
        lastActivity = DispatchTime.now().uptimeNanoseconds
        bodyBytesRead += Int64(count)
        if count > 0 {
            reportUpload(total: lastReportedUpload + Int64(count), expected: declaredBodyLength)
        }
        return count
    }

    /// Starts the request body over, for curl re-sending it. Only a rewind to
    /// the start is possible: before anything was read, or by rebuilding a
    /// stream that can be copied (the multipart body stream can).
    func rewindBody(offset: Int64, origin: Int32) -> Bool {
        guard offset == 0, origin == SEEK_SET, let stream = bodyStream else { return false }
        if bodyBytesRead == 0 { return true }
        guard let copyable = stream as? NSCopying, let fresh = copyable.copy(with: nil) as? InputStream else { return false }
        stream.close()
        fresh.open()
        bodyStream = fresh
        bodyBytesRead = 0
        lastReportedUpload = 0
        return true
    }

    /// curl's progress tick; used for in-memory bodies, whose size is known
    /// (a stream body is counted as it is read, since curl's count would
    /// include chunked framing).
    func progress(uploaded: Int64, uploadTotal: Int64) {
        guard bodyStream == nil, uploaded != lastReportedUpload else { return }
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

    // MARK: - Response

    private func makeResponse() -> ReceivedResponse? {
        guard let requestURL = options.request.url else { return nil }
        let status = easy.info(long: CURLINFO_RESPONSE_CODE)
        let url = requestURL
        var redirectURL: URL?
        if (300..<400).contains(status) {
            redirectURL = easy.info(string: CURLINFO_REDIRECT_URL).flatMap(URL.init(string:))
        }
        return ReceivedResponse(url: url, statusCode: status, statusLine: head.statusLine, fields: head.rawFields,
                                redirectURL: redirectURL)
    }
}
