@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the tasks of a manager's session: its own factories and the
/// session object's. Every task is registered with the session (unless it
/// was invalidated), starts suspended, and reports to the manager.
struct SessionTaskFactory {
    /// nil when the session outlived its manager: tasks then complete with
    /// NSURLErrorCancelled when resumed.
    let manager: URLSessionManager?
    let session: ManagedSession

    enum UploadSource {
        case file(URL)
        case data(Data)
        case stream
    }

    enum DownloadSource {
        case request(URLRequest)
        case resumeData(Data)
    }

    typealias ProgressBlock = @Sendable (Progress) -> Void

    /// Where a task's completion handler runs. The callback API queues it on
    /// the manager's `completionQueue` (nil: the main queue). The `async` calls
    /// run it `inPlace`, right after the response was serialized: it only
    /// resumes an awaiting Swift task, and a program whose main queue is never
    /// served (a server parked in `dispatchMain()` or a semaphore) must still
    /// get its answers. An explicit non-main `completionQueue` is still where
    /// the response is serialized, as for the callback API.
    enum Delivery {
        case completionQueue
        case inPlace
    }

    func makeDataTask(_ request: URLRequest, completion: SessionTaskCompletion,
                      uploadProgress: ProgressBlock? = nil, downloadProgress: ProgressBlock? = nil,
                      delivery: Delivery = .completionQueue) -> URLSessionDataTask {
        // First, so it becomes a child of the caller's current progress.
        let progress = TaskProgress(reported: .download, uploadBlock: uploadProgress, downloadBlock: downloadProgress)
        let (prepared, refusal) = session.settings.applied(to: request)
        return make(.data, request: prepared, refusal: refusal, completion: completion, progress: progress, destination: nil,
                    expectedToSend: Self.bodyLength(of: prepared), delivery: delivery) { SessionDataTask(frontend: $0, identifier: $1) }
    }

    func makeUploadTask(_ request: URLRequest, body: UploadSource, completion: SessionTaskCompletion,
                        progress block: ProgressBlock? = nil, delivery: Delivery = .completionQueue) -> URLSessionUploadTask {
        let progress = TaskProgress(reported: .upload, uploadBlock: block, downloadBlock: nil)
        let applied = session.settings.applied(to: request)
        var prepared = applied.request
        let kind: SessionTaskKind.UploadBody
        var expected: Int64
        switch body {
        case .file(let file):
            kind = .file(file, measuredAtStart: prepared.value(forHTTPHeaderField: "Content-Length") == nil)
            prepared.httpBody = nil
            // The stream marks that the request carries the file: a redirect
            // that turns it into a GET drops it, a 307/308 keeps it (and each
            // hop then reads the file again).
            prepared.httpBodyStream = InputStream(url: file) ?? InputStream(data: Data())
            // Links followed (lstat gave a link's own length); only a regular file has a size.
            let size = BodyFile.regularFileSize(atPath: file.path)
            expected = size ?? -1
            if let size, prepared.value(forHTTPHeaderField: "Content-Length") == nil {
                prepared.setValue(String(size), forHTTPHeaderField: "Content-Length")
            }
        case .data(let data):
            kind = .data
            prepared.httpBodyStream = nil
            prepared.httpBody = data
            expected = Int64(data.count)
        case .stream:
            kind = .stream
            expected = Self.bodyLength(of: prepared)
        }
        return make(.upload(kind), request: prepared, refusal: applied.refusal, completion: completion, progress: progress, destination: nil,
                    expectedToSend: expected, delivery: delivery) { SessionUploadTask(frontend: $0, identifier: $1) }
    }

    func makeDownloadTask(_ source: DownloadSource, destination: SessionTaskFrontend.Destination?,
                          completion: SessionTaskCompletion, progress block: ProgressBlock? = nil,
                          delivery: Delivery = .completionQueue) -> URLSessionDownloadTask {
        let progress = TaskProgress(reported: .download, uploadBlock: nil, downloadBlock: block)
        let kind: SessionTaskKind.DownloadStart
        let request: URLRequest
        let refusal: NSError?
        switch source {
        case .request(let given):
            kind = .fresh
            let applied = session.settings.applied(to: given)
            request = applied.request
            refusal = applied.refusal
        case .resumeData(let data):
            if let resume = DownloadResumeData.decode(data), let resumed = resume.request {
                kind = .resuming(resume)
                let applied = session.settings.applied(to: resumed)
                request = applied.request
                refusal = applied.refusal
            } else {
                // Nothing names a URL: the task fails when resumed, sending nothing.
                let url = URL(string: "about:blank")!
                kind = .unusable(DownloadResumeData.unusableError(url: nil, reason: "it was not made by this library or is damaged"))
                request = URLRequest(url: url)
                refusal = nil
            }
        }
        return make(.download(kind), request: request, refusal: refusal, completion: completion, progress: progress, destination: destination,
                    expectedToSend: 0, delivery: delivery) { SessionDownloadTask(frontend: $0, identifier: $1) }
    }

    /// `refusal`: the error the task fails with when resumed (see `SessionSettings.applied(to:)`).
    private func make<Task: URLSessionTask & ManagedSessionTask>(
        _ kind: SessionTaskKind, request: URLRequest, refusal: NSError?, completion: SessionTaskCompletion, progress: TaskProgress,
        destination: SessionTaskFrontend.Destination?, expectedToSend: Int64, delivery: Delivery,
        build: (SessionTaskFrontend, Int) -> Task
    ) -> Task {
        let identifier = TaskIdentifiers.next()
        // The policy as it is now: later changes to the manager's object do not reach this task.
        let policy = manager?.securityPolicy
        // A subclass is kept as the object itself: its connections are kept to
        // that object (`partitionKey`), and each hop judges by a snapshot of it.
        let snapshot = policy.flatMap { $0.isStandardVerification ? nil : $0.isSubclassInstance ? $0 : $0.evaluationSnapshot }
        let context = SessionTaskFrontend.Context(manager: manager, session: session, events: session.events, securityPolicy: snapshot,
                                                skipsUnobservedCalls: manager?.ownsDelegateMethods ?? true,
                                                clientCertificate: manager?.clientCertificate,
                                                retryPolicy: manager?.retryPolicy,
                                                interception: manager.flatMap(Self.interception(of:)),
                                                logger: manager?.logger,
                                                deliversInPlace: delivery == .inPlace)
        var made: Task?
        session.register(identifier: identifier, accepting: manager != nil) { admitted in
            let driver = SessionTaskFrontend(kind: kind, request: request, context: context, completion: completion, progress: progress,
                                           destination: destination, identifier: identifier, bytesExpectedToSend: expectedToSend,
                                           admitted: admitted, refusal: refusal)
            let task = build(driver, identifier)
            progress.connect(to: driver)
            // The session keeps a registered task alive; one it did not take
            // lives as long as its caller keeps it (until resumed).
            driver.state.withLock { $0.task = admitted ? .strong(task) : .weak(.init(task)) }
            made = task
            return driver
        }
        return made!
    }

    /// The manager's interceptor as a task takes it (nil when it has none).
    private static func interception(of manager: URLSessionManager) -> InterceptionPlan? {
        let (interceptor, serializer) = manager.state.withLock { ($0.requestInterceptor, $0.responseSerializer) }
        guard let interceptor else { return nil }
        return InterceptionPlan(interceptor: interceptor, serializerAcceptableStatusCodes: serializer.acceptableStatusCodes)
    }

    /// The body length a request announces: its data, else its Content-Length, else unknown.
    private static func bodyLength(of request: URLRequest) -> Int64 {
        if let body = request.httpBody { return Int64(body.count) }
        if let length = request.value(forHTTPHeaderField: "Content-Length").flatMap({ Int64($0) }) { return length }
        return request.httpBodyStream == nil ? 0 : -1
    }
}
