@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import Tracing

/// A dependency graph of requests (beyond 2.x, which stops at `Operation`
/// dependencies and batches): nodes are plain `Operation`s — 2.x operations,
/// `BlockOperation`s — or builders that make their operation from their
/// dependencies' results.
///
/// - A node starts once its dependencies have finished. With the default
///   policy (`.cancel`), a dependency that failed, was cancelled or skipped
///   skips the node: nothing is sent, its outcome is `.skipped(because:)`
///   (its operation, cancelled, still finishes, so its failure block runs).
///   `.runAnyway` is `Operation`'s own behaviour.
/// - Nodes go to `operationQueue` only when they may start, so a graph never
///   holds a dependent in a queue while its dependency runs (the pattern
///   swift-corelibs-foundation crashes on when the queue is cancelled).
/// - `maxConcurrentRequestCount` nodes run at once (6), at most
///   `maxConcurrentRequestCountPerHost` requests per host (0: no cap).
/// - `pause()`, `resume()`, `cancel()` act on the whole graph; `progress`
///   counts nodes; the completion block and `run()` see every node's outcome,
///   exactly once each.
/// - Nodes may be added while the graph runs, until it has finished.
open class RequestGraph: NSObject, @unchecked Sendable {
    // @unchecked: every mutable field is inside `core` (a LockedState); the
    // queues and the Progress are thread-safe objects of their own.

    struct Core {
        var state = RequestGraphState()
        var name: String?
        var policy = DependencyFailurePolicy.cancel
        var maximumDownloadBytesPerSecond: Int64 = 0
        var maximumUploadBytesPerSecond: Int64 = 0
        /// The download budget all the graph's transfers share.
        var downloadLimiter: TransferRateLimiter?
        var completion: (queue: DispatchQueue, block: @Sendable (RequestGraphReport) -> Void)?
        var waiters: [CheckedContinuation<RequestGraphReport, Never>] = []
        var report: RequestGraphReport?
        /// The operations of the nodes, to find a node from an operation.
        var indexOfOperation: [ObjectIdentifier: Int] = [:]
        /// `start()` was called (the first call starts the span and the nodes).
        var startRequested = false
        /// The graph's span while it runs, when a tracer is active, and the
        /// origin its requests' spans take (children of that span).
        var span: (any Span)?
        var nodeTrace: TraceOrigin?
        /// A thread is bringing the queued requests to the paused state
        /// (`reconcilePauses`), and whether the state changed since it read it.
        var reconcilingPauses = false
        var pausesPending = false
    }

    /// Where nodes run; a queue of the graph's own unless one was given.
    public let operationQueue: OperationQueue
    let core = LockedState(Core())
    /// Node counts (total and done); updated in order on `progressQueue`,
    /// which callers wait for (never while holding `core`).
    let nodeProgress = Progress(totalUnitCount: 0)
    let progressQueue = DispatchQueue(label: "AFNetworking.RequestGraph.progress")

    /// Operations that are in some graph (an operation is in one at most);
    /// a graph takes its own out when it goes.
    private static let enrolled = LockedState<Set<ObjectIdentifier>>([])

    /// Takes `operation` into a graph; false if it is in one already.
    static func enroll(_ operation: Operation) -> Bool {
        enrolled.withLock { $0.insert(ObjectIdentifier(operation)).inserted }
    }

    /// A graph whose nodes run on `operationQueue` (nil: a queue of its own,
    /// with no limit of its own: the graph's caps decide what runs).
    public init(operationQueue: OperationQueue? = nil) {
        self.operationQueue = operationQueue ?? DependencySafeOperationQueue()
        super.init()
    }

    deinit {
        let operations = core.withLock { Array($0.indexOfOperation.keys) }
        RequestGraph.enrolled.withLock { $0.subtract(operations) }
    }

    // MARK: - Settings

    /// The graph's name (its span's name, "RequestGraph" when nil).
    open var name: String? {
        get { core.withLock { $0.name } }
        set { core.withLock { $0.name = newValue } }
    }

    /// The policy of nodes added without one (`.cancel`).
    open var defaultDependencyFailurePolicy: DependencyFailurePolicy {
        get { core.withLock { $0.policy } }
        set { core.withLock { $0.policy = newValue } }
    }

    /// Nodes running at once (every kind of node counts), default 6.
    open var maxConcurrentRequestCount: Int {
        get { core.withLock { $0.state.maxConcurrent } }
        set { changeCaps { $0.maxConcurrent = max(newValue, 1) } }
    }

    /// Requests running at once per URL host name; 0 (the default): no cap.
    open var maxConcurrentRequestCountPerHost: Int {
        get { core.withLock { $0.state.maxPerHost } }
        set { changeCaps { $0.maxPerHost = max(newValue, 0) } }
    }

    /// The cap on the download rate of all the graph's transfers together
    /// (bytes per second); 0 (the default): none. One budget, shared: each
    /// piece any of them receives takes from it (see
    /// `URLConnectionOperation.maximumDownloadBytesPerSecond`). Applies to
    /// requests queued from then on.
    open var maximumDownloadBytesPerSecond: Int64 {
        get { core.withLock { $0.maximumDownloadBytesPerSecond } }
        set {
            let cap = max(newValue, 0)
            let limiter = cap > 0 ? TransferRateLimiter(bytesPerSecond: cap) : nil
            core.withLock { core in
                core.maximumDownloadBytesPerSecond = cap
                core.downloadLimiter = limiter
            }
        }
    }

    /// The cap on the upload rate of the graph's uploads; 0: none. curl
    /// paces uploads per transfer, so each request that sends a body gets,
    /// when it starts, an equal share of the cap among the uploads running
    /// then (at least 1 byte a second); shares are not redistributed later,
    /// so uploads started at different times may together exceed the cap.
    open var maximumUploadBytesPerSecond: Int64 {
        get { core.withLock { $0.maximumUploadBytesPerSecond } }
        set { core.withLock { $0.maximumUploadBytesPerSecond = max(newValue, 0) } }
    }

    private func changeCaps(_ change: (inout RequestGraphState) -> Void) {
        let actions = core.withLock { core -> [RequestGraphState.Action] in
            change(&core.state)
            return core.state.rescheduled()
        }
        perform(actions)
    }

    // MARK: - Adding nodes

    /// Adds a node; dependencies must be nodes of this graph. Nodes may be
    /// added while the graph runs. The operation's own `Operation`
    /// dependencies are kept; those on nodes of this graph count as graph
    /// dependencies. Throws `RequestGraphError`.
    @discardableResult
    open func add(_ operation: Operation, name: String? = nil, dependencies: [RequestGraphNode] = [],
                  onDependencyFailure: DependencyFailurePolicy? = nil) throws -> RequestGraphNode {
        guard !operation.isExecuting, !operation.isFinished else { throw RequestGraphError.alreadyEnqueued }
        let host = (operation as? URLConnectionOperation)?.request.url?.host
        // Foundation reads these under locks of its own: read before ours.
        let ownDependencies = operation.dependencies.map(ObjectIdentifier.init)
        guard RequestGraph.enroll(operation) else { throw RequestGraphError.alreadyEnqueued }
        do {
            return try addNode(name: name, dependencies: dependencies, policy: onDependencyFailure, work: .operation(operation),
                               host: host, operation: operation, ownDependencies: ownDependencies)
        } catch {
            _ = RequestGraph.enrolled.withLock { $0.remove(ObjectIdentifier(operation)) }
            throw error
        }
    }

    /// A node whose operation is made from its dependencies' results when they
    /// have all finished (after each of them succeeded, or under `.runAnyway`
    /// whatever they did). A builder that throws ends the node `.failed` with
    /// that error. The builder runs off the graph's lock, on a global queue.
    @discardableResult
    open func add(name: String? = nil, dependencies: [RequestGraphNode], onDependencyFailure: DependencyFailurePolicy? = nil,
                  makeOperation: @escaping @Sendable (RequestGraphResults) throws -> Operation) throws -> RequestGraphNode {
        try addNode(name: name, dependencies: dependencies, policy: onDependencyFailure, work: .builder(makeOperation),
                    host: nil, operation: nil, ownDependencies: [])
    }

    private func addNode(name: String?, dependencies: [RequestGraphNode], policy: DependencyFailurePolicy?,
                         work: RequestGraphState.Work, host: String?, operation: Operation?,
                         ownDependencies: [ObjectIdentifier]) throws -> RequestGraphNode {
        let graph = ObjectIdentifier(self)
        for dependency in dependencies where dependency.graph != graph { throw RequestGraphError.foreignNode(dependency) }
        let (node, actions) = try core.withLock { core -> (RequestGraphNode, [RequestGraphState.Action]) in
            guard !core.state.isFinished else { throw RequestGraphError.finished }
            let index = core.state.nodes.count
            let node = RequestGraphNode(name: name ?? "node \(index + 1)", graph: graph, index: index)
            var indexes = dependencies.map(\.index)
            indexes += ownDependencies.compactMap { core.indexOfOperation[$0] }
            var seen = Set<Int>()
            indexes = indexes.filter { seen.insert($0).inserted }
            // Existing nodes whose operations depend on this one: they wait for it too.
            let dependents = operation.map { added in
                core.state.nodes.indices.filter { core.state.nodes[$0].operation?.dependencies.contains { $0 === added } ?? false }
            } ?? []
            if let cycle = core.state.cycle(adding: node.name, dependencies: indexes, dependents: dependents) {
                throw RequestGraphError.cycle(cycle)
            }
            if let operation { core.indexOfOperation[ObjectIdentifier(operation)] = index }
            let actions = core.state.add(node, dependencies: indexes, policy: policy ?? core.policy, work: work, host: host,
                                         dependents: dependents)
            return (node, actions)
        }
        // Synchronously: `progress` counts the node when `add` returns.
        progressQueue.sync { nodeProgress.totalUnitCount += 1 }
        perform(actions)
        return node
    }

    // MARK: - Control

    /// Starts the graph (idempotent): nodes whose dependencies are done go to the queue.
    open func start() {
        // Not after the graph ended (a cancel before start ends it): a span
        // begun then would never be ended.
        let first = core.withLock { core -> Bool in
            defer { core.startRequested = true }
            return !core.startRequested && core.report == nil
        }
        guard first else { return }
        // The caller's tracer and context (task-locals: read here, in the caller).
        if let origin = TraceOrigin.current {
            let span = origin.tracer.startSpan(name ?? "RequestGraph", context: origin.context, ofKind: .internal)
            core.withLock { core in
                core.span = span
                core.nodeTrace = origin.under(span.context)
            }
        }
        perform(core.withLock { $0.state.start() })
    }

    /// Running HTTP operations pause (2.x `pause()`); nothing new starts.
    open func pause() {
        perform(core.withLock { $0.state.pause() })
    }

    /// Resumes the paused operations and starts what may start.
    open func resume() {
        perform(core.withLock { $0.state.resume() })
    }

    /// Every unfinished node ends `.cancelled` (or `.skipped`, when a
    /// dependency had already ended unsuccessfully and its policy is `.cancel`).
    open func cancel() {
        perform(core.withLock { $0.state.cancel() })
    }

    /// Whether the graph is paused.
    open var isPaused: Bool { core.withLock { $0.state.isPaused } }

    /// Whether every node has finished and the completion was called.
    open var isFinished: Bool { core.withLock { $0.report != nil } }

    /// totalUnitCount: nodes; completedUnitCount: finished nodes (any outcome).
    open var progress: Progress { nodeProgress }

    /// All nodes' response body bytes so far, as delivered.
    open var countOfBytesReceived: Int64 {
        core.withLock { $0.state.nodes.compactMap(\.operation) }.reduce(0) { total, operation in
            total + ((operation as? URLConnectionOperation)?.countOfBodyBytesReceived ?? 0)
        }
    }

    /// All nodes' request body bytes sent so far.
    open var countOfBytesSent: Int64 {
        core.withLock { $0.state.nodes.compactMap(\.operation) }.reduce(0) { total, operation in
            total + ((operation as? URLConnectionOperation)?.countOfBodyBytesSent ?? 0)
        }
    }

    /// Called once, after every node has finished, on `queue` (nil: the main
    /// queue); at once if the graph has already finished.
    open func setCompletionBlock(queue: DispatchQueue? = nil, _ block: @escaping @Sendable (RequestGraphReport) -> Void) {
        let queue = queue ?? .main
        let report = core.withLock { core -> RequestGraphReport? in
            if core.report == nil { core.completion = (queue, block) }
            return core.report
        }
        if let report { queue.async { block(report) } }
    }

    /// Starts the graph if needed and returns its report; cancelling the Task
    /// cancels the graph (the report then says what each node did).
    public func run() async -> RequestGraphReport {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<RequestGraphReport, Never>) in
                let report = core.withLock { core -> RequestGraphReport? in
                    if core.report == nil { core.waiters.append(continuation) }
                    return core.report
                }
                if let report { return continuation.resume(returning: report) }
                start()
            }
        } onCancel: {
            cancel()
        }
    }
}
