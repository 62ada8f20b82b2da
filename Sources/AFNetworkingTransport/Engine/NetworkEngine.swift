import CAFCurl
import CAFSystem
import Foundation

/// The one network thread, named `AFNetworking`, and the libcurl multi handle
/// it owns. Other threads never touch curl: they post a `Command` to the
/// lock-protected inbox and wake the thread with `curl_multi_wakeup`. When
/// nothing is due the thread sleeps in `curl_multi_poll`.
///
/// The thread runs curl and this engine only: transfers report to delegates
/// that hand anything slow or user-supplied to other queues.
package final class NetworkEngine: @unchecked Sendable {
    // @unchecked: `inbox` is behind `inboxLock`; everything else after `init`
    // is touched by the network thread only (asserted where it matters).
    package static let shared = NetworkEngine()

    enum Command {
        case start(Transfer)
        /// Ends a transfer early; the reason is the transfer's sticky abort request.
        case abort(Transfer)
        /// Lifts the back-pressure pause the delegate asked for.
        case resumeReceiving(Transfer)
        /// The request body has bytes again.
        case resumeSending(Transfer)
        /// Stops (or restarts) all data flow of a transfer, keeping its connection.
        case suspend(Transfer, Bool)
    }

    /// nil only if libcurl could not be initialised at all: every transfer
    /// then fails with an error instead of the process stopping.
    private let multi: UnsafeMutableRawPointer?
    private let inboxLock = LockedState<[Command]>([])
    // Network thread only from here on.
    private var active: [ObjectIdentifier: Transfer] = [:]
    private var drained: [Command] = []
    private let partitions = ConnectionPartitions()
    /// Per host-limit key: transfers running, and those waiting for a slot.
    private var limited: [String: HostSlots] = [:]
    /// Transfers suspended before they joined curl: held out of it (nothing
    /// is sent, not even the request head) until they are unsuspended.
    private var held: [ObjectIdentifier: Transfer] = [:]
    /// When to give freed heap back once the engine is quiet.
    private var idleTrim = IdleHeapTrim()

    private init() {
        multi = cafcurl_global_init_once() == CURLE_OK ? curl_multi_init() : nil
        guard let multi else { return }
        // Keep more idle connections than curl's default for busy queues.
        _ = cafcurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, 64)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [unowned self] in
            NetworkThread.claim()
            started.signal()
            self.run()
        }
        thread.name = "AFNetworking"
        thread.qualityOfService = .userInitiated
        thread.start()
        started.wait()
    }

    // MARK: - Commands (any thread)

    /// Hands a built transfer to the network thread. If an abort was requested
    /// before the thread sees it, it is completed with that reason without
    /// ever being added to curl: nothing of the request is sent.
    package func start(_ transfer: Transfer) {
        submit(.start(transfer))
    }

    /// Ends `transfer` with `reason` (sticky: a later start or a second abort
    /// changes nothing). Safe before, during or after the engine saw the start.
    package func abort(_ transfer: Transfer, reason: AbortReason) {
        guard transfer.recordAbortRequest(reason) else { return }
        submit(.abort(transfer))
    }

    /// The delegate's buffer has room again after it answered `.pause`.
    package func resumeReceiving(_ transfer: Transfer) {
        submit(.resumeReceiving(transfer))
    }

    /// The request body pump has bytes again after curl found it empty.
    package func resumeSending(_ transfer: Transfer) {
        submit(.resumeSending(transfer))
    }

    /// Suspends all data flow of `transfer` (nothing read or written, no idle
    /// timeout) or resumes it, on the same connection.
    package func setSuspended(_ transfer: Transfer, _ suspended: Bool) {
        submit(.suspend(transfer, suspended))
    }

    private func submit(_ command: Command) {
        guard let multi else {
            if case .start(let transfer) = command {
                // Reported from elsewhere: the caller may hold its own lock
                // while submitting, and the report takes it.
                DispatchQueue.global().async {
                    let error = TransportErrors.make(NSURLErrorCannotLoadFromNetwork, url: transfer.options.request.url, underlying: nil,
                                                     description: "libcurl could not be initialised.")
                    transfer.finish(error: error)
                    transfer.releaseResources()
                }
            }
            return
        }
        let wasEmpty = inboxLock.withLock { inbox in
            let wasEmpty = inbox.isEmpty
            inbox.append(command)
            return wasEmpty
        }
        // One wake-up per batch of commands: a non-empty inbox already has one
        // pending (curl's wake-up stays readable until the thread polls), and
        // the thread drains the whole inbox each time round.
        if wasEmpty { curl_multi_wakeup(multi) }
    }

    // MARK: - Network thread

    private func run() {
        guard let multi else { return }
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
            if idleTrim.passEnded(active: !active.isEmpty, now: DispatchTime.now().uptimeNanoseconds) {
                // Not on this thread: it walks every arena, under each one's lock.
                DispatchQueue.global(qos: .utility).async { cafsys_trim_heap() }
            }
            // What the pass handed to other queues leaves before the thread sleeps.
            PassHandoffs.flush()
            var ignoredDescriptors: Int32 = 0
            curl_multi_poll(multi, nil, 0, pollTimeoutMilliseconds(multi), &ignoredDescriptors)
        }
    }

    private func drainInbox(_ multi: UnsafeMutableRawPointer) {
        inboxLock.withLock { swap(&$0, &drained) }
        // Transfers started in this batch join curl after the batch's other
        // commands: a suspend right behind its start then holds it back
        // before anything is sent.
        var starting: [Transfer] = []
        for command in drained {
            switch command {
            case .start(let transfer):
                starting.append(transfer)
            case .abort(let transfer):
                if removeWaiting(transfer) || held.removeValue(forKey: ObjectIdentifier(transfer)) != nil {
                    // Waiting for a slot of its host: it never joined curl.
                    transfer.abortReason = transfer.requestedAbort
                    transfer.finish(error: transfer.outcomeError(for: CURLE_ABORTED_BY_CALLBACK))
                    transfer.releaseResources()
                    continue
                }
                // Unknown here: not started yet (its start will see the sticky
                // request) or already completed (nothing to do).
                guard active[ObjectIdentifier(transfer)] != nil else { continue }
                transfer.abortReason = transfer.requestedAbort
                complete(transfer, code: CURLE_ABORTED_BY_CALLBACK, in: multi)
            case .resumeReceiving(let transfer):
                guard active[ObjectIdentifier(transfer)] != nil, transfer.pauseState.receiveBlocked else { continue }
                transfer.pauseState.receiveBlocked = false
                applyPause(transfer)
            case .resumeSending(let transfer):
                guard active[ObjectIdentifier(transfer)] != nil, transfer.pauseState.sendStarved else { continue }
                transfer.pauseState.sendStarved = false
                applyPause(transfer)
            case .suspend(let transfer, let suspended):
                guard transfer.pauseState.suspended != suspended else { continue }
                transfer.pauseState.suspended = suspended
                if active[ObjectIdentifier(transfer)] != nil {
                    // Without a connection yet, curl_easy_pause refuses (and
                    // curl would send the request once connected): nothing has
                    // been sent, so the transfer leaves curl until unsuspended.
                    if applyPause(transfer) == CURLE_BAD_FUNCTION_ARGUMENT, suspended { holdBack(transfer, in: multi) }
                } else if !suspended, held.removeValue(forKey: ObjectIdentifier(transfer)) != nil {
                    add(transfer, to: multi)
                }
                // Otherwise it is not here yet, or waits for its host's slot:
                // `add` holds it back if it is still suspended then.
            }
        }
        drained.removeAll(keepingCapacity: true)
        for transfer in starting { add(transfer, to: multi) }
    }

    /// Tells curl which directions stay paused. Lifting a pause may run the
    /// write callback right here with data curl held back, which may pause again.
    @discardableResult
    private func applyPause(_ transfer: Transfer) -> CURLcode {
        // Time spent paused is not idle time.
        transfer.lastActivity = DispatchTime.now().uptimeNanoseconds
        return curl_easy_pause(transfer.easy.raw, transfer.pauseState.curlMask)
    }

    /// Takes a suspended transfer that has no connection yet out of curl; it
    /// joins again (from the start: nothing of it was sent) when unsuspended.
    private func holdBack(_ transfer: Transfer, in multi: UnsafeMutableRawPointer) {
        curl_multi_remove_handle(multi, transfer.easy.raw)
        partitions.detach(transfer)
        active[ObjectIdentifier(transfer)] = nil
        // The +1 taken for curl's callbacks when it joined.
        Unmanaged.passUnretained(transfer).release()
        releaseSlot(of: transfer, in: multi)
        held[ObjectIdentifier(transfer)] = transfer
    }

    private func add(_ transfer: Transfer, to multi: UnsafeMutableRawPointer, waited: Bool = false) {
        if let reason = transfer.requestedAbort {
            // Aborted before it got here: it never joins curl (and hands on
            // the host slot it was given, if it waited for one).
            transfer.abortReason = reason
            transfer.finish(error: transfer.outcomeError(for: CURLE_ABORTED_BY_CALLBACK))
            transfer.releaseResources()
            if waited { releaseSlot(of: transfer, in: multi) }
            return
        }
        if transfer.pauseState.suspended {
            // Suspended before it started: it joins curl when unsuspended
            // (and then waits for its host's slot again).
            held[ObjectIdentifier(transfer)] = transfer
            if waited { releaseSlot(of: transfer, in: multi) }
            return
        }
        if let limit = transfer.options.hostLimit, !waited {
            let slots = limited[limit.key] ?? HostSlots()
            limited[limit.key] = slots
            guard slots.running < limit.maximum else {
                // Its host is at the limit: it waits, in order, for a slot.
                slots.enqueue(transfer)
                return
            }
            slots.running += 1
        }
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
            releaseSlot(of: transfer, in: multi)
            return
        }
        // The +1 that curl's callbacks rely on; released in `complete`.
        _ = Unmanaged.passRetained(transfer)
        transfer.lastActivity = DispatchTime.now().uptimeNanoseconds
        active[ObjectIdentifier(transfer)] = transfer
        transfer.bodyPump?.start()
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
        transfer.finish(error: transfer.outcomeError(for: code))
        transfer.releaseResources()
        Unmanaged.passUnretained(transfer).release()
        releaseSlot(of: transfer, in: multi)
    }

    /// A transfer under a host limit ended: the next one waiting for that
    /// host, if any, takes its slot.
    private func releaseSlot(of transfer: Transfer, in multi: UnsafeMutableRawPointer) {
        guard let key = transfer.options.hostLimit?.key, let slots = limited[key] else { return }
        guard let next = slots.dequeue() else {
            slots.running -= 1
            if slots.isIdle { limited[key] = nil }
            return
        }
        add(next, to: multi, waited: true)
    }

    /// Takes a transfer out of its host's waiting list; false if it was not waiting.
    private func removeWaiting(_ transfer: Transfer) -> Bool {
        guard let key = transfer.options.hostLimit?.key, let slots = limited[key] else { return false }
        return slots.remove(transfer)
    }

    private func expireIdleTransfers(_ multi: UnsafeMutableRawPointer) {
        guard !active.isEmpty else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        for transfer in active.values where !transfer.pauseState.isPaused && transfer.idleDeadline <= now {
            _ = transfer.recordAbortRequest(.timedOut)
            transfer.abortReason = transfer.requestedAbort
            complete(transfer, code: CURLE_OPERATION_TIMEDOUT, in: multi)
        }
    }

    /// Sleep until curl's next timer, the nearest idle deadline or the heap
    /// trim; a submitted command interrupts the sleep.
    private func pollTimeoutMilliseconds(_ multi: UnsafeMutableRawPointer) -> Int32 {
        var curlTimeout: Int = -1
        curl_multi_timeout(multi, &curlTimeout)
        var timeout = curlTimeout >= 0 ? curlTimeout : 60_000
        if !active.isEmpty {
            let now = DispatchTime.now().uptimeNanoseconds
            for transfer in active.values where !transfer.pauseState.isPaused {
                let deadline = transfer.idleDeadline
                let remaining = deadline > now ? Int((deadline - now) / 1_000_000) + 1 : 0
                timeout = min(timeout, remaining)
            }
        }
        if let due = idleTrim.millisecondsUntilDue(now: DispatchTime.now().uptimeNanoseconds) { timeout = min(timeout, due) }
        return Int32(clamping: timeout)
    }
}

/// Why a transfer's data flow is stopped. Network thread only.
struct PauseState {
    /// The delegate answered `.pause` for a body piece (its buffer is full).
    var receiveBlocked = false
    /// The request body pump had nothing for curl yet.
    var sendStarved = false
    /// The owner suspended the transfer.
    var suspended = false

    var isPaused: Bool { receiveBlocked || suspended }

    /// curl_easy_pause's bitmask for these reasons.
    var curlMask: Int32 {
        if suspended { return CAFCURL_PAUSE_ALL }
        return (receiveBlocked ? CAFCURL_PAUSE_RECV : 0) | (sendStarved ? CAFCURL_PAUSE_SEND : 0)
    }
}
