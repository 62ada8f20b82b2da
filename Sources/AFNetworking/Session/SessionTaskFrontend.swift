@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import Logging
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a session task was made to do.
enum SessionTaskKind: Sendable {
    case data
    case upload(UploadBody)
    case download(DownloadStart)

    enum UploadBody: Sendable {
        /// Streamed from this file on every hop; `measuredAtStart`: the caller
        /// set no `Content-Length`, so each hop sends the file as it is then.
        case file(URL, measuredAtStart: Bool)
        /// `httpBody` (sent from memory).
        case data
        /// The request's `httpBodyStream`.
        case stream
    }

    enum DownloadStart: Sendable {
        case fresh
        /// Boxed: resume data is large, and the kind is copied whenever a
        /// task's settings are read (most tasks are not resumed downloads).
        indirect case resuming(DownloadResumeData)
        /// Resume data that cannot be used: the task fails with this when resumed.
        case unusable(NSError)
    }

    var isDownload: Bool {
        if case .download = self { return true }
        return false
    }
}

/// How a task's end is reported to its creator.
enum SessionTaskCompletion: Sendable {
    case none
    /// The manager's data and upload factories: the serialized response.
    case serialized(@Sendable (URLResponse, Any?, Error?) -> Void)
    /// The manager's download factories: where the file went.
    case download(@Sendable (URLResponse, URL?, Error?) -> Void)
    /// `URLSession`'s own data/upload factories: the raw body.
    case rawData(@Sendable (Data?, URLResponse?, Error?) -> Void)
    /// `URLSession`'s own download factories: the temporary file, valid during the call.
    case rawDownload(@Sendable (URL?, URLResponse?, Error?) -> Void)
}

/// Gives every session task an identifier: positive, unique in the process,
/// increasing in creation order also when tasks are made on many threads
/// (rdar 17029580, which 2.7 worked around with a serial creation queue).
enum TaskIdentifiers {
    private static let last = Atomic<Int>(0)

    static func next() -> Int {
        last.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

/// A session task's front-end (`RequestFrontend`) of its `RequestDriver`, as
/// `URLConnectionOperation` is an operation's: the task objects
/// (`SessionDataTask` & co.) forward their `URLSessionTask` API here. The
/// lifecycle is run by `requestDriver` (the task's `state` is derived from
/// its machine), and so are the response decision, the download file and
/// the resume data (`SessionTaskOutput`, beside the machine). What the task
/// adds for delivery — the task object and identifier the delegate calls
/// name, the reports batched for the manager's `operationQueue` — lives in
/// `state`. The two locks are never held together.
final class SessionTaskFrontend: @unchecked Sendable {
    // @unchecked: mutable state is inside `state` (LockedState) and the driver;
    // `progress` is changed only on the manager's operation queue.

    /// Who the task reports to, fixed at creation.
    struct Context: @unchecked Sendable {
        // @unchecked: the manager and session are thread-safe objects.
        /// Held while the task exists, so a manager dropped by its owner still
        /// delivers its running tasks' completions (nil: the session outlived
        /// its manager, and its tasks complete with NSURLErrorCancelled).
        let manager: URLSessionManager?
        let session: ManagedSession
        let events: DelegateEventQueue
        /// The manager's security policy as it was when the task was made
        /// (nil when it is OpenSSL's standard verification).
        let securityPolicy: SecurityPolicy?
        /// The manager's delegate methods are its own (not a subclass's) and
        /// no block listens: per-chunk delegate calls can be skipped.
        let skipsUnobservedCalls: Bool
        /// The manager's client certificate when the task was made.
        let clientCertificate: ClientCertificate?
        /// The manager's retry policy when the task was made.
        let retryPolicy: RetryPolicy?
        /// The manager's request interceptor, with its serializer's statuses, when the task was made.
        let interception: InterceptionPlan?
        /// The manager's logger when the task was made.
        let logger: Logger?
        /// Made by an `async` call: its completion handler resumes an awaiting
        /// Swift task and runs where the response was serialized, never queued
        /// on the main queue (see `SessionTaskFactory.Delivery`).
        var deliversInPlace = false
    }

    /// How the driver holds its task object: weakly until the task is resumed
    /// or registered with its session (a task nobody keeps and nobody resumed
    /// is freed), strongly while it runs, not at all once it completed.
    enum TaskReference {
        final class Weak: @unchecked Sendable {
            // @unchecked: written once in init.
            weak var task: URLSessionTask?
            init(_ task: URLSessionTask) { self.task = task }
        }

        case strong(URLSessionTask)
        case weak(Weak)
        case released

        var task: URLSessionTask? {
            switch self {
            case .strong(let task): return task
            case .weak(let box): return box.task
            case .released: return nil
            }
        }

        /// Held strongly from now on (the task was resumed or cancelled).
        mutating func retain() {
            if case .weak(let box) = self { self = box.task.map { .strong($0) } ?? .released }
        }
    }

    /// Body chunks and counts waiting for the next flush on the operation
    /// queue: delegate calls are made per flush, not per chunk.
    struct PendingReports {
        /// Once this many body bytes wait for the did-receive-data call, the
        /// transfer pauses until a flush takes them: a slow or blocked
        /// operation queue holds at most this much, and each call gets at
        /// most this much plus one piece.
        static let dataHighWater = 1 << 20
        /// Names the flush that may take these reports (bumped by a barrier).
        var generation = 0
        var scheduled = false
        var data: Data?
        /// The transfer paused because `data` was full; the flush that takes
        /// the data resumes it.
        var blocked: Transfer?
        var sentSinceLast: Int64 = 0
        var sent: (total: Int64, expected: Int64)?
        var receivedSinceLast: Int64 = 0
        var received: (total: Int64, expected: Int64)?
    }

    struct State {
        /// The object delegate calls name (a data task's download task after
        /// `.becomeDownload`).
        var task = TaskReference.released
        /// The caller's completion handler and download destination, let go
        /// once the task has completed (as 2.7 removes a task's delegate):
        /// a task kept after its end (`self.task = …`) must not keep the
        /// blocks — and whatever they capture, `self` often — alive.
        var completion: SessionTaskCompletion
        var destination: Destination?
        var identifier: Int
        var reports = PendingReports()
        /// A report went to the operation queue: every later one goes there
        /// too, and so does the end, so counts the queue delivers late are
        /// never older than counts stored directly.
        var reportsGoThroughQueue = false

        /// The upload counts `countOfBytesSent` and `countOfBytesExpectedToSend` read.
        mutating func noteSent(total: Int64, expected: Int64) {
            bytesSent = total
            if expected >= 0 { bytesExpectedToSend = expected }
        }
        var bytesSent: Int64 = 0
        var bytesExpectedToSend: Int64
        /// The task's rate caps (see `URLSessionTask.maximumDownloadBytesPerSecond`).
        var downloadLimiter: TransferRateLimiter?
        var maximumUploadBytesPerSecond: Int64 = 0
    }

    /// Runs the request's lifecycle.
    let requestDriver: RequestDriver
    let state: LockedState<State>
    let kind: SessionTaskKind
    let context: Context
    /// The completion handler (`.none` once the task completed; see `State.completion`).
    var completion: SessionTaskCompletion { state.withLock { $0.completion } }
    let progress: TaskProgress
    /// Whether a full chunk waits (`PendingReports.dataHighWater`), readable
    /// without the lock: every body piece asks, and almost always the answer
    /// is no. Written under `state`'s lock; the lock decides when it says yes.
    let dataBacklogged = Atomic<Bool>(false)
    /// The request as the task was made with it (configuration headers added).
    let originalRequest: URLRequest
    /// Where a finished download goes; nil from the closure leaves it
    /// unmoved (it is deleted), as the async download does for a response
    /// its serializer refuses.
    typealias Destination = @Sendable (URL, URLResponse) -> URL?

    /// A public API's destination block, which always names a place.
    static func destination(_ block: (@Sendable (URL, URLResponse) -> URL)?) -> Destination? {
        guard let block else { return nil }
        return { (location: URL, response: URLResponse) -> URL? in block(location, response) }
    }
    /// Where a finished download goes (nil once the task completed).
    var destination: Destination? { state.withLock { $0.destination } }
    /// Registered with a valid session. A task made after invalidation (or
    /// for a session whose manager is gone) is not: it completes with
    /// NSURLErrorCancelled when resumed.
    let admitted: Bool
    /// The error the task fails with when resumed, sending nothing: its
    /// request cannot be sent as the session would send it (a configuration
    /// header that cannot be sent); nil for a task that can be sent.
    let refusal: NSError?
    /// The tracer and context current when the task was made (nil: no tracer).
    let trace: TraceOrigin?

    init(kind: SessionTaskKind, request: URLRequest, context: Context, completion: SessionTaskCompletion, progress: TaskProgress,
         destination: Destination?, identifier: Int, bytesExpectedToSend: Int64, admitted: Bool, refusal: NSError? = nil) {
        var configuration = TransferStateMachine.Configuration()
        configuration.consultsCache = !kind.isDownload && context.session.settings.cache != nil
        requestDriver = RequestDriver(configuration: configuration)
        state = LockedState(State(completion: completion, destination: destination, identifier: identifier,
                                  bytesExpectedToSend: bytesExpectedToSend))
        self.kind = kind
        self.context = context
        self.progress = progress
        self.originalRequest = request
        self.admitted = admitted
        self.refusal = refusal
        trace = TraceOrigin.current
        requestDriver.attach(self)
    }

    /// Whether the body is kept in memory (data and upload tasks) rather than
    /// written to a file (download tasks) or streamed (`ResponseBytes`, an
    /// output installed before the first resume).
    var keepsBodyInMemory: Bool { !kind.isDownload && requestDriver.writer == nil }

    // MARK: - URLSessionTask API

    var taskState: URLSessionTask.State { requestDriver.taskState }

    var identifier: Int { state.withLock { $0.identifier } }

    var currentRequest: URLRequest? { requestDriver.currentRequest ?? originalRequest }

    var response: URLResponse? { requestDriver.currentResponse?.urlResponse }

    /// The transport's error once the task completed.
    var error: Error? {
        requestDriver.finalOutcome?.error
    }

    var countOfBytesReceived: Int64 { requestDriver.entityBytesInOutput }
    var countOfBytesExpectedToReceive: Int64 { requestDriver.expectedEntityLength }
    var countOfBytesSent: Int64 { state.withLock { $0.bytesSent } }
    var countOfBytesExpectedToSend: Int64 { state.withLock { $0.bytesExpectedToSend } }

    /// Starts the task, or lets a suspended one continue on its connection.
    func resume() {
        let task = retainTask()
        // `timeoutIntervalForResource`: the whole task, from its first resume.
        let budget = ResourceBudget(limit: context.session.settings.resourceTimeout, url: originalRequest.url,
                                    description: "the session's resource timeout")
        requestDriver.handle(.resumeTask(originalRequest, bodyInMemory: keepsBodyInMemory, retry: retryPlan, budget: budget,
                                         admitted: admitted, interception: context.interception, refusal: refusal)) { change in
            if change.before == .suspended && change.after == .running, let task {
                MainQueueNotifier.shared.post(.AFNetworkingTaskDidResume, object: task, marks: .begins)
            }
        }
    }

    /// Stops the data flow of a running task (nothing read or written, no
    /// idle timeout) until `resume()`.
    func suspend() {
        let task = currentTask
        requestDriver.handle(.suspendTask) { change in
            if change.before == .running && change.after == .suspended, let task {
                MainQueueNotifier.shared.post(.AFNetworkingTaskDidSuspend, object: task, marks: .ends)
            }
        }
    }

    /// Completes the task once with NSURLErrorCancelled, whatever it is doing.
    func cancel() {
        _ = retainTask()
        requestDriver.handle(.cancelTask(originalRequest, bodyInMemory: keepsBodyInMemory))
        // An end parked for an outstanding response answer is released, cancelled.
        carryOut(requestDriver.handle(.cancelled))
    }

    /// Cancels a download and hands `handler` the resume data (nil when it
    /// cannot be resumed), before the completion handler runs.
    func cancel(byProducingResumeData handler: @escaping @Sendable (Data?) -> Void) {
        // Decided already: the handler gets the data; else it waits for it and the task is cancelled.
        carryOut(requestDriver.handle(.resumeDataWanted(handler)))
    }

    /// How the task's failures are retried: a file upload reads its file again,
    /// a streamed body only if the stream copies itself.
    private var retryPlan: TransferStateMachine.RetryPlan? {
        guard let policy = context.retryPolicy else { return nil }
        let resendable: Bool
        switch kind {
        case .upload(.file), .upload(.data): resendable = true
        case .data, .upload(.stream), .download: resendable = BodyStreams.canResend(originalRequest)
        }
        return TransferStateMachine.RetryPlan(policy: policy, bodyCanBeResent: resendable)
    }

    /// The current task object (the download task a data task became).
    var currentTask: URLSessionTask? { state.withLock { $0.task.task } }

    /// Holds the task object strongly from now on and returns it.
    private func retainTask() -> URLSessionTask? {
        state.withLock { state in
            state.task.retain()
            return state.task.task
        }
    }
}
