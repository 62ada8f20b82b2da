import CAFCurl
import Foundation

/// The one network thread, named `AFNetworking`, and the libcurl multi handle
/// it owns. Other threads never touch curl: they post a `Command` to the
/// lock-protected inbox and wake the thread with `curl_multi_wakeup`. When
/// nothing is due the thread sleeps in `curl_multi_poll`.
final class NetworkEngine: @unchecked Sendable {
    static let shared = NetworkEngine()

    enum Command {
        case start(Transfer)
        /// Ends a transfer early. `reason` becomes its error.
        case abort(Transfer, Transfer.AbortReason)
    }

    /// nil only if libcurl could not be initialised at all: every transfer
    /// then fails with an error instead of the process stopping.
    private let multi: UnsafeMutableRawPointer?
    private let inboxLock = NSLock()
    private var inbox: [Command] = []
    // Network thread only from here on.
    private var active: [ObjectIdentifier: Transfer] = [:]
    private var drained: [Command] = []
    private let partitions = ConnectionPartitions()

    private init() {
        multi = cafcurl_global_init_once() == CURLE_OK ? curl_multi_init() : nil
        guard let multi else { return }
        // Keep more idle connections than curl's default for busy queues.
        _ = cafcurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
        let thread = Thread { [unowned self] in self.run(multi) }
        thread.name = "AFNetworking"
        thread.qualityOfService = .userInitiated
        thread.start()
    }

    /// Thread-safe: queues a command for the network thread.
    func submit(_ command: Command) {
        guard let multi else {
            if case .start(let transfer) = command {
                transfer.finish(error: TransportErrors.make(NSURLErrorCannotLoadFromNetwork, url: transfer.options.request.url, underlying: nil,
                                                            description: "libcurl could not be initialised."))
                transfer.releaseResources()
            }
            return
        }
        inboxLock.lock()
        let wasEmpty = inbox.isEmpty
        inbox.append(command)
        inboxLock.unlock()
        // One wake-up per batch of commands: a non-empty inbox already has one
        // pending (curl's wake-up stays readable until the thread polls), and
        // the thread drains the whole inbox each time round.
        if wasEmpty { curl_multi_wakeup(multi) }
    }

    // MARK: - Network thread

    private func run(_ multi: UnsafeMutableRawPointer) {
        // Threads inherit the creator's OS-level name; set ours for debuggers,
        // perf and `top -H`.
        Thread.current.name = "AFNetworking"
        cafcurl_name_current_thread("AFNetworking")
        var running: Int32 = 0
        while true {
            drainInbox(multi)
            curl_multi_perform(multi, &running)
            collectFinished(multi)
            expireIdleTransfers(multi)
            var ignoredDescriptors: Int32 = 0
            curl_multi_poll(multi, nil, 0, pollTimeoutMilliseconds(multi), &ignoredDescriptors)
        }
    }

    private func drainInbox(_ multi: UnsafeMutableRawPointer) {
        inboxLock.lock()
        swap(&inbox, &drained)
        inboxLock.unlock()
        for command in drained {
            switch command {
            case .start(let transfer):
                add(transfer, to: multi)
            case .abort(let transfer, let reason):
                guard active[ObjectIdentifier(transfer)] != nil else { continue }
                transfer.abortReason = reason
                complete(transfer, code: CURLE_ABORTED_BY_CALLBACK, in: multi)
            }
        }
        drained.removeAll(keepingCapacity: true)
    }

    private func add(_ transfer: Transfer, to multi: UnsafeMutableRawPointer) {
        var failure: Error?
        do {
            try partitions.attach(transfer)
            let status = curl_multi_add_handle(multi, transfer.easy.raw)
            if status != CURLM_OK {
                partitions.detach(transfer)
                failure = CurlOptionError(code: CURLE_FAILED_INIT, what: "the transfer (CURLMcode \(status.rawValue))")
            }
        } catch {
            failure = error
        }
        if let failure {
            let error = TransportErrors.make(NSURLErrorCannotLoadFromNetwork, url: transfer.options.request.url,
                                             underlying: failure as NSError, description: "\(failure)")
            transfer.finish(error: error)
            transfer.releaseResources()
            return
        }
        // The +1 that curl's callbacks rely on; released in `complete`.
        _ = Unmanaged.passRetained(transfer)
        active[ObjectIdentifier(transfer)] = transfer
    }

    private func collectFinished(_ multi: UnsafeMutableRawPointer) {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = cafcurl_message_result(message)
            var userdata: UnsafeMutableRawPointer?
            guard cafcurl_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &userdata) == CURLE_OK, let userdata else { continue }
            let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
            complete(transfer, code: code, in: multi)
        }
    }

    /// Takes the handle out of the multi handle (so no callback can run any
    /// more), reports the result, frees the handle, then drops curl's retain.
    private func complete(_ transfer: Transfer, code: CURLcode, in multi: UnsafeMutableRawPointer) {
        curl_multi_remove_handle(multi, transfer.easy.raw)
        partitions.detach(transfer)
        active[ObjectIdentifier(transfer)] = nil
        var error: NSError?
        if code != CURLE_OK || transfer.abortReason != nil {
            error = TransportErrors.error(
                for: TransportErrors.refine(code, transfer: transfer), abortReason: transfer.abortReason, url: transfer.options.request.url,
                curlMessage: transfer.curlMessage,
                tlsVerifyResult: transfer.easy.info(long: CURLINFO_SSL_VERIFYRESULT))
        }
        transfer.finish(error: error)
        transfer.releaseResources()
        Unmanaged.passUnretained(transfer).release()
    }

    private func expireIdleTransfers(_ multi: UnsafeMutableRawPointer) {
        guard !active.isEmpty else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        for transfer in active.values where transfer.idleDeadline <= now {
            transfer.abortReason = .timedOut
            complete(transfer, code: CURLE_OPERATION_TIMEDOUT, in: multi)
        }
    }

    /// Sleep until curl's next timer or the nearest idle deadline; a submitted
    /// command interrupts the sleep.
    private func pollTimeoutMilliseconds(_ multi: UnsafeMutableRawPointer) -> Int32 {
        var curlTimeout: Int = -1
        curl_multi_timeout(multi, &curlTimeout)
        var timeout = curlTimeout >= 0 ? curlTimeout : 60_000
        if !active.isEmpty {
            let now = DispatchTime.now().uptimeNanoseconds
            for transfer in active.values {
                let deadline = transfer.idleDeadline
                let remaining = deadline > now ? Int((deadline - now) / 1_000_000) + 1 : 0
                timeout = min(timeout, remaining)
            }
        }
        return Int32(clamping: timeout)
    }
}
