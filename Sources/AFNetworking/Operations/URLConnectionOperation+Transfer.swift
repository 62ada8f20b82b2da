import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The operation's side of a transfer: starting hops, taking the response
/// head and body as they arrive (network thread), and turning the end of a
/// transfer into a follow-up hop, a cached answer or the operation's outcome.
extension URLConnectionOperation {

    /// Starts a transfer: the operation's request from the beginning (start,
    /// resume), or a follow-up hop (a redirect, an authentication retry).
    func beginTransfer(_ hop: Hop? = nil) {
        var conditional: URLRequest?
        if hop == nil {
            // The cache answers for the operation's own request only.
            switch CacheRules.plan(for: request, cache: .shared, policy: securityPolicy) {
            case .load:
                locked { revalidating = nil }
            case .useCached(let cached):
                finishWithCachedResponse(cached)
                return
            case .fail(let error):
                transferDidEnd(response: nil, error: error)
                return
            case .revalidate(let cached, let request):
                locked { revalidating = cached }
                conditional = request
            }
        }
        lock.lock()
        prepareOutput()
        if let hop {
            hopRequest = hop.request
        } else {
            hopRequest = conditional ?? _request
            redirectCount = 0
            authenticationFailures = 0
        }
        var options = TransferOptions(request: CookieHandling.addingCookies(to: hopRequest))
        options.credentials = hop?.credentials
        options.reportsUploadProgress = uploadProgress != nil
        options.tls = _securityPolicy.transferVerification
        interimBody = nil
        hopResponseSeen = false
        resumeDecision = nil
        // Read the Range header here, once, not on the network thread per response.
        hopResumeOffset = ResumeRules.offset(of: hopRequest).flatMap { $0 > 0 ? $0 : nil }
        lock.unlock()

        let transfer: Transfer
        do {
            transfer = try Transfer(options: options, delegate: TransferSink(self))
        } catch {
            let code = (error as? CurlOptionError).map { TransportErrors.urlErrorCode(for: $0.code) } ?? NSURLErrorCannotLoadFromNetwork
            let failure = TransportErrors.make(code, url: options.request.url, underlying: error as NSError,
                                               description: "\(error)")
            transferDidEnd(response: nil, error: failure)
            return
        }
        let stillWanted: Bool = locked {
            guard state == .executing, !isCancelled, !isDelivering else { return false }
            currentTransfer = transfer
            return true
        }
        if stillWanted {
            NetworkEngine.shared.submit(.start(transfer))
        } else {
            // Cancelled or paused while the handle was being built: it never
            // reached curl, so it is freed here and never reported.
            transfer.releaseResources()
            if isCancelled { finishCancelled() }
        }
    }

    /// A follow-up request and the credentials to send with it.
    struct Hop {
        var request: URLRequest
        var credentials: TransferCredentials?
    }

    func isCurrent(_ transfer: Transfer) -> Bool { locked { currentTransfer === transfer } }

    func transferDidReceive(_ transfer: Transfer, response: ReceivedResponse) {
        locked {
            guard currentTransfer === transfer else { return }
            responseBeforeResume = receivedResponse
            hopResponseSeen = true
            receivedResponse = response
            _response = nil
            interimBody = mayFollowUp(response) ? Data() : nil
            applyResumeRules(to: response)
            resumableFile?.record(response)
        }
    }

    /// For a resumed request: start the output over, keep appending, or mark
    /// the answer as a failure or as "already complete". Call with `lock` held.
    private func applyResumeRules(to response: ReceivedResponse) {
        resumeDecision = nil
        guard let offset = hopResumeOffset else { return }
        let decision = ResumeRules.decide(statusCode: response.statusCode, contentRange: response.value(forField: "content-range"), offset: offset)
        resumeDecision = decision
        guard decision == .restart else { return }
        totalBytesRead = 0
        if memorySink != nil {
            memorySink = Data()
        } else if let partial = _outputStream as? PartialFileOutputStream {
            partial.startOver()
        } else if let stream = _outputStream {
            // A file stream goes back to its start; a caller's memory stream
            // cannot be emptied, so it is replaced by a fresh one.
            if stream.property(forKey: .fileCurrentOffsetKey) != nil {
                _ = stream.setProperty(NSNumber(value: 0), forKey: .fileCurrentOffsetKey)
            } else if stream.property(forKey: .dataWrittenToMemoryStreamKey) != nil {
                stream.close()
                let fresh = OutputStream(toMemory: ())
                fresh.open()
                _outputStream = fresh
            }
        }
    }

    /// The error a resumed request ends with when the server's answer does not fit.
    private func resumeFailure(_ reason: String) -> NSError {
        TransportErrors.make(NSURLErrorBadServerResponse, url: hopRequest.url, underlying: nil,
                             description: "The download could not be resumed: \(reason).")
    }

    /// Redirects and authentication challenges may lead to another request;
    /// their bodies wait aside instead of reaching the output stream.
    private func mayFollowUp(_ response: ReceivedResponse) -> Bool {
        switch response.statusCode {
        // curl resolves the target only once the transfer is done, so while
        // the body arrives the Location header is what tells.
        case 301, 302, 303, 307, 308: return response.redirectURL != nil || response.value(forField: "location") != nil
        case 401, 407: return true
        default: return false
        }
    }

    /// Bodies of responses that may be followed up are small in practice; past
    /// this they are cut rather than held without bound.
    static let interimBodyLimit = 1 << 20

    func transferDidReceive(_ transfer: Transfer, bytes: UnsafeRawBufferPointer) -> Error? {
        lock.lock()
        guard currentTransfer === transfer else {
            lock.unlock()
            return TransportErrors.make(NSURLErrorCancelled, url: nil, underlying: nil)
        }
        if case .fail(let reason)? = resumeDecision {
            lock.unlock()
            return resumeFailure(reason)
        }
        if resumeDecision == .alreadyComplete {
            lock.unlock()
            return nil   // the 416's own body is not part of the entity
        }
        if interimBody != nil {
            let room = URLConnectionOperation.interimBodyLimit - (interimBody?.count ?? 0)
            if room > 0 { interimBody?.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(room))) }
            lock.unlock()
            return nil
        } else if memorySink != nil {
            memorySink?.append(contentsOf: bytes)
        } else if let stream = _outputStream, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) {
            var written = 0
            while written < bytes.count {
                let count = stream.write(base + written, maxLength: bytes.count - written)
                if count <= 0 {
                    lock.unlock()
                    return stream.streamError ?? TransportErrors.make(NSURLErrorCannotWriteToFile, url: _request.url, underlying: nil,
                                                                       description: "The output stream refused the response body.")
                }
                written += count
            }
        }
        totalBytesRead += Int64(bytes.count)
        let total = totalBytesRead
        let progress = downloadProgress
        let expected = receivedResponse?.expectedContentLength ?? -1
        let count = bytes.count
        lock.unlock()
        if let progress {
            effectiveCompletionQueue.async(group: effectiveCompletionGroup) { progress(count, total, expected) }
        }
        return nil
    }

    func transferDidSend(_ transfer: Transfer, bytes: Int, total: Int64, expected: Int64) {
        guard let progress = locked({ currentTransfer === transfer ? uploadProgress : nil }) else { return }
        effectiveCompletionQueue.async(group: effectiveCompletionGroup) { progress(bytes, total, expected) }
    }

    /// A transfer ended. A redirect or a challenge is followed up off the
    /// network thread; anything else ends the operation.
    func transferDidComplete(_ transfer: Transfer, response: ReceivedResponse?, error: NSError?) {
        if error == nil, response?.statusCode == 304 {
            let cached: CachedURLResponse? = locked {
                guard currentTransfer === transfer, let cached = revalidating else { return nil }
                revalidating = nil
                return cached
            }
            if let cached {
                finishWithCachedResponse(cached)
                return
            }
        }
        let interim: Data? = locked {
            // A body-less response never passed through `transferDidReceive`.
            guard currentTransfer === transfer, error == nil, let response,
                  let body = interimBody ?? (mayFollowUp(response) ? Data() : nil) else { return nil }
            // Between hops no transfer is current: cancel() and pause() are
            // then honoured by the next beginTransfer.
            currentTransfer = nil
            interimBody = nil
            return body
        }
        guard let interim, let response else {
            guard isCurrent(transfer) else { return }
            var outcome = (response: response, error: error)
            if error == nil, let response {
                let (decision, earlier) = locked { () -> (ResumeRules.Decision?, ReceivedResponse?) in
                    // A body-less answer never went through transferDidReceive.
                    if !hopResponseSeen {
                        responseBeforeResume = receivedResponse
                        applyResumeRules(to: response)
                    }
                    return (resumeDecision, responseBeforeResume)
                }
                switch decision {
                case .fail(let reason)?: outcome.error = locked { resumeFailure(reason) }
                case .alreadyComplete?: outcome.response = earlier ?? response
                default: break
                }
            }
            transferDidEnd(response: outcome.response, error: outcome.error)
            return
        }
        CompletionDefaults.processingQueue.async { [self] in followUp(response, body: interim) }
    }

    /// Ends the operation with a response whose follow-up was declined: its
    /// body goes to the output after all.
    func finishWithInterimResponse(_ response: ReceivedResponse, body: Data) {
        locked { appendToOutput(body) }
        transferDidEnd(response: response, error: nil)
    }

    /// The memory sink when the caller never asked for an output stream, else
    /// the caller's stream, opened. Call with `lock` held.
    private func prepareOutput() {
        if _outputStream == nil && memorySink == nil { memorySink = Data() }
        _outputStream?.open()
    }

    /// Writes a whole body that did not come through the transfer's stream of
    /// bytes (a declined redirect's, a cached one). Call with `lock` held.
    func appendToOutput(_ body: Data) {
        if memorySink != nil {
            memorySink?.append(body)
        } else if let stream = _outputStream, !body.isEmpty {
            body.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                var written = 0
                while written < buffer.count {
                    let count = stream.write(base + written, maxLength: buffer.count - written)
                    if count <= 0 { break }
                    written += count
                }
            }
        }
        totalBytesRead += Int64(body.count)
    }

    /// Ends the operation with a response from `URLCache` (fresh, or
    /// confirmed by a 304), as if it had come over the network.
    func finishWithCachedResponse(_ cached: CachedURLResponse) {
        locked {
            prepareOutput()
            receivedResponse = nil
            _response = cached.response
            servedFromCache = true
            appendToOutput(cached.data)
        }
        transferDidEnd(response: nil, error: nil)
    }

    /// Whether a follow-up hop may still start (not cancelled, paused or over).
    var canContinueHops: Bool {
        locked { state == .executing && !isCancelled && !isDelivering && currentTransfer == nil }
    }

    /// The transfer is over (or never ran): record the outcome once, then hand
    /// over to `deliverCompletion`, which finishes the operation.
    func transferDidEnd(response: ReceivedResponse?, error: NSError?) {
        lock.lock()
        guard !isDelivering, state != .finished else {
            lock.unlock()
            return
        }
        isDelivering = true
        currentTransfer = nil
        if let response {
            receivedResponse = response
            _response = nil
            CookieHandling.store(from: response, for: hopRequest)
        }
        _error = error
        if let sink = memorySink {
            _responseData = sink
            memorySink = nil
        } else if let stream = _outputStream {
            stream.close()
            _responseData = stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data
        }
        if let file = resumableFile, let partial = _outputStream as? PartialFileOutputStream, _error == nil,
           let status = receivedResponse?.statusCode ?? (_response as? HTTPURLResponse)?.statusCode, status == 200 || status == 206 {
            do { try file.complete(partial) } catch { _error = error }
        }
        lock.unlock()
        deliverCompletion { [self] in finish() }
    }

}

/// Connects a transfer to its operation. A separate object so the operation's
/// public surface does not list the transport's protocol.
final class TransferSink: TransferDelegate {
    private let operation: URLConnectionOperation

    init(_ operation: URLConnectionOperation) { self.operation = operation }

    func transfer(_ transfer: Transfer, didReceiveResponse response: ReceivedResponse) {
        operation.transferDidReceive(transfer, response: response)
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> Error? {
        operation.transferDidReceive(transfer, bytes: bytes)
    }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {
        operation.transferDidSend(transfer, bytes: bytesSent, total: totalBytesSent, expected: totalBytesExpected)
    }

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        operation.transferDidComplete(transfer, response: response, error: error)
    }
}
