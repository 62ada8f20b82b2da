@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// AFNetworking 2.7's `AFURLSessionManager` (with AFNetworking 3's progress
/// blocks): makes `URLSessionTask`s whose transfers run on this package's
/// engine — the `AFNetworking` network thread, libcurl, the security policy
/// inside the TLS handshake — and reports them through delegate methods,
/// blocks, `Progress` objects, completion handlers and notifications.
///
/// Delegate methods and blocks run serially on `operationQueue`, in event
/// order per task. Completion handlers run once per task on `completionQueue`
/// (default: main) inside `completionGroup`. A subclass may override any of
/// the delegate methods and must call `super`; blocks, progress and
/// completion handlers do not depend on those calls.
///
/// (The factories and delegate methods are declared in the class body
/// because Swift cannot override members declared in extensions; their
/// logic lives in the `URLSessionManager+…` files.)
open class URLSessionManager: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, NSSecureCoding, NSCopying,
                              @unchecked Sendable {
    // @unchecked: every mutable property lives in `state` or `blocks` (LockedState).

    struct State {
        /// Set right after init (the session refers back to the manager).
        var session: ManagedSession?
        var responseSerializer: HTTPResponseSerializer = JSONResponseSerializer()
        var securityPolicy = SecurityPolicy.default()
        var reachabilityManager: NetworkReachabilityManager?
        var completionQueue: DispatchQueue?
        var completionGroup: DispatchGroup?
        var attemptsToRecreateUploadTasksForBackgroundSessions = false
        var clientCertificate: ClientCertificate?
        var retryPolicy: RetryPolicy?
        var requestInterceptor: (any RequestInterceptor)?
        var logger: Logger?
    }

    let state = LockedState(State())
    let blocks = LockedState(Blocks())
    /// The configuration as given (copied, as Apple copies it).
    let sessionConfiguration: URLSessionConfiguration
    let events: DelegateEventQueue
    /// This manager's delegate methods are the library's own (not a
    /// subclass's): calls nobody can observe are skipped.
    let ownsDelegateMethods: Bool

    /// A manager for `configuration` (nil: `.default`), with its own session.
    public required init(sessionConfiguration configuration: URLSessionConfiguration?) {
        let given = configuration ?? .default
        sessionConfiguration = (given.copy() as? URLSessionConfiguration) ?? given
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "com.alamofire.networking.session.manager.delegate"
        operationQueue = queue
        events = DelegateEventQueue(queue: queue)
        ownsDelegateMethods = Swift.type(of: self) == URLSessionManager.self || Swift.type(of: self) == HTTPSessionManager.self
        super.init()
        let session = ManagedSession(manager: self, configuration: sessionConfiguration, events: events)
        state.set(\.session, to: session)
    }

    /// A manager for the default configuration.
    public convenience override init() {
        self.init(sessionConfiguration: nil)
    }

    // MARK: - Properties

    /// The managed session: a `URLSession` whose factories, task lists,
    /// invalidation, `reset` and `flush` are this manager's.
    public var session: URLSession { managedSession }

    var managedSession: ManagedSession {
        // Set in init before anything can read it.
        state[\.session]!
    }

    /// The session's delegate queue: delegate methods and blocks run here,
    /// one at a time (`maxConcurrentOperationCount` 1).
    public let operationQueue: OperationQueue

    /// Makes the completion handlers' response objects (default `JSONResponseSerializer()`).
    public var responseSerializer: HTTPResponseSerializer {
        get { state[\.responseSerializer] } set { state.set(\.responseSerializer, to: newValue) }
    }

    /// Judges servers' certificates inside the TLS handshake (default
    /// `SecurityPolicy.default()`); each task takes it as it is when created.
    public var securityPolicy: SecurityPolicy {
        get { state[\.securityPolicy] } set { state.set(\.securityPolicy, to: newValue) }
    }

    /// Watches the network (`NetworkReachabilityManager.shared()`); not started by the manager.
    public var reachabilityManager: NetworkReachabilityManager {
        get {
            if let manager = state[\.reachabilityManager] { return manager }
            let shared = NetworkReachabilityManager.shared()
            return state.withLock { state in
                if state.reachabilityManager == nil { state.reachabilityManager = shared }
                return state.reachabilityManager ?? shared
            }
        }
        set { state.set(\.reachabilityManager, to: newValue) }
    }

    /// Where completion handlers run (nil: the main queue).
    public var completionQueue: DispatchQueue? {
        get { state[\.completionQueue] } set { state.set(\.completionQueue, to: newValue) }
    }

    /// The group completion handlers run in (nil: a private shared group). It
    /// is entered when a task's completion is scheduled, not when it starts.
    public var completionGroup: DispatchGroup? {
        get { state[\.completionGroup] } set { state.set(\.completionGroup, to: newValue) }
    }

    /// Presented in the TLS handshakes of the tasks made from now on (mutual
    /// TLS); each task takes it when created. Beyond 2.x, which answered
    /// client-certificate challenges, which Linux does not have.
    public var clientCertificate: ClientCertificate? {
        get { state[\.clientCertificate] } set { state.set(\.clientCertificate, to: newValue) }
    }

    /// When failures of the tasks made from now on are retried (nil, the
    /// default: never); each task takes it when created. See `RetryPolicy`.
    public var retryPolicy: RetryPolicy? {
        get { state[\.retryPolicy] } set { state.set(\.retryPolicy, to: newValue) }
    }

    /// Adapts each attempt of the tasks made from now on and decides about
    /// their failed attempts (nil, the default: neither); each task takes it
    /// when created, with the response serializer's `acceptableStatusCodes`
    /// as they are then. See `RequestInterceptor`. Not archived.
    public var requestInterceptor: (any RequestInterceptor)? {
        get { state[\.requestInterceptor] } set { state.set(\.requestInterceptor, to: newValue) }
    }

    /// Where the activity of the tasks made from now on is logged (nil: the
    /// shared logger's, `NetworkActivityLogger.shared`).
    public var logger: Logger? {
        get { state[\.logger] } set { state.set(\.logger, to: newValue) }
    }

    /// Accepted for source compatibility; Linux has no background sessions.
    public var attemptsToRecreateUploadTasksForBackgroundSessions: Bool {
        get { state[\.attemptsToRecreateUploadTasksForBackgroundSessions] } set { state.set(\.attemptsToRecreateUploadTasksForBackgroundSessions, to: newValue) }
    }

    /// Tasks not yet completed, in creation order (never-resumed ones included).
    public var tasks: [URLSessionTask] { managedSession.unfinishedTasks }

    /// The unfinished data tasks that are not upload tasks.
    public var dataTasks: [URLSessionDataTask] {
        tasks.compactMap { $0 as? URLSessionDataTask }.filter { !($0 is URLSessionUploadTask) }
    }

    /// The unfinished upload tasks.
    public var uploadTasks: [URLSessionUploadTask] { tasks.compactMap { $0 as? URLSessionUploadTask } }

    /// The unfinished download tasks.
    public var downloadTasks: [URLSessionDownloadTask] { tasks.compactMap { $0 as? URLSessionDownloadTask } }

    // MARK: - Invalidation

    /// Invalidates the session: with `cancelPendingTasks` every unfinished task
    /// is cancelled, otherwise they finish. Once none is left the
    /// session-did-become-invalid block runs and `AFURLSessionDidInvalidate` is
    /// posted. Tasks made afterwards complete with NSURLErrorCancelled.
    public func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool) {
        invalidateSessionCancelingTasks(cancelPendingTasks, resetSession: false)
    }

    /// As above; with `resetSession` (AFNetworking 4) a fresh session with the
    /// same configuration replaces the invalidated one at once.
    public func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool, resetSession: Bool) {
        let fresh = resetSession ? ManagedSession(manager: self, configuration: sessionConfiguration, events: events) : nil
        // The session replaced is the one invalidated, whatever other threads do meanwhile.
        let old = state.withLock { state -> ManagedSession? in
            defer { if let fresh { state.session = fresh } }
            return state.session
        }
        old?.invalidate(cancelling: cancelPendingTasks)
    }

    // MARK: - Data tasks

    /// A data task whose completion handler gets the serialized response.
    @preconcurrency
    open func dataTask(with request: URLRequest,
                       completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        dataTask(with: request, uploadProgress: nil, downloadProgress: nil, completionHandler: completionHandler)
    }

    /// A data task with upload and download progress blocks (AFNetworking 3).
    @preconcurrency
    open func dataTask(with request: URLRequest,
                       uploadProgress: (@Sendable (Progress) -> Void)?,
                       downloadProgress: (@Sendable (Progress) -> Void)?,
                       completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        factory.makeDataTask(request, completion: completionHandler.map { .serialized($0) } ?? .none,
                             uploadProgress: uploadProgress, downloadProgress: downloadProgress)
    }

    // MARK: - Upload tasks

    /// An upload task streaming `fileURL` (a missing file or a directory, or a
    /// FIFO or device when the request has no Content-Length, fails with
    /// NSURLErrorFileDoesNotExist when the task is resumed). A symbolic link
    /// is followed: its target is measured and sent.
    @preconcurrency
    open func uploadTask(with request: URLRequest, fromFile fileURL: URL,
                         progress: (@Sendable (Progress) -> Void)?,
                         completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .file(fileURL), completion: completionHandler.map { .serialized($0) } ?? .none,
                               progress: progress)
    }

    /// An upload task sending `bodyData` (nil: an empty body).
    @preconcurrency
    open func uploadTask(with request: URLRequest, from bodyData: Data?,
                         progress: (@Sendable (Progress) -> Void)?,
                         completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .data(bodyData ?? Data()), completion: completionHandler.map { .serialized($0) } ?? .none,
                               progress: progress)
    }

    /// An upload task sending the request's `httpBodyStream` (with its
    /// Content-Length header when set, chunked otherwise).
    @preconcurrency
    open func uploadTask(withStreamedRequest request: URLRequest,
                         progress: (@Sendable (Progress) -> Void)?,
                         completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .stream, completion: completionHandler.map { .serialized($0) } ?? .none,
                               progress: progress)
    }

    // MARK: - Download tasks

    /// A download task: the body goes to a temporary file, then to the URL
    /// `destination` returns (unless the manager's did-finish-downloading block
    /// names one first).
    @preconcurrency
    open func downloadTask(with request: URLRequest,
                           progress: (@Sendable (Progress) -> Void)?,
                           destination: (@Sendable (URL, URLResponse) -> URL)?,
                           completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        factory.makeDownloadTask(.request(request), destination: SessionTaskFrontend.destination(destination),
                                 completion: completionHandler.map { .download($0) } ?? .none, progress: progress)
    }

    /// A download task continuing from `resumeData` (this package's format,
    /// from `cancel(byProducingResumeData:)` or a failed download's error).
    @preconcurrency
    open func downloadTask(withResumeData resumeData: Data,
                           progress: (@Sendable (Progress) -> Void)?,
                           destination: (@Sendable (URL, URLResponse) -> URL)?,
                           completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        factory.makeDownloadTask(.resumeData(resumeData), destination: SessionTaskFrontend.destination(destination),
                                 completion: completionHandler.map { .download($0) } ?? .none, progress: progress)
    }

    // MARK: - AFNetworking 2.x spellings of the factories

    // Deprecated with `renamed:` and forwarding to the factories above. Declared
    // here, in the class body, rather than in Compatibility+SessionManagers.swift:
    // Swift cannot override a member declared in an extension.

    /// 2.7's `-dataTaskWithRequest:completionHandler:`.
    @available(*, deprecated, renamed: "dataTask(with:completionHandler:)")
    @preconcurrency
    open func dataTaskWithRequest(_ request: URLRequest,
                                  completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        dataTask(with: request, completionHandler: completionHandler)
    }

    /// 2.7's `-uploadTaskWithRequest:fromFile:progress:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "uploadTask(with:fromFile:progress:completionHandler:)")
    @preconcurrency
    open func uploadTaskWithRequest(_ request: URLRequest, fromFile fileURL: URL,
                                    progress: (@Sendable (Progress) -> Void)?,
                                    completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        uploadTask(with: request, fromFile: fileURL, progress: progress, completionHandler: completionHandler)
    }

    /// 2.7's `-uploadTaskWithRequest:fromData:progress:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "uploadTask(with:from:progress:completionHandler:)")
    @preconcurrency
    open func uploadTaskWithRequest(_ request: URLRequest, fromData bodyData: Data?,
                                    progress: (@Sendable (Progress) -> Void)?,
                                    completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        uploadTask(with: request, from: bodyData, progress: progress, completionHandler: completionHandler)
    }

    /// 2.7's `-uploadTaskWithStreamedRequest:progress:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "uploadTask(withStreamedRequest:progress:completionHandler:)")
    @preconcurrency
    open func uploadTaskWithStreamedRequest(_ request: URLRequest,
                                            progress: (@Sendable (Progress) -> Void)?,
                                            completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        uploadTask(withStreamedRequest: request, progress: progress, completionHandler: completionHandler)
    }

    /// 2.7's `-downloadTaskWithRequest:progress:destination:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "downloadTask(with:progress:destination:completionHandler:)")
    @preconcurrency
    open func downloadTaskWithRequest(_ request: URLRequest,
                                      progress: (@Sendable (Progress) -> Void)?,
                                      destination: (@Sendable (URL, URLResponse) -> URL)?,
                                      completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        downloadTask(with: request, progress: progress, destination: destination, completionHandler: completionHandler)
    }

    /// 2.7's `-downloadTaskWithResumeData:progress:destination:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "downloadTask(withResumeData:progress:destination:completionHandler:)")
    @preconcurrency
    open func downloadTaskWithResumeData(_ resumeData: Data,
                                         progress: (@Sendable (Progress) -> Void)?,
                                         destination: (@Sendable (URL, URLResponse) -> URL)?,
                                         completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        downloadTask(withResumeData: resumeData, progress: progress, destination: destination, completionHandler: completionHandler)
    }

    var factory: SessionTaskFactory { SessionTaskFactory(manager: self, session: managedSession) }

    // MARK: - Progress

    /// The task's upload progress while it runs (nil once it completed, or
    /// for a task of another manager).
    public func uploadProgress(for task: URLSessionTask) -> Progress? {
        frontend(of: task).map { $0.progress.upload }
    }

    /// The task's download progress while it runs (nil once it completed, or
    /// for a task of another manager).
    public func downloadProgress(for task: URLSessionTask) -> Progress? {
        frontend(of: task).map { $0.progress.download }
    }

    /// The front-end of an unfinished task of this manager.
    func frontend(of task: URLSessionTask) -> SessionTaskFrontend? {
        guard let frontend = ownFrontend(of: task), frontend.taskState != .completed else { return nil }
        return frontend
    }

    /// The front-end of a task of this manager, finished or not.
    func ownFrontend(of task: URLSessionTask) -> SessionTaskFrontend? {
        guard let frontend = (task as? ManagedSessionTask)?.frontend, frontend.context.manager === self else { return nil }
        return frontend
    }

    // MARK: - URLSessionDelegate

    /// Runs the session-did-become-invalid block, then posts `AFURLSessionDidInvalidate`.
    open func urlSession(_ session: URLSession, didBecomeInvalidWithError error: Error?) {
        sessionDidBecomeInvalid(session, error: error)
    }

    /// Never called on Linux (server trust is decided in the handshake); answers
    /// through the session challenge block, else with default handling.
    open func urlSession(_ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
                         completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        sessionDidReceive(session, challenge: challenge, completionHandler: completionHandler)
    }

    // MARK: - URLSessionTaskDelegate

    /// Each redirect hop: the redirection block's request (nil stops at the
    /// 3xx, which becomes the response), else the proposed one.
    open func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                         newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        taskWillPerformRedirection(session, task: task, response: response, request: request, completionHandler: completionHandler)
    }

    /// HTTP authentication (401/407, Basic and Digest): the task challenge
    /// block's answer, else default handling (the configuration's credential storage).
    open func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                         completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        taskDidReceive(session, task: task, challenge: challenge, completionHandler: completionHandler)
    }

    /// A body must be sent again: the need-new-body-stream block's stream,
    /// else a copy of a multipart body, else nil (the task fails).
    open func urlSession(_ session: URLSession, task: URLSessionTask,
                         needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        taskNeedNewBodyStream(session, task: task, completionHandler: completionHandler)
    }

    /// Upload progress: the did-send-body-data block.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
                         totalBytesExpectedToSend: Int64) {
        blocks[\.taskDidSendBodyData]?(session, task, bytesSent, totalBytesSent, totalBytesExpectedToSend)
    }

    /// The task completed (`error`: the transport's): the did-complete block.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        blocks[\.taskDidComplete]?(session, task, error)
    }

    // MARK: - URLSessionDataDelegate

    /// The response of a data task: the did-receive-response block's disposition, else `.allow`.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                         completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        completionHandler(blocks[\.dataTaskDidReceiveResponse]?(session, dataTask, response) ?? .allow)
    }

    /// The data task became `downloadTask` (`.becomeDownload`): the did-become-download block.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didBecome downloadTask: URLSessionDownloadTask) {
        blocks[\.dataTaskDidBecomeDownloadTask]?(session, dataTask, downloadTask)
    }

    /// A piece of a data task's body: the did-receive-data block.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        blocks[\.dataTaskDidReceiveData]?(session, dataTask, data)
    }

    /// A storable response: the will-cache block's answer (nil stores nothing), else the proposal.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
                         completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void) {
        guard let block = blocks[\.dataTaskWillCacheResponse] else { return completionHandler(proposedResponse) }
        completionHandler(block(session, dataTask, proposedResponse))
    }

    /// Accepted for source compatibility; never called (no background sessions on Linux).
    open func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        guard let block = blocks[\.didFinishEventsForBackgroundURLSession] else { return }
        DispatchQueue.main.async { block(session) }
    }

    // MARK: - URLSessionDownloadDelegate

    /// A download is complete in `location`: moved to the URL the manager's
    /// did-finish-downloading block returns, else to the task's destination.
    open func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        downloadTaskDidFinish(session, downloadTask: downloadTask, location: location)
    }

    /// Download progress: the did-write-data block.
    open func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
                         totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {
        blocks[\.downloadTaskDidWriteData]?(session, downloadTask, bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)
    }

    /// A resumed download continues at `fileOffset` (0: the server sent the whole entity again).
    open func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
                         expectedTotalBytes: Int64) {
        blocks[\.downloadTaskDidResume]?(session, downloadTask, fileOffset, expectedTotalBytes)
    }

    // MARK: - NSSecureCoding, NSCopying

    /// Managers archive securely, as in 2.7.
    public static var supportsSecureCoding: Bool { true }

    /// Restores a manager from its configuration's archived fields and its retry policy.
    public required convenience init?(coder: NSCoder) {
        self.init(sessionConfiguration: SessionConfigurationCoding.decode(from: coder))
        retryPolicy = RetryPolicyCoding.decode(from: coder)
    }

    /// Archives the configuration's scalar fields (storages are not archived;
    /// `timeoutIntervalForResource` is one of them) and the retry policy.
    /// Never `clientCertificate` (its private key is not written into an
    /// archive) or `logger` (a handler of this process).
    open func encode(with coder: NSCoder) {
        SessionConfigurationCoding.encode(sessionConfiguration, to: coder)
        if let retryPolicy { RetryPolicyCoding.encode(retryPolicy, to: coder) }
    }

    /// A new manager of the same class for the same configuration (new
    /// session; copies of the response serializer and security policy; the
    /// same client certificate, retry policy, request interceptor and logger; none of the blocks,
    /// no tasks).
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = Swift.type(of: self).init(sessionConfiguration: sessionConfiguration)
        if let serializer = responseSerializer.copy() as? HTTPResponseSerializer { copy.responseSerializer = serializer }
        if let policy = securityPolicy.copy() as? SecurityPolicy { copy.securityPolicy = policy }
        let mine = state.withLock { ($0.clientCertificate, $0.retryPolicy, $0.requestInterceptor, $0.logger) }
        copy.state.withLock { theirs in
            (theirs.clientCertificate, theirs.retryPolicy, theirs.requestInterceptor, theirs.logger) = mine
        }
        return copy
    }

    /// The class, address, session and operation queue (2.7's format).
    open override var description: String {
        "<\(Swift.type(of: self)): \(Unmanaged.passUnretained(self).toOpaque()), session: \(session), operationQueue: \(operationQueue)>"
    }
}
