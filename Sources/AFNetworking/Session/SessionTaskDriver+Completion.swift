import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The end of a task, in 2.7's order: on the operation queue the resume-data
/// handler, the did-finish-downloading call (which moves the file), the
/// will-cache call, the did-complete call and the session's bookkeeping;
/// then the response is serialized off the main thread and the completion
/// handler runs on `completionQueue` inside `completionGroup` (a task made by
/// an `async` call: where it was serialized), followed by
/// `AFNetworkingTaskDidComplete` on the main queue.
extension SessionTaskDriver {
    /// The task shows `.canceling` (or `.running`) until its delegate queue
    /// gets to its end; `.completed` from then on. A data task whose delegate
    /// has not answered its response yet waits for the answer.
    func outputIsFinal(_ outcome: TransferStateMachine.Outcome, driver: RequestDriver) {
        context.events.submit { [self] in
            guard let final = state.withLock({ $0.response.outcomeFinal(outcome) }) else { return }
            driver.outputFinished(final)
        }
    }

    /// On the delegate queue (from `outputIsFinal`, or a response answer that released a parked end).
    func runCompletion(_ outcome: TransferStateMachine.Outcome) {
        deliverPendingReportsNow()
        for handler in state.withLock({ $0.resumeData.decide(nil) }) { handler(nil) }
        finishOnDelegateQueue(outcome)
    }

    /// The delegate's part of the end: files, cache, did-complete.
    private func finishOnDelegateQueue(_ outcome: TransferStateMachine.Outcome) {
        guard let task = currentTask else {
            requestDriver.handle(.completionFinished)
            return
        }
        let diverted = state.withLock { $0.response.becameDownload }
        if diverted { writeDivertedBodyIfNeeded(outcome) }
        reportBodyNotSeenAsItArrived(outcome, task: task)
        if kind.isDownload || diverted, outcome.error == nil, case .complete(let file) = state.withLock({ $0.download }) {
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
        guard outcome.error == nil, let body = outcome.memoryBody, !body.isEmpty, progress.download.completedUnitCount == 0 else { return }
        progress.update(.download, completed: Int64(body.count), expected: Int64(body.count))
        if let dataTask = task as? URLSessionDataTask, state.withLock({ $0.response.deliversData }),
           !context.skipsUnobservedCalls || context.manager?.hasBlock(.dataTaskDidReceiveData) == true {
            context.manager?.urlSession(context.session, dataTask: dataTask, didReceive: body)
        }
    }

    /// A data task that became a download after its body was complete: the
    /// body kept in memory is the file.
    private func writeDivertedBodyIfNeeded(_ outcome: TransferStateMachine.Outcome) {
        guard let body = outcome.memoryBody, case .writing(let file) = state.withLock({ $0.download }) else { return }
        do {
            guard outcome.error == nil else { throw CocoaError(.userCancelled) }
            try body.write(to: file)
            state.withLock { $0.download = .complete(file) }
        } catch {
            state.withLock { $0.download = .removed }
            DownloadFile.remove(file)
        }
    }

    /// Called by the manager's did-finish-downloading method once it moved
    /// (or failed to move) the file.
    func recordMove(to destination: URL, from temporary: URL, error: NSError?) {
        state.withLock { $0.download = error.map { .moveFailed($0, temporary: temporary) } ?? .moved(destination) }
    }

    private func finishTask(_ task: URLSessionTask, _ outcome: TransferStateMachine.Outcome) {
        if outcome.error == nil { progress.finish() }
        let (download, identifier, unwanted) = state.withLock { state -> (DownloadOutput, Int, URL?) in
            let download = state.download
            switch download {
            case .complete(let file):
                // Nobody took the file: it goes, unless the raw handler gets it.
                if case .rawDownload = completion { return (download, state.identifier, nil) }
                state.download = .removed
                return (download, state.identifier, file)
            case .moveFailed(_, let temporary):
                // As Apple does with the location once the delegate returned.
                return (download, state.identifier, temporary)
            default:
                return (download, state.identifier, nil)
            }
        }
        if let unwanted { DownloadFile.remove(unwanted) }
        // The did-complete call first, then the completion handler (queued):
        // a block observing the end sees it before the caller's handler runs.
        context.manager?.urlSession(context.session, task: task, didCompleteWithError: outcome.error)
        context.session.taskDidComplete(identifier: identifier)
        deliverCompletion(task, outcome, download: download)
        // The task object no longer needs its driver to reach it.
        state.withLock { $0.task = .released }
    }

    // MARK: - Completion handler

    private func deliverCompletion(_ task: URLSessionTask, _ outcome: TransferStateMachine.Outcome, download: DownloadOutput) {
        let manager = context.manager
        let serializer = manager?.responseSerializer
        let queue = manager?.completionQueue ?? .main
        let group = manager?.completionGroup ?? CompletionDefaults.group
        let movedTo: URL? = { if case .moved(let url) = download { return url }; return nil }()
        let moveError: NSError? = { if case .moveFailed(let error, _) = download { return error }; return nil }()
        let body = outcome.memoryBody ?? Data()
        var userInfo: [AnyHashable: Any] = [:]
        if let serializer { userInfo[AFNetworkingTaskDidCompleteResponseSerializerKey] = serializer }
        if let movedTo {
            userInfo[AFNetworkingTaskDidCompleteAssetPathKey] = movedTo
        } else {
            userInfo[AFNetworkingTaskDidCompleteResponseDataKey] = body
        }
        let info = SerializedObject(value: userInfo)
        let completion = self.completion
        let isFile = kind.isDownload || state.withLock { $0.response.becameDownload }
        let rawFile: URL? = { if case .complete(let file) = download { return file }; return nil }()
        // Parsing happens off the network thread and off the main thread. A
        // task made by an `async` call is then done: its handler only resumes
        // the awaiting Swift task, which must not wait for the main queue.
        let parsesOnCompletionQueue = !MainQueueWork.isMain(queue)
        let finishesInPlace = parsesOnCompletionQueue || context.deliversInPlace
        let workQueue = parsesOnCompletionQueue ? queue : CompletionDefaults.processingQueue
        group.enter()
        workQueue.async { [self] in
            // Built here, not on the serial delegate queue: making an
            // HTTPURLResponse is the costliest step of a small request.
            let response = finalResponse(outcome)
            var userInfo = info.value as? [AnyHashable: Any] ?? [:]
            var object: Any?
            var error: Error? = outcome.error
            if error == nil {
                switch completion {
                case .rawData, .rawDownload:
                    break
                case .none, .serialized, .download:
                    do {
                        let data = isFile ? Data() : body
                        if let serializer, serializer.readsReceivedHeads, case .received(let head)? = outcome.response {
                            // The library's own serializers read the received head directly.
                            object = try serializer.responseObject(forReceived: ResponseSummary(head), data: data)
                        } else {
                            object = try serializer?.responseObject(for: response, data: data)
                        }
                    } catch let failure {
                        error = failure
                    }
                    if isFile { object = movedTo }
                    if let moveError { error = moveError }
                }
            }
            if let object { userInfo[AFNetworkingTaskDidCompleteSerializedResponseKey] = object }
            if let error { userInfo[AFNetworkingTaskDidCompleteErrorKey] = error }
            let finalError = error
            let result = SerializedObject(value: object)
            let notificationInfo = SerializedObject(value: userInfo)
            let finish: @Sendable () -> Void = { [self] in
                switch completion {
                case .none:
                    break
                case .serialized(let handler):
                    handler(response, result.value, finalError)
                case .download(let handler):
                    handler(response, moveError == nil ? movedTo : nil, finalError)
                case .rawData(let handler):
                    handler(isFile ? nil : body, outcome.response == nil ? nil : response, finalError)
                case .rawDownload(let handler):
                    handler(rawFile, outcome.response == nil ? nil : response, finalError)
                    if let rawFile { DownloadFile.remove(rawFile) }
                }
                requestDriver.handle(.completionFinished)
                MainQueueNotifier.shared.post(.AFNetworkingTaskDidComplete, object: task,
                                              userInfo: notificationInfo.value as? [AnyHashable: Any])
                group.leave()
            }
            if finishesInPlace { finish() } else { queue.async(execute: finish) }
        }
    }

    /// The response the completion handler gets: the last one, or — where
    /// Swift cannot pass nil — a plain `URLResponse` for the request's URL.
    private func finalResponse(_ outcome: TransferStateMachine.Outcome) -> URLResponse {
        switch outcome.response {
        case .received(let head)?:
            if let response = head.httpURLResponse { return response }
        case .cached(let cached)?:
            return cached.response
        case nil:
            break
        }
        let url = outcome.finalRequest?.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
        return URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
    }
}
