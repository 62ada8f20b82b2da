import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a session task adds to the transfer's lifecycle: the delegate's
/// answer to the response (`ResponseDecision`), the download file and the
/// resume data. A value kept by the task's `RequestDriver` beside the
/// transfer machine, under the same lock (so opening the file and installing
/// its writer, or diverting the body to a file, are one step against the
/// outcome): events go in through `RequestDriver.handle(_:)`, the action to
/// carry out comes back; no I/O happens here.
struct SessionTaskOutput {
    /// Where the response's body goes when it is a file.
    enum File {
        case none
        /// Being written.
        case writing(URL)
        /// Complete, waiting to be moved by the did-finish-downloading call.
        case complete(URL)
        /// Kept for resume data.
        case kept(URL)
        case moved(URL)
        /// The move failed; the temporary file is deleted.
        case moveFailed(NSError, temporary: URL)
        /// Deleted (failure without resume data, or nobody wanted it).
        case removed
    }

    typealias ResumeDataHandler = @Sendable (Data?) -> Void

    /// Resume data is known once the task's output is final; handlers of
    /// `cancel(byProducingResumeData:)` wait for it (each called once).
    enum ResumeData {
        case pending([ResumeDataHandler])
        case decided(Data?)
    }

    enum Event {
        /// A response head for the output arrived; `mustAsk`: someone but
        /// the library's own delegate method could answer it.
        case responseArrived(mustAsk: Bool)
        /// The delegate's answer to the response (the first one counts).
        case responseDecided(URLSession.ResponseDisposition)
        /// `cancel()`: an answer still outstanding counts as `.cancel`.
        case cancelled
        /// The delegate has been told of the download task a data task became.
        case downloadAnnounced
        /// The transfer's output is final: the task's end may continue.
        /// `unobserved`: nobody can see the delegate queue's part of it (see
        /// `End.withCompletionWork`).
        case outcomeFinal(TransferStateMachine.Outcome, unobserved: Bool = false)
        /// The file a download writes was opened (the driver installed its
        /// writer unless the outcome was decided meanwhile: `installed`).
        case fileOpened(URL, installed: Bool)
        /// A data task's body goes to this file from now on.
        case diverted(to: URL)
        /// The writer closed a file that holds the whole entity.
        case fileComplete
        /// The writer closed a file that does not: `resume` is what could
        /// continue it (nil: nothing can); `plainCancel` says the task was
        /// cancelled with `cancel()`, which asks for no resume data.
        case fileIncomplete(resume: Data?, plainCancel: Bool)
        /// The body of a task that became a download after its body was
        /// complete went (or failed to go) to the file.
        case divertedBodyWritten(succeeded: Bool)
        /// The did-finish-downloading call moved the file (or could not).
        case fileMoved(to: URL, error: NSError?, temporary: URL)
        /// `cancel(byProducingResumeData:)`.
        case resumeDataWanted(ResumeDataHandler)
        /// The task's part of the end begins: waiting handlers get nil unless
        /// the data was decided.
        case completionStarted
        /// The task's end is being delivered; `rawHandlerTakesFile`: a
        /// `URLSession` download handler gets the complete file itself.
        case taskFinishing(rawHandlerTakesFile: Bool)
    }

    enum Action {
        case none
        /// Ask the delegate about the response.
        case askAboutResponse
        /// Continue the task's end with this outcome.
        case proceed(TransferStateMachine.Outcome)
        /// Cancel the running task.
        case cancelTask
        /// Move the body to a file for a new download task, announce it,
        /// then send `.downloadAnnounced`.
        case becomeDownload
        /// Delete this file (nobody can use it).
        case removeFile(URL)
        /// Hand `data` to these resume-data handlers; delete `removing` if set.
        case resumeData([ResumeDataHandler], Data?, removing: URL?)
        /// The file's final state for the completion; delete `removing` if set.
        case finish(File, removing: URL?)
        /// The end runs with the completion work, not on the delegate queue
        /// (`End.withCompletionWork`).
        case endWithCompletionWork
    }

    /// Where the task's part of its end runs, decided when the output is final.
    enum End {
        case undecided
        /// On the manager's `operationQueue`, in 2.7's order of delegate calls.
        case onDelegateQueue
        /// With the completion work (the processing queue or the caller's
        /// completion queue), one hand-off fewer: a data or upload task of a
        /// manager whose delegate methods are its own, with none of the blocks
        /// that see a task's data, progress or end, and no `Progress` object
        /// or block: none of the delegate queue's calls would be seen.
        case withCompletionWork
    }

    private(set) var decision = ResponseDecision()
    private(set) var end = End.undecided
    private(set) var file = File.none
    private var resumeData = ResumeData.pending([])

    /// Feeds one event; returns what to do (after unlocking).
    mutating func handle(_ event: Event) -> Action {
        switch event {
        case .responseArrived(let mustAsk):
            return decision.responseArrived(mustAsk: mustAsk) ? .askAboutResponse : .none
        case .responseDecided(let disposition):
            return action(for: decision.decide(disposition))
        case .cancelled:
            return action(for: decision.cancelWhileAsking())
        case .downloadAnnounced:
            return decision.downloadAnnounced().map { .proceed($0) } ?? .none
        case .outcomeFinal(let outcome, let unobserved):
            precondition(end == .undecided, "outcomeFinal twice")
            end = unobserved ? .withCompletionWork : .onDelegateQueue
            return decision.outcomeFinal(outcome).map { .proceed($0) } ?? .none
        case .fileOpened(let url, let installed):
            precondition(isFileNone, "Invalid state for fileOpened: \(file)")
            // A cancel racing the first hop decided the outcome: the file is not wanted.
            file = installed ? .writing(url) : .removed
            return installed ? .none : .removeFile(url)
        case .diverted(let url):
            precondition(isFileNone, "Invalid state for diverted: \(file)")
            file = .writing(url)
            return .none
        case .fileComplete:
            guard case .writing(let url) = file else { preconditionFailure("Invalid state for fileComplete: \(file)") }
            file = .complete(url)
            return .none
        case .fileIncomplete(let resume, let plainCancel):
            guard case .writing(let url) = file else { preconditionFailure("Invalid state for fileIncomplete: \(file)") }
            // A plain cancel() keeps no file for resume data nobody gets —
            // unless `cancel(byProducingResumeData:)` asked for it meanwhile.
            guard let resume, !(plainCancel && !isResumeDataAskedFor) else {
                file = .removed
                return .resumeData(decideResumeData(nil), nil, removing: url)
            }
            file = .kept(url)
            return .resumeData(decideResumeData(resume), resume, removing: nil)
        case .divertedBodyWritten(let succeeded):
            guard case .writing(let url) = file else { preconditionFailure("Invalid state for divertedBodyWritten: \(file)") }
            file = succeeded ? .complete(url) : .removed
            return succeeded ? .none : .removeFile(url)
        case .fileMoved(let destination, let error, let temporary):
            // Only the first move counts (a subclass may call the manager's method twice).
            guard case .complete = file else { return .none }
            file = error.map { .moveFailed($0, temporary: temporary) } ?? .moved(destination)
            return .none
        case .resumeDataWanted(let handler):
            switch resumeData {
            case .pending(let handlers):
                resumeData = .pending(handlers + [handler])
                return .cancelTask
            case .decided(let data):
                return .resumeData([handler], data, removing: nil)
            }
        case .completionStarted:
            let handlers = decideResumeData(nil)
            if end == .withCompletionWork {
                // Only a data or upload task ends there: no resume data is ever asked of one.
                precondition(handlers.isEmpty, "resume data handlers for a task ending with its completion work")
                return .endWithCompletionWork
            }
            return handlers.isEmpty ? .none : .resumeData(handlers, nil, removing: nil)
        case .taskFinishing(let rawHandlerTakesFile):
            switch file {
            case .complete(let url) where !rawHandlerTakesFile:
                // Nobody took the file: it goes.
                let final = file
                file = .removed
                return .finish(final, removing: url)
            case .moveFailed(_, let temporary):
                // As Apple does with the location once the delegate returned.
                return .finish(file, removing: temporary)
            default:
                return .finish(file, removing: nil)
            }
        }
    }

    /// The file being written, if any (a diverted body the end writes itself).
    var fileBeingWritten: URL? {
        if case .writing(let url) = file { return url }
        return nil
    }

    /// The complete file waiting for the did-finish-downloading call.
    var completeFile: URL? {
        if case .complete(let url) = file { return url }
        return nil
    }

    private var isFileNone: Bool {
        if case .none = file { return true }
        return false
    }

    private var isResumeDataAskedFor: Bool {
        if case .pending(let handlers) = resumeData { return !handlers.isEmpty }
        return false
    }

    /// Records the data (the first decision counts); returns the handlers to call.
    private mutating func decideResumeData(_ data: Data?) -> [ResumeDataHandler] {
        guard case .pending(let handlers) = resumeData else { return [] }
        resumeData = .decided(data)
        return handlers
    }

    private func action(for decided: ResponseDecision.Action) -> Action {
        switch decided {
        case .none: return .none
        case .proceed(let outcome): return .proceed(outcome)
        case .cancelTask: return .cancelTask
        case .becomeDownload: return .becomeDownload
        }
    }
}
