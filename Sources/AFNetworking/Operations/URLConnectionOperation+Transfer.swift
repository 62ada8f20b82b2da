import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Starting a hop's transfer, and the transfer's reports back to the machine.
extension URLConnectionOperation {
    /// Builds the transfer for `hop` and hands it to the engine. Runs on the
    /// thread that started the operation, or the one that decided a redirect
    /// or challenge — never the network thread: it touches the cookie and
    /// credential storages and may copy a caller's body stream.
    func startTransfer(_ hop: TransferStateMachine.HopStart) {
        NetworkThread.assertNotCurrent()
        if let (response, request) = hop.effects.storeCookies {
            CookieHandling.store(from: response, for: request)
        }
        if let (credential, space) = hop.effects.storeCredential {
            URLCredentialStorage.shared.set(credential, for: space)
        }
        var request = hop.request
        if hop.needsFreshBodyStream, let stream = request.httpBodyStream {
            // An earlier hop consumed the body: send a fresh copy, or fail.
            guard let copyable = stream as? NSCopying, let fresh = copyable.copy(with: nil) as? InputStream else {
                let error = TransportErrors.make(NSURLErrorRequestBodyStreamExhausted, url: request.url, underlying: nil,
                                                 description: "The request body stream was consumed and cannot be sent again.")
                handle { $0.machine.transferCouldNotStart(hop.tag, error: error) }
                return
            }
            request.httpBodyStream = fresh
        }
        let (policy, reportsUpload) = settings.withLock { ($0.securityPolicy, $0.uploadProgress != nil) }
        var options = TransferOptions(request: CookieHandling.addingCookies(to: request))
        options.tag = hop.tag
        options.credentials = hop.credentials
        options.reportsUploadProgress = reportsUpload
        options.tls = policy?.transferVerification ?? TLSVerification()
        let writer = core.withLock { $0.writer }
        let transfer: Transfer
        do {
            transfer = try Transfer(options: options, delegate: TransferSink(operation: self, writer: writer))
        } catch {
            let failure = TransportErrors.error(forUnbuildableTransfer: error, url: request.url)
            handle { $0.machine.transferCouldNotStart(hop.tag, error: failure) }
            return
        }
        let wanted = core.withLock { core -> Bool in
            guard core.machine.isCurrent(hop.tag) else { return false }
            core.transfer = transfer
            return true
        }
        guard wanted else {
            // Cancelled or paused while the handle was being built: it never
            // reached the engine, so it is freed here and never reported.
            transfer.releaseResources()
            return
        }
        #if DEBUG
        TestHooks.beforeSubmittingTransfer.withLock { $0 }?()
        #endif
        // A cancel from here on aborts `transfer` (taken from the registry);
        // the abort is sticky, so the engine never sends it even if the abort
        // reaches the network thread before this start does.
        NetworkEngine.shared.start(transfer)
    }
}

/// Connects a transfer to its operation. A separate object so the operation's
/// public surface does not list the transport's protocol. Its methods run on
/// the network thread: they update the machine under the operation's lock and
/// hand everything else (the output stream, progress blocks, completion) to
/// other queues.
final class TransferSink: TransferDelegate {
    private let operation: URLConnectionOperation
    private let writer: ResponseBodyWriter?

    init(operation: URLConnectionOperation, writer: ResponseBodyWriter?) {
        self.operation = operation
        self.writer = writer
    }

    func transfer(_ transfer: Transfer, didReceiveHead response: ReceivedResponse) -> NSError? {
        NetworkThread.assertCurrent()
        let action = operation.core.withLock { $0.machine.headReceived(transfer.tag, response) }
        switch action {
        case .ignore:
            return TransferStateMachine.cancellationError(for: transfer.options.request)
        case .refuse(let error, let outcome):
            operation.finishOutput(outcome)
            return error
        case .proceed(let route, let restartOutput):
            guard let writer else { return nil }
            if restartOutput { writer.restart() }
            if route == .output, let file = operation.settings.withLock({ $0.resumableFile }) {
                // The sidecar is written (and synced) on the writer's queue.
                writer.perform { file.record(response) }
            }
            return nil
        }
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        NetworkThread.assertCurrent()
        if let writer, !writer.admit(transfer) {
            // Full: curl keeps these bytes until the writer has drained.
            return .pause
        }
        switch operation.core.withLock({ $0.machine.bodyReceived(transfer.tag, bytes) }) {
        case .kept:
            return .accepted
        case .keptWithProgress(let progress):
            reportDownload(progress)
            return .accepted
        case .forward(let progress):
            writer?.enqueue(bytes)
            if let block = operation.settings.withLock({ $0.downloadProgress }) {
                // After the bytes are in the stream, as 2.7 reported it.
                let queue = operation.effectiveCompletionQueue, group = operation.effectiveCompletionGroup
                writer?.perform { queue.async(group: group) { block(progress.bytes, progress.total, progress.expected) } }
            }
            return .accepted
        case .refuse:
            return .abort(TransferStateMachine.cancellationError(for: transfer.options.request))
        }
    }

    private func reportDownload(_ progress: TransferStateMachine.Progress) {
        guard let block = operation.settings.withLock({ $0.downloadProgress }) else { return }
        operation.effectiveCompletionQueue.async(group: operation.effectiveCompletionGroup) {
            block(progress.bytes, progress.total, progress.expected)
        }
    }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {
        guard operation.core.withLock({ $0.machine.isCurrent(transfer.tag) }),
              let block = operation.settings.withLock({ $0.uploadProgress }) else { return }
        operation.effectiveCompletionQueue.async(group: operation.effectiveCompletionGroup) {
            block(bytesSent, totalBytesSent, totalBytesExpected)
        }
    }

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        let tag = transfer.tag
        let operation = self.operation
        guard let writer else {
            operation.handle { $0.machine.transferCompleted(tag, response: response, error: error) }
            return
        }
        // After every byte of this transfer is in the stream.
        writer.perform {
            operation.handle { $0.machine.transferCompleted(tag, response: response, error: error) }
        }
    }
}

#if DEBUG
/// Seams for tests that need to widen a race window. Debug builds only.
enum TestHooks {
    /// Runs after a transfer is registered as current and before it is handed
    /// to the engine (the window in which a cancel used to overtake the start).
    static let beforeSubmittingTransfer = LockedState<(@Sendable () -> Void)?>(nil)
}
#endif
