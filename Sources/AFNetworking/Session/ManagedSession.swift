@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLSession` a manager owns (`URLSessionManager.session`): a real
/// FoundationNetworking session object, so it can be the session argument of
/// every delegate call, whose members are the manager's. FoundationNetworking's
/// own machinery never carries a request: every factory makes an engine task.
final class ManagedSession: URLSession, @unchecked Sendable {
    // @unchecked: immutable references plus the registry (LockedState).

    private final class ManagerReference: @unchecked Sendable {
        // @unchecked: set once in init, read afterwards.
        weak var manager: URLSessionManager?
        init(_ manager: URLSessionManager) { self.manager = manager }
    }

    private static let nextKey = LockedState(0)

    private let owner: ManagerReference
    private let ownConfiguration: URLSessionConfiguration
    private let queue: OperationQueue
    let settings: SessionSettings
    let events: DelegateEventQueue
    private let registry = LockedState(SessionRegistry<SessionTaskFrontend>())

    init(manager: URLSessionManager, configuration: URLSessionConfiguration, events: DelegateEventQueue) {
        owner = ManagerReference(manager)
        ownConfiguration = configuration
        queue = events.queue
        self.events = events
        let key = ManagedSession.nextKey.withLock { key -> Int in
            key += 1
            return key
        }
        settings = SessionSettings(configuration, sessionKey: key)
        // No delegate for Foundation's half: it would retain the manager and
        // it never runs a transfer anyway.
        super.init(configuration: configuration, delegate: nil, delegateQueue: events.queue)
    }

    var manager: URLSessionManager? { owner.manager }

    /// A copy of the configuration the manager was made with.
    override var configuration: URLSessionConfiguration {
        (ownConfiguration.copy() as? URLSessionConfiguration) ?? ownConfiguration
    }

    /// The manager.
    override var delegate: URLSessionDelegate? { owner.manager }

    /// The manager's `operationQueue`.
    override var delegateQueue: OperationQueue { queue }

    // MARK: - Tasks

    /// Makes a task with `build` (told whether the session still takes
    /// tasks) and registers it, in one step: an invalidation cannot slip in
    /// between and miss it. `build` makes objects only; it runs no caller code.
    func register(identifier: Int, accepting: Bool, build: (_ admitted: Bool) -> SessionTaskFrontend) {
        registry.withLock { registry in
            let admitted = accepting && registry.phase == .active
            let frontend = build(admitted)
            if admitted { _ = registry.add(frontend, identifier: identifier) }
        }
    }

    func replaceTask(identifier: Int, with frontend: SessionTaskFrontend, newIdentifier: Int) {
        registry.withLock { $0.replace(identifier: identifier, with: frontend, newIdentifier: newIdentifier) }
    }

    /// A task's did-complete call has run (on the operation queue).
    func taskDidComplete(identifier: Int) {
        perform(registry.withLock { $0.remove(identifier: identifier) })
    }

    /// Unfinished tasks, in creation order.
    var unfinishedTasks: [URLSessionTask] {
        registry.withLock { $0.tasks }.compactMap { $0.currentTask }.filter { $0.state != .completed }
    }

    var isValid: Bool { registry.withLock { $0.phase == .active } }

    // MARK: - Invalidation

    /// `invalidateSessionCancelingTasks`: starts before returning (2.7 went
    /// through the main queue, which never ran with a blocked main thread).
    func invalidate(cancelling: Bool) {
        perform(registry.withLock { $0.invalidate(cancelling: cancelling) })
    }

    private func perform(_ action: SessionRegistry<SessionTaskFrontend>.Action) {
        switch action {
        case .none:
            break
        case .cancel(let frontends):
            frontends.forEach { $0.cancel() }
        case .becameInvalid:
            becameInvalid()
        }
    }

    /// The session-did-become-invalid call and notification, on the operation
    /// queue after every task's did-complete call.
    private func becameInvalid() {
        events.submit { [self] in
            manager?.urlSession(self, didBecomeInvalidWithError: nil)
            if manager == nil {
                NotificationCenter.default.post(name: .AFURLSessionDidInvalidate, object: self)
            }
        }
    }

    /// Invalidates this session (the manager's current one or an earlier one
    /// a reset replaced), letting its tasks finish.
    override func finishTasksAndInvalidate() {
        invalidate(cancelling: false)
    }

    /// Invalidates this session, cancelling its tasks.
    override func invalidateAndCancel() {
        invalidate(cancelling: true)
    }

    // MARK: - Factories (engine tasks of the manager, without completion handlers unless given)

    override func dataTask(with request: URLRequest) -> URLSessionDataTask {
        factory.makeDataTask(request, completion: .none)
    }

    override func dataTask(with url: URL) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url))
    }

    override func dataTask(with request: URLRequest,
                           completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionDataTask {
        factory.makeDataTask(request, completion: .rawData(completionHandler))
    }

    override func dataTask(with url: URL,
                           completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionDataTask {
        dataTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    override func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .file(fileURL), completion: .none)
    }

    override func uploadTask(with request: URLRequest, from bodyData: Data) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .data(bodyData), completion: .none)
    }

    override func uploadTask(withStreamedRequest request: URLRequest) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .stream, completion: .none)
    }

    override func uploadTask(with request: URLRequest, fromFile fileURL: URL,
                             completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .file(fileURL), completion: .rawData(completionHandler))
    }

    override func uploadTask(with request: URLRequest, from bodyData: Data?,
                             completionHandler: @escaping @Sendable (Data?, URLResponse?, Error?) -> Void) -> URLSessionUploadTask {
        factory.makeUploadTask(request, body: .data(bodyData ?? Data()), completion: .rawData(completionHandler))
    }

    override func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        factory.makeDownloadTask(.request(request), destination: nil, completion: .none)
    }

    override func downloadTask(with url: URL) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url))
    }

    override func downloadTask(withResumeData resumeData: Data) -> URLSessionDownloadTask {
        factory.makeDownloadTask(.resumeData(resumeData), destination: nil, completion: .none)
    }

    override func downloadTask(with request: URLRequest,
                               completionHandler: @escaping @Sendable (URL?, URLResponse?, Error?) -> Void) -> URLSessionDownloadTask {
        factory.makeDownloadTask(.request(request), destination: nil, completion: .rawDownload(completionHandler))
    }

    override func downloadTask(with url: URL,
                               completionHandler: @escaping @Sendable (URL?, URLResponse?, Error?) -> Void) -> URLSessionDownloadTask {
        downloadTask(with: URLRequest(url: url), completionHandler: completionHandler)
    }

    override func downloadTask(withResumeData resumeData: Data,
                               completionHandler: @escaping @Sendable (URL?, URLResponse?, Error?) -> Void) -> URLSessionDownloadTask {
        factory.makeDownloadTask(.resumeData(resumeData), destination: nil, completion: .rawDownload(completionHandler))
    }

    /// Makes tasks for this session: the manager's, or — once the manager is
    /// gone — a stand-in whose tasks complete with NSURLErrorCancelled.
    private var factory: SessionTaskFactory {
        SessionTaskFactory(manager: manager, session: self)
    }

    // MARK: - Listing, reset, flush

    override func getTasksWithCompletionHandler(
        _ completionHandler: @escaping @Sendable ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask]) -> Void
    ) {
        let tasks = unfinishedTasks
        events.submit {
            completionHandler(tasks.compactMap { $0 as? URLSessionDataTask }.filter { !($0 is URLSessionUploadTask) },
                              tasks.compactMap { $0 as? URLSessionUploadTask },
                              tasks.compactMap { $0 as? URLSessionDownloadTask })
        }
    }

    override func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void) {
        let tasks = unfinishedTasks
        events.submit { completionHandler(tasks) }
    }

    /// Empties the configuration's cookie and credential storages and cache, as Apple documents.
    override func reset(completionHandler: @escaping @Sendable () -> Void) {
        let settings = self.settings
        DispatchQueue.global().async { [events] in
            if let cookies = settings.cookieStorage {
                for cookie in cookies.cookies ?? [] { cookies.deleteCookie(cookie) }
            }
            if let credentials = settings.credentialStorage {
                for (space, byUser) in credentials.allCredentials {
                    for credential in byUser.values { credentials.remove(credential, for: space) }
                }
            }
            if let cache = settings.cache {
                cache.removeAllCachedResponses()
                CacheIndex.index(for: cache).forget()
            }
            events.submit(completionHandler)
        }
    }

    /// Nothing is buffered outside the transfers themselves: completes at once.
    override func flush(completionHandler: @escaping @Sendable () -> Void) {
        events.submit(completionHandler)
    }
}
