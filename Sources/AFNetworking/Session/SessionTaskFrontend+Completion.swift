@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The end of a task, in 2.7's order: on the operation queue the resume-data
/// handler, the did-finish-downloading call (which moves the file), the
/// will-cache call, the did-complete call and the session's bookkeeping;
/// then the completion handler (`SessionTaskFrontend+Delivery.swift`). A task
/// nobody observes on that queue runs the same steps with its completion work
/// instead (`SessionTaskOutput.End.withCompletionWork`).
extension SessionTaskFrontend {
    /// The task shows `.canceling` (or `.running`) until its delegate queue
    /// gets to its end — or, for an end nobody observes there, until its
    /// output is final; `.completed` from then on. A data task whose delegate
    /// has not answered its response yet waits for the answer — also for an
    /// answer whose head never reached the output as it arrived (one from the
    /// cache, a declined redirect, an error answer a retry policy or the
    /// interceptor held back and then kept): it is asked about now, as
    /// `URLSession` asks about a cached response.
    func outputIsFinal(_ outcome: TransferStateMachine.Outcome, driver: RequestDriver) {
        let unobserved = endsWithCompletionWork(outcome)
        let end: @Sendable () -> Void = { [self] in
            if outcome.error == nil, outcome.response != nil { askAboutResponseIfNotAsked { outcome.urlResponse } }
            // Parked (nothing to do now) while the response's answer is outstanding.
            if case .proceed(let final) = driver.handle(.outcomeFinal(outcome, unobserved: unobserved)) { driver.outputFinished(final) }
        }
        // Nobody sees the delegate queue's part: it runs here, then with the completion work (`runCompletion`).
        if unobserved { end() } else { context.events.submit(end) }
    }

    /// Whether the task's part of this end may run with the completion work
    /// instead of on the delegate queue (`SessionTaskOutput.End`): nobody
    /// observes the task's flow or progress (as the blocks and objects stand
    /// now, when the output is final) and no report has gone to that queue.
    /// A cancelled task still ends there (it shows `.canceling` until that
    /// queue reaches its end, as `URLSession`'s do), and so does any task
    /// while the caller holds the queue suspended (which holds its tasks' ends).
    private func endsWithCompletionWork(_ outcome: TransferStateMachine.Outcome) -> Bool {
        guard !outcome.isCancellation, flowIsUnobserved, progress.isUnobserved, let manager = context.manager,
              !manager.operationQueue.isSuspended else { return false }
        return !state.withLock { $0.reportsGoThroughQueue }
    }

    /// On the delegate queue (from `outputIsFinal`, or a response answer that
    /// released a parked end); for an end nobody observes, wherever the output
    /// became final (the network thread included): then the task's part runs
    /// first in the completion work, off that thread.
    func runCompletion(_ outcome: TransferStateMachine.Outcome) {
        let started = requestDriver.handle(.completionStarted)
        if case .endWithCompletionWork = started { return finishWithCompletionWork(outcome) }
        deliverPendingReportsNow()
        // Handlers still waiting for resume data get nil, before the did-complete call.
        if case .resumeData(let handlers, let data, _) = started {
            for handler in handlers { handler(data) }
        }
        finishOnDelegateQueue(outcome)
    }

    /// The end of a task nobody observes (`SessionTaskOutput.End.withCompletionWork`):
    /// what the delegate queue would do — the cache and cookies, progress, the
    /// session's task list, the did-complete call (the manager's own, which
    /// only looks for a block) — runs at the start of the completion work,
    /// before the handler, in the same order.
    private func finishWithCompletionWork(_ outcome: TransferStateMachine.Outcome) {
        guard let task = currentTask else {
            requestDriver.handle(.completionFinished)
            return
        }
        deliverCompletion(task, outcome, download: .none) { [self] in
            deliverPendingReportsNow()
            reportBodyNotSeenAsItArrived(outcome, task: task)
            if let proposal = requestDriver.recordResponse(outcome) { proposal.commit(proposal.proposal) }
            finishTask(task, outcome, delivering: false)
        }
    }

    /// The delegate's part of the end: files, cache, did-complete.
    private func finishOnDelegateQueue(_ outcome: TransferStateMachine.Outcome) {
        guard let task = currentTask else {
            requestDriver.handle(.completionFinished)
            return
        }
        let diverted = requestDriver.becameDownload
        if diverted { writeDivertedBodyIfNeeded(outcome) }
        reportBodyNotSeenAsItArrived(outcome, task: task)
        if kind.isDownload || diverted, outcome.error == nil, case .complete(let file) = requestDriver.taskOutputFile {
            if case .rawDownload = completion {
                // Handed to the completion handler, deleted after it.
            } else if let downloadTask = task as? URLSessionDownloadTask {
                context.manager?.urlSession(context.session, downloadTask: downloadTask, didFinishDownloadingTo: file)
            }
        }
        let proposal = requestDriver.recordResponse(outcome)
        guard let proposal, let manager = context.manager, let dataTask = task as? URLSessionDataTask, !diverted,
              !context.skipsUnobservedCalls || manager.hasBlock(.dataTaskWillCacheResponse) else {
            proposal?.commit(proposal?.proposal)
            return finishTask(task, outcome)
        }
        let once = Once()
        manager.urlSession(context.session, dataTask: dataTask, willCacheResponse: proposal.proposal) { [self] answer in
            guard once.claim() else { return }
            proposal.commit(answer)
            // The answer may come later, from any thread: the rest stays in order on the queue.
            context.events.submit { [self] in finishTask(task, outcome) }
        }
    }

    /// A body that never flowed through the transfer as it arrived — a cached
    /// answer, a declined redirect's body — is reported once here, so the data
    /// calls and the download progress see it too.
    private func reportBodyNotSeenAsItArrived(_ outcome: TransferStateMachine.Outcome, task: URLSessionTask) {
        guard outcome.error == nil, let body = outcome.memoryBody, !body.isEmpty, progress.completed(.download) == 0 else { return }
        progress.update(.download, completed: Int64(body.count), expected: Int64(body.count))
        if let dataTask = task as? URLSessionDataTask, requestDriver.deliversDataToDelegate,
           !context.skipsUnobservedCalls || context.manager?.hasBlock(.dataTaskDidReceiveData) == true {
            context.manager?.urlSession(context.session, dataTask: dataTask, didReceive: body)
        }
    }

    /// A data task that became a download after its body was complete: the
    /// body kept in memory is the file.
    private func writeDivertedBodyIfNeeded(_ outcome: TransferStateMachine.Outcome) {
        guard let body = outcome.memoryBody, case .writing(let file) = requestDriver.taskOutputFile else { return }
        let written = outcome.error == nil && (try? body.write(to: file)) != nil
        carryOut(requestDriver.handle(.divertedBodyWritten(succeeded: written)))
    }

    /// Called by the manager's did-finish-downloading method once it moved
    /// (or failed to move) the file.
    func recordMove(to destination: URL, from temporary: URL, error: NSError?) {
        carryOut(requestDriver.handle(.fileMoved(to: destination, error: error, temporary: temporary)))
    }

    /// `delivering`: runs the completion pipeline too (false: it is already running this).
    private func finishTask(_ task: URLSessionTask, _ outcome: TransferStateMachine.Outcome, delivering: Bool = true) {
        if outcome.error == nil { progress.finish() }
        // A complete file nobody took goes, unless the raw handler gets it.
        var rawHandlerTakesFile = false
        if case .rawDownload = completion { rawHandlerTakesFile = true }
        guard case .finish(let download, let unwanted) = requestDriver.handle(.taskFinishing(rawHandlerTakesFile: rawHandlerTakesFile)) else {
            preconditionFailure("taskFinishing decides the file")
        }
        if let unwanted { DownloadFile.remove(unwanted) }
        let identifier = self.identifier
        // The did-complete call first, then the completion handler (queued):
        // a block observing the end sees it before the caller's handler runs.
        context.manager?.urlSession(context.session, task: task, didCompleteWithError: outcome.error)
        context.session.taskDidComplete(identifier: identifier)
        if delivering { deliverCompletion(task, outcome, download: download) }
        // The handler's call holds the body it hands over; the task keeps none.
        requestDriver.releaseMemoryBody()
        // The task object no longer needs its driver to reach it, nor its
        // blocks (the completion handler's call is queued with its own
        // reference) — they may capture whoever keeps the task.
        state.withLock { state in
            state.task = .released
            state.completion = .none
            state.destination = nil
        }
        progress.releaseBlocks()
    }
}
