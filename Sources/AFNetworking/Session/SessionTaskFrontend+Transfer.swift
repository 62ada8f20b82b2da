@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// The task as its driver's front-end: the hop's settings come from the
/// session's configuration; questions (redirect, challenge, a new body
/// stream) and reports become delegate calls on the manager's operation queue.
extension SessionTaskFrontend: RequestFrontend {
    func transferEnvironment(for url: URL?) -> TransferEnvironment {
        var environment = context.session.settings.environment(securityPolicy: context.securityPolicy,
                                                               usesCache: !kind.isDownload, reportsUploadProgress: true)
        // Presented to the original request's origin only, never after a redirect elsewhere.
        // (Compared only when there is a certificate: comparing origins is costly.)
        if context.clientCertificate != nil, RedirectRules.sameOrigin(url, originalRequest.url) { environment.clientCertificate = context.clientCertificate }
        let (limiter, uploadCap) = state.withLock { ($0.downloadLimiter, $0.maximumUploadBytesPerSecond) }
        if let limiter {
            environment.receiveLimiters = [limiter]
            environment.maximumReceiveBytesPerSecond = limiter.bytesPerSecond
        }
        environment.maximumSendBytesPerSecond = uploadCap
        environment.trace = trace
        return environment
    }

    func hostLimit(for url: URL?) -> HostLimit? { context.session.settings.hostLimit(for: url) }

    var activityLogger: Logger? { context.logger ?? NetworkActivityLogger.shared.logger }

    /// A data task may become a download when its delegate answers `.becomeDownload`.
    var outputMayBeDiverted: Bool { !kind.isDownload }

    /// A cancelled download keeps what it received: resume data continues it.
    var dropsQueuedBodyOnCancel: Bool { !kind.isDownload }

    func prepareRequest(_ request: URLRequest, consumedBodyStream: Bool,
                        ready: @escaping @Sendable (Result<URLRequest, NSError>) -> Void) {
        switch kind {
        case .download(let start):
            if let failure = prepareDownloadFile(start) { return ready(.failure(failure)) }
            ready(.success(request))
        case .upload(.file(let file, let measuredAtStart)):
            // Each hop that still carries the body reads the file again
            // (nothing to ask anyone); one redirected to a GET carries none.
            guard request.httpBodyStream != nil else { return ready(.success(request)) }
            ready(SessionTaskFrontend.request(request, streamingFrom: file, measuringLength: measuredAtStart))
        case .data, .upload(.data), .upload(.stream):
            guard consumedBodyStream else { return ready(.success(request)) }
            askForNewBodyStream(request, ready: ready)
        }
    }

    /// Tasks announce nothing when their phase changes: their `state` is read
    /// off the machine, and their notifications come from `resume()`/`suspend()`.
    func announce(_ change: PhaseChange) {}

    // MARK: - Request bodies

    /// `request` with a fresh stream over `file`, or NSURLErrorFileDoesNotExist.
    /// `measuringLength`: the file as it is now — its current size is the
    /// `Content-Length` and exactly that many bytes are read (URLSession's
    /// rule), so a file that grew after the task was made is sent whole, not
    /// refused; only a regular file has a size, so anything else fails.
    /// Otherwise the caller's `Content-Length` stands and the whole file is
    /// read (a file of another length then fails the request). A symbolic
    /// link is followed: its target is measured and sent.
    static func request(_ request: URLRequest, streamingFrom file: URL, measuringLength: Bool = false) -> Result<URLRequest, NSError> {
        let unreadable = TransportErrors.make(NSURLErrorFileDoesNotExist, url: request.url, underlying: nil,
                                              description: "The file to upload does not exist or cannot be read: \(file.path).")
        guard case .success(let kind) = BodyFile.kind(atPath: file.path),
              FileManager.default.isReadableFile(atPath: file.path) else { return .failure(unreadable) }
        var streaming = request
        switch kind {
        case .directory:
            return .failure(unreadable)
        case .other where measuringLength:
            // stat(2) gives a FIFO or device no size: announced as 0, nothing of it would be sent.
            let description = "The file to upload is not a regular file, so it has no length to send: \(file.path)."
                + " Set a Content-Length to stream it."
            return .failure(TransportErrors.make(NSURLErrorFileDoesNotExist, url: request.url, underlying: nil, description: description))
        case .regular(let size) where measuringLength:
            streaming.setValue(String(size), forHTTPHeaderField: "Content-Length")
            streaming.httpBodyStream = FileSliceInputStream(path: file.path, length: size)
        case .regular, .other:
            guard let stream = InputStream(url: file) else { return .failure(unreadable) }
            streaming.httpBodyStream = stream
        }
        return .success(streaming)
    }

    /// An earlier hop consumed the body stream: the delegate's
    /// need-new-body-stream call supplies another (the manager's default
    /// copies a multipart body), or the hop fails.
    private func askForNewBodyStream(_ request: URLRequest, ready: @escaping @Sendable (Result<URLRequest, NSError>) -> Void) {
        context.events.submit { [self] in
            guard let manager = context.manager, let task = currentTask else {
                return ready(BodyStreams.resending(request, fresh: BodyStreams.copy(of: originalRequest.httpBodyStream)))
            }
            let once = Once()
            manager.urlSession(context.session, task: task, needNewBodyStream: { stream in
                if once.claim() { ready(BodyStreams.resending(request, fresh: stream)) }
            })
        }
    }

    // MARK: - Download file

    /// Opens the file a download writes, once, before its first hop (off the
    /// network thread and outside any lock: it touches the disk). Returns the
    /// error that fails the task when the file cannot be used.
    private func prepareDownloadFile(_ start: SessionTaskKind.DownloadStart) -> NSError? {
        guard case .none = requestDriver.taskOutputFile else { return nil }
        let opened: Result<(URL, PartialFileOutputStream), NSError>
        switch start {
        case .unusable(let error):
            return error
        case .resuming(let resume):
            opened = DownloadFile.reopen(resume)
        case .fresh:
            opened = Result { try DownloadFile.create() }.mapError { $0 as NSError }
        }
        switch opened {
        case .failure(let error):
            return error
        case .success(let (file, stream)):
            // If the task ended meanwhile (a cancel racing the first hop), the file goes away
            // — but a resumed one goes back where the caller's resume data names it, still good.
            let action = requestDriver.installDownloadFile(file, stream: stream)
            if case .removeFile = action, case .resuming(let resume) = start,
               rename(file.path, resume.partialFilePath) == 0 { return nil }
            carryOut(action)
            return nil
        }
    }

    /// After the writer closed the download file (on its queue): a complete
    /// file waits for the did-finish-downloading call; a failed one is kept
    /// with resume data when it can be resumed and the data reaches the
    /// caller (in the error's userInfo, or the handler of
    /// `cancel(byProducingResumeData:)`), else deleted: a plain `cancel()`
    /// hands out nothing, so nothing could ever reuse or remove the file.
    /// Handlers of `cancel(byProducingResumeData:)` get the data (on the
    /// delegate queue, before the completion).
    func outputDidClose(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome {
        guard case .writing(let file) = requestDriver.taskOutputFile else { return outcome }
        var earlier: DownloadResumeData?
        if case .download(.resuming(let resume)) = kind { earlier = resume }
        let status = outcome.response?.received?.statusCode
        // A resumed download answered with an error status (the old part of
        // the file is all there is) is not complete either.
        let incomplete = earlier != nil && status != 200 && status != 206
        guard outcome.error != nil || incomplete else {
            carryOut(requestDriver.handle(.fileComplete))
            return outcome
        }
        // The file's own length: a cancel drops bytes still queued for the
        // writer, so the count of bytes received can be ahead of the disk.
        let written = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.int64Value ?? 0
        var resume = DownloadResumeData.make(request: outcome.originalRequest, response: outcome.response?.received, earlier: earlier,
                                             partialFile: file, bytesWritten: min(written, outcome.entityBytes))
        if resume == nil || incomplete, var previous = earlier, written >= previous.bytesWritten {
            // Nothing new arrived (offline, cancelled while connecting, an
            // error answer): what the earlier data promised is still there.
            previous.partialFilePath = file.path
            resume = previous
        }
        // A plain cancel() asks for no resume data: the file is not kept for
        // any (decided with the handlers `cancel(byProducingResumeData:)` added).
        let plainCancel = outcome.error?.domain == NSURLErrorDomain && outcome.error?.code == NSURLErrorCancelled
        let decided = requestDriver.handle(.fileIncomplete(resume: resume?.encoded(), plainCancel: plainCancel))
        guard case .resumeData(_, let kept, _) = decided else { preconditionFailure("fileIncomplete decides the resume data") }
        carryOut(decided)
        guard let kept else { return outcome }
        guard let error = outcome.error else {
            // An error answer to a resume: the completion's error carries the data.
            var final = outcome
            final.resumeData = kept
            return final
        }
        var userInfo = error.userInfo
        userInfo[URLSessionDownloadTaskResumeData] = kept
        var final = outcome
        final.error = NSError(domain: error.domain, code: error.code, userInfo: userInfo)
        return final
    }

    // MARK: - Questions

    func askRedirect(_ question: TransferStateMachine.RedirectQuestion) {
        context.events.submit { [self] in
            guard let manager = context.manager, let task = currentTask, let response = question.response.httpURLResponse else {
                requestDriver.handle(.redirectDecided(token: question.token, question.proposed))
                return
            }
            manager.urlSession(context.session, task: task, willPerformHTTPRedirection: response,
                                       newRequest: question.proposed) { [self] next in
                requestDriver.handle(.redirectDecided(token: question.token, next))
            }
        }
    }

    func askChallenge(_ question: TransferStateMachine.ChallengeQuestion) {
        context.events.submit { [self] in
            let stored = defaultCredential(for: question.protectionSpace, failures: question.previousFailureCount)
            let sender = SessionChallengeSender(frontend: self, token: question.token)
            let challenge = URLAuthenticationChallenge(protectionSpace: question.protectionSpace, proposedCredential: stored,
                                                       previousFailureCount: question.previousFailureCount,
                                                       failureResponse: question.response.httpURLResponse, error: nil, sender: sender)
            guard let manager = context.manager, let task = currentTask else {
                return answerChallenge(token: question.token, .performDefaultHandling, nil)
            }
            manager.urlSession(context.session, task: task, didReceive: challenge) { [self] disposition, credential in
                answerChallenge(token: question.token, disposition, credential)
            }
        }
    }

    /// Resolves the challenge with `token` (later answers to it change nothing).
    func answerChallenge(token: UInt64, _ disposition: URLSession.AuthChallengeDisposition, _ credential: URLCredential?) {
        let answer: RequestDriver.ChallengeDisposition
        switch disposition {
        case .useCredential: answer = .use(credential)
        case .performDefaultHandling: answer = .performDefaultHandling
        case .cancelAuthenticationChallenge: answer = .cancel
        case .rejectProtectionSpace: answer = .continueWithoutCredential
        @unknown default: answer = .continueWithoutCredential
        }
        requestDriver.answerChallenge(token: token, answer) { space, failures, _ in defaultCredential(for: space, failures: failures) }
    }

    /// Default handling: the configuration's credential storage, on the first
    /// attempt only (a stored credential that failed is not offered again).
    private func defaultCredential(for space: URLProtectionSpace, failures: Int) -> URLCredential? {
        guard failures == 0, let storage = context.session.settings.credentialStorage else { return nil }
        return StoredCredentials.defaultCredential(for: space, in: storage)
    }
}

/// The `sender` of a task's authentication challenge: answering through it
/// is the same as through the completion handler (the first answer counts).
final class SessionChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    // @unchecked: immutable after init.
    private weak var frontend: SessionTaskFrontend?
    private let token: UInt64

    init(frontend: SessionTaskFrontend, token: UInt64) {
        self.frontend = frontend
        self.token = token
    }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        frontend?.answerChallenge(token: token, .useCredential, credential)
    }

    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {
        frontend?.answerChallenge(token: token, .rejectProtectionSpace, nil)
    }

    func cancel(_ challenge: URLAuthenticationChallenge) {
        frontend?.answerChallenge(token: token, .cancelAuthenticationChallenge, nil)
    }

    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {
        frontend?.answerChallenge(token: token, .performDefaultHandling, nil)
    }

    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {
        frontend?.answerChallenge(token: token, .rejectProtectionSpace, nil)
    }
}
