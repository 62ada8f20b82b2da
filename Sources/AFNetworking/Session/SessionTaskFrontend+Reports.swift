@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reports from the transfer (on the network thread) turned into delegate
/// calls and progress on the manager's operation queue. Body chunks and
/// counts collect in `PendingReports` and are delivered by one flush per
/// burst; a response head is a barrier (what came before it is delivered
/// before it, what comes after, after it).
extension SessionTaskFrontend {
    func didReceiveHead(_ response: ReceivedResponse, route: TransferStateMachine.BodyRoute, writer: ResponseBodyWriter?) {
        guard route == .output else { return }
        deliverPendingReports()
        switch kind {
        case .download(.resuming(let resume)):
            // A 206 continues at the offset; a 200 starts the file over.
            let offset = response.statusCode == 206 ? resume.bytesWritten : 0
            let expected = response.statusCode == 206 ? (ResumeRules.completeLength(of: response) ?? -1) : response.expectedContentLength
            context.events.submit { [self] in
                guard let task = currentTask as? URLSessionDownloadTask else { return }
                // The resume first, then the progress at its offset (Apple's
                // order): a rate computed from the progress (afn's bar) must
                // know the offset before it sees bytes that did not arrive now.
                context.manager?.urlSession(context.session, downloadTask: task, didResumeAtOffset: offset, expectedTotalBytes: expected)
                progress.update(.download, completed: offset, expected: expected)
            }
        case .download:
            break
        case .data, .upload:
            askAboutResponseIfNotAsked { response.httpURLResponse }
        }
    }

    /// The did-receive-response question of a data or upload task, once per
    /// task: the first response for its output asks it. Nobody but the
    /// library's own delegate method (which answers `.allow`) could answer:
    /// then nothing is asked. `response` is made only when asked (building an
    /// `HTTPURLResponse` is the costliest step of a small request).
    func askAboutResponseIfNotAsked(_ response: @escaping @Sendable () -> URLResponse?) {
        if case .download = kind { return }
        let mustAsk = !context.skipsUnobservedCalls || context.manager?.hasBlock(.dataTaskDidReceiveResponse) == true
        guard case .askAboutResponse = requestDriver.handle(.responseArrived(mustAsk: mustAsk)) else { return }
        context.events.submit { [self] in
            guard let manager = context.manager, let task = currentTask as? URLSessionDataTask,
                  let response = response() else { return decideResponse(.allow) }
            let once = Once()
            manager.urlSession(context.session, dataTask: task, didReceive: response) { [self] disposition in
                if once.claim() { decideResponse(disposition) }
            }
        }
    }

    /// Whether the next piece may be taken now: not while a full chunk waits
    /// for the operation queue (the transfer pauses until a flush takes it).
    func admitsBody(_ transfer: Transfer) -> Bool {
        // The network thread is the only producer: when no full chunk waits
        // now, none can appear before this piece is handed over.
        guard dataBacklogged.load(ordering: .acquiring) else { return true }
        return state.withLock { state in
            guard let data = state.reports.data, data.count >= PendingReports.dataHighWater else { return true }
            state.reports.blocked = transfer
            return false
        }
    }

    func didReceiveBody(_ bytes: UnsafeRawBufferPointer, progress report: TransferStateMachine.Progress, writer: ResponseBodyWriter?) {
        if recordUnobserved(.download, completed: report.total, expected: report.expected) { return }
        // Chunks are handed to the did-receive-data call only when someone can see them.
        let chunk = writer == nil && (!context.skipsUnobservedCalls || context.manager?.hasBlock(.dataTaskDidReceiveData) == true)
            ? Data(bytes) : nil
        enqueueReport { reports in
            if let chunk {
                if reports.data == nil { reports.data = chunk } else { reports.data?.append(chunk) }
                if (reports.data?.count ?? 0) >= PendingReports.dataHighWater { dataBacklogged.store(true, ordering: .releasing) }
            }
            reports.receivedSinceLast += Int64(report.bytes)
            reports.received = (report.total, report.expected)
        }
    }

    func didSendBody(bytes: Int, total: Int64, expected: Int64) {
        if recordUnobserved(.upload, completed: total, expected: expected) {
            state.withLock { $0.noteSent(total: total, expected: expected) }
            return
        }
        enqueueReport { reports in
            reports.sentSinceLast += Int64(bytes)
            reports.sent = (total, expected)
        }
    }

    /// Whether nobody can see this task's reports and end on the
    /// `operationQueue`: the manager's delegate methods are its own (no
    /// subclass), none of the blocks that see a task's data, progress or end
    /// is set, and it is a data or upload task that stayed one.
    var flowIsUnobserved: Bool {
        if case .download = kind { return false }
        guard context.skipsUnobservedCalls, let manager = context.manager, !manager.observesTaskFlow else { return false }
        return !requestDriver.becameDownload
    }

    /// Counts nobody can see are stored at once instead of being sent to the
    /// operation queue, one event per burst, to store them there. Only until
    /// a report has gone to that queue (then all do), so counts never go
    /// back; the network thread is the only producer of reports.
    private func recordUnobserved(_ direction: TaskProgress.Direction, completed: Int64, expected: Int64) -> Bool {
        // Cheapest first: once reports go through the queue, they always do.
        guard !state.withLock({ $0.reportsGoThroughQueue }), flowIsUnobserved else { return false }
        return progress.recordUnobserved(direction, completed: completed, expected: expected)
    }

    /// Adds to the pending reports and schedules a flush unless one is on its way.
    private func enqueueReport(_ add: (inout PendingReports) -> Void) {
        let schedule = state.withLock { state -> Int? in
            add(&state.reports)
            if let sent = state.reports.sent { state.noteSent(total: sent.total, expected: sent.expected) }
            state.reportsGoThroughQueue = true
            guard !state.reports.scheduled else { return nil }
            state.reports.scheduled = true
            return state.reports.generation
        }
        if let generation = schedule {
            context.events.submit { [self] in flushReports(generation: generation) }
        }
    }

    /// The scheduled flush: delivers what is pending unless a barrier took it.
    private func flushReports(generation: Int) {
        if let reports = takeReports(where: { $0.generation == generation }) { deliver(reports) }
    }

    /// A barrier: what is pending now is delivered before anything submitted
    /// after this call; a flush scheduled earlier finds nothing.
    func deliverPendingReports() {
        if let reports = takeReports(where: \.scheduled) { context.events.submit { [self] in deliver(reports) } }
    }

    /// On the operation queue, at the task's end: anything still pending is
    /// delivered before the did-complete call.
    func deliverPendingReportsNow() {
        if let reports = takeReports(where: \.scheduled) { deliver(reports) }
    }

    /// Takes what is pending if `condition` holds, and lets a transfer that
    /// paused on the full chunk go on (after the lock: the engine is told).
    private func takeReports(where condition: (PendingReports) -> Bool) -> PendingReports? {
        let reports = state.withLock { state -> PendingReports? in
            guard condition(state.reports) else { return nil }
            dataBacklogged.store(false, ordering: .releasing)
            return state.reports.take()
        }
        if let blocked = reports?.blocked { requestDriver.engine.resumeReceiving(blocked) }
        return reports
    }

    /// On the operation queue: progress first, then the delegate calls.
    private func deliver(_ reports: PendingReports) {
        guard let task = currentTask else { return }
        if let sent = reports.sent {
            progress.update(.upload, completed: sent.total, expected: sent.expected)
            context.manager?.urlSession(context.session, task: task, didSendBodyData: reports.sentSinceLast,
                                       totalBytesSent: sent.total, totalBytesExpectedToSend: sent.expected)
        }
        if let data = reports.data, let dataTask = task as? URLSessionDataTask, requestDriver.deliversDataToDelegate {
            context.manager?.urlSession(context.session, dataTask: dataTask, didReceive: data)
        }
        if let received = reports.received {
            progress.update(.download, completed: received.total, expected: received.expected)
            if let downloadTask = task as? URLSessionDownloadTask {
                context.manager?.urlSession(context.session, downloadTask: downloadTask, didWriteData: reports.receivedSinceLast,
                                           totalBytesWritten: received.total, totalBytesExpectedToWrite: received.expected)
            }
        }
    }

    // MARK: - Response decision

    /// The data-task-did-receive-response answer (the first one counts).
    func decideResponse(_ disposition: URLSession.ResponseDisposition) {
        // A streamed body (`bytes(for:)`) has a reader waiting for it: it
        // cannot move to a file, so `.becomeDownload` lets it go on as it is.
        var answer = disposition
        if case .becomeDownload = disposition, requestDriver.writer?.chunks != nil { answer = .allow }
        carryOut(requestDriver.handle(.responseDecided(answer)))
    }

    /// Carries out what the task's output decided (never under a lock).
    func carryOut(_ action: SessionTaskOutput.Action) {
        switch action {
        case .none:
            break
        case .cancelTask:
            cancel()
        case .proceed(let outcome):
            context.events.submit { [self] in requestDriver.outputFinished(outcome) }
        case .becomeDownload:
            becomeDownload()
        case .removeFile(let file):
            DownloadFile.remove(file)
        case .resumeData(let handlers, let data, let removing):
            if let removing { DownloadFile.remove(removing) }
            for handler in handlers { context.events.submit { handler(data) } }
        case .askAboutResponse, .finish, .endWithCompletionWork:
            preconditionFailure("\(action) is carried out where it is decided")
        }
    }

    /// `.becomeDownload`: a download task takes the data task's place; the
    /// body kept so far and the rest of it go to a temporary file (or, when
    /// the body was already complete, the end writes it there). The task's
    /// end waits in the decision until the did-become call has run, so the
    /// delegate hears of the download task before anything about it.
    private func becomeDownload() {
        let identifier = TaskIdentifiers.next()
        let downloadTask = SessionDownloadTask(frontend: self, identifier: identifier)
        let (previous, oldIdentifier) = state.withLock { state -> (URLSessionTask?, Int) in
            let previous = state.task.task
            state.task = .strong(downloadTask)
            defer { state.identifier = identifier }
            return (previous, state.identifier)
        }
        context.session.replaceTask(identifier: oldIdentifier, with: self, newIdentifier: identifier)
        switch Result(catching: { try DownloadFile.create() }) {
        case .success(let (file, stream)):
            // Once the outcome is decided the end writes the body itself.
            _ = requestDriver.divertOutput(to: stream, file: file)
        case .failure(let error):
            requestDriver.handle(.fail(error as NSError))
        }
        context.events.submit { [self] in
            // The data task stops being serviced and the download task runs:
            // observers that count requests (the activity indicator) stay balanced.
            if let previous { MainQueueNotifier.shared.post(.AFNetworkingTaskDidSuspend, object: previous, marks: .ends) }
            MainQueueNotifier.shared.post(.AFNetworkingTaskDidResume, object: downloadTask, marks: .begins)
            if let dataTask = previous as? URLSessionDataTask {
                context.manager?.urlSession(context.session, dataTask: dataTask, didBecome: downloadTask)
            }
            if case .proceed(let parked) = requestDriver.handle(.downloadAnnounced) { requestDriver.outputFinished(parked) }
        }
    }
}

extension SessionTaskFrontend.PendingReports {
    /// Takes everything pending; the next report schedules a new flush.
    mutating func take() -> Self {
        var taken = self
        taken.scheduled = false
        self = Self(generation: generation + 1)
        return taken
    }
}
