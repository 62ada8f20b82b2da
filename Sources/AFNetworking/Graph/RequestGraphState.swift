import Foundation

/// A graph's nodes and what may run, as a value: each event returns the
/// actions the graph carries out after its lock. No I/O, no user code here
/// (unit-tested alone); the graph asks operations their host, success and
/// finish outside and reports them as events.
struct RequestGraphState {
    /// What a node runs: an operation given to `add`, or a builder that makes
    /// one from its dependencies' results.
    enum Work {
        case operation(Operation)
        case builder(@Sendable (RequestGraphResults) throws -> Operation)
    }

    enum Phase {
        /// Dependencies still running (or the graph not started).
        case waiting
        /// Its builder is running (counts as running).
        case building
        /// Built, for a host at its cap: starts when one of that host's
        /// requests ends (counts as running, not against the host).
        case built(Operation, host: String?)
        /// Running in the queue; `host` counts against the per-host cap.
        case running(Operation, host: String?)
        /// Its outcome is decided (skipped or cancelled before it started) and
        /// its cancelled operation was handed to the queue to finish.
        case settling(Operation, RequestGraphNodeOutcome)
        /// Done.
        case done(RequestGraphNodeOutcome)
    }

    struct Node {
        let node: RequestGraphNode
        var dependencies: [Int]
        let policy: DependencyFailurePolicy
        let work: Work
        /// For an operation node: its host (nil: none or not a request).
        let host: String?
        var phase: Phase = .waiting
        /// What a builder returned, kept once the node is done: its
        /// dependents' builders read it, and the graph's byte counts sum it.
        var built: Operation?
        /// The operation once there is one (given, or built), also after it finished.
        var operation: Operation? {
            switch phase {
            case .running(let operation, _), .settling(let operation, _), .built(let operation, _): return operation
            default:
                if case .operation(let operation) = work { return operation }
                return built
            }
        }
        var outcome: RequestGraphNodeOutcome? {
            switch phase {
            case .settling(_, let outcome), .done(let outcome): return outcome
            default: return nil
            }
        }
        var isDone: Bool {
            if case .done = phase { return true }
            return false
        }
        var isRunning: Bool {
            switch phase {
            case .building, .built, .running: return true
            default: return false
            }
        }
    }

    /// What the graph does after an event, in order.
    enum Action {
        /// Add the operation to the queue (it may start).
        case enqueue(Int, Operation)
        /// Run the builder (off the lock), then report `built`.
        case build(Int, @Sendable (RequestGraphResults) throws -> Operation, RequestGraphResults)
        /// Cancel the operation and add it to the queue, so it finishes (its
        /// failure block runs) without sending anything.
        case cancelAndSettle(Int, Operation)
        /// Cancel a running operation.
        case cancel(Operation)
        case pause(Operation)
        case resume(Operation)
        /// A node is done: progress moves on.
        case nodeDone
        /// Every node is done: call the completion with this report.
        case complete(RequestGraphReport)
    }

    private(set) var nodes: [Node] = []
    private(set) var isStarted = false
    private(set) var isPaused = false
    private(set) var isCancelled = false
    private(set) var isFinished = false
    var maxConcurrent = 6
    var maxPerHost = 0

    var runningCount: Int { nodes.lazy.filter(\.isRunning).count }

    /// The operations in the queue now (what a graph-wide pause or resume acts on).
    var queuedOperations: [Operation] {
        nodes.compactMap { node in
            if case .running(let operation, _) = node.phase { return operation }
            return nil
        }
    }

    // MARK: - Events

    /// Adds a node whose dependencies are existing indexes. `dependents`:
    /// existing nodes whose operations have an `Operation` dependency on this
    /// one's — those not started yet wait for it as a graph dependency too
    /// (else one could take a slot in the queue waiting for a node the cap
    /// keeps from starting).
    mutating func add(_ node: RequestGraphNode, dependencies: [Int], policy: DependencyFailurePolicy, work: Work, host: String?,
                      dependents: [Int] = []) -> [Action] {
        precondition(!isFinished, "checked by the graph before adding")
        precondition(dependencies.allSatisfy { $0 < nodes.count }, "dependencies are earlier nodes")
        precondition(cycle(adding: node.name, dependencies: dependencies, dependents: dependents) == nil, "checked by the graph")
        let index = nodes.count
        nodes.append(Node(node: node, dependencies: dependencies, policy: policy, work: work, host: host))
        for dependent in dependents {
            if case .waiting = nodes[dependent].phase { nodes[dependent].dependencies.append(index) }
        }
        if isCancelled { return settleUnstarted(index: nodes.count - 1, decided: nodes.map(\.outcome)) + finishIfDone() }
        return schedule()
    }

    mutating func start() -> [Action] {
        guard !isStarted else { return [] }
        isStarted = true
        return schedule() + finishIfDone()
    }

    /// A builder returned `operation` or threw.
    mutating func built(_ index: Int, _ result: Result<Operation, Error>, host: String?) -> [Action] {
        guard case .building = nodes[index].phase else { return [] }
        switch result {
        case .failure(let error):
            // A builder the graph's cancel reached while it ran ends cancelled.
            nodes[index].phase = .done(isCancelled ? .cancelled : .failed(error))
            return [.nodeDone] + schedule() + finishIfDone()
        case .success(let operation):
            nodes[index].built = operation
            if isCancelled {
                nodes[index].phase = .settling(operation, .cancelled)
                return [.cancelAndSettle(index, operation)]
            }
            // Paused: nothing new starts; `resume()` schedules it with the
            // others built meanwhile.
            guard hostHasRoom(host), !isPaused else {
                nodes[index].phase = .built(operation, host: host)
                return []
            }
            nodes[index].phase = .running(operation, host: host)
            return [.enqueue(index, operation)]
        }
    }

    /// A node's operation finished; `outcome` is what it did.
    mutating func operationFinished(_ index: Int, outcome: RequestGraphNodeOutcome) -> [Action] {
        switch nodes[index].phase {
        case .running:
            // What the operation did, also when the graph was cancelled
            // meanwhile: a request the cancel reached ends cancelled, one
            // that had already succeeded stays a success.
            nodes[index].phase = .done(outcome)
        case .settling(_, let decided):
            nodes[index].phase = .done(decided)
        case .waiting, .building, .built, .done:
            // An operation finished outside the graph's schedule (cancelled and
            // started by someone else): nothing to account for here.
            return []
        }
        return [.nodeDone] + schedule() + finishIfDone()
    }

    mutating func pause() -> [Action] {
        guard !isPaused, !isCancelled, !isFinished else { return [] }
        isPaused = true
        return nodes.compactMap { node in
            if case .running(let operation, _) = node.phase { return .pause(operation) }
            return nil
        }
    }

    mutating func resume() -> [Action] {
        guard isPaused else { return [] }
        isPaused = false
        let resumed: [Action] = nodes.compactMap { node in
            if case .running(let operation, _) = node.phase { return .resume(operation) }
            return nil
        }
        return resumed + schedule()
    }

    /// Every unfinished node ends cancelled (or skipped, if a dependency had
    /// already ended unsuccessfully and the node's policy is `.cancel`).
    mutating func cancel() -> [Action] {
        guard !isCancelled, !isFinished else { return [] }
        isCancelled = true
        // What was decided before this cancel: a node's fate must not depend
        // on the order nodes were added (a builder settled earlier in the
        // loop below is ended by this cancel, not a failure of its own).
        let decidedBefore = nodes.map(\.outcome)
        var actions: [Action] = []
        for index in nodes.indices {
            switch nodes[index].phase {
            case .running(let operation, _):
                actions.append(.cancel(operation))
            case .waiting:
                actions += settleUnstarted(index: index, decided: decidedBefore)
            case .built(let operation, _):
                nodes[index].phase = .settling(operation, .cancelled)
                actions.append(.cancelAndSettle(index, operation))
            case .building, .settling, .done:
                break
            }
        }
        // A cancelled graph is over whether or not it was started: its
        // completion runs (once) when its cancelled nodes are done.
        isStarted = true
        return actions + finishIfDone()
    }

    /// The caps changed: start what now may.
    mutating func rescheduled() -> [Action] { schedule() }

    /// The names along a cycle the new node would close, starting with it; nil
    /// when there is none. A cycle needs an existing node that depends on the
    /// new one (`dependents`) and that the new one reaches through its
    /// dependencies.
    func cycle(adding name: String, dependencies: [Int], dependents: [Int]) -> [String]? {
        guard !dependents.isEmpty else { return nil }
        let targets = Set(dependents)
        // Depth-first from the new node's dependencies; `parent` rebuilds the path.
        var parent: [Int: Int] = [:]
        var visited = Set<Int>()
        var stack = dependencies.map { ($0, -1) }
        while let (index, from) = stack.popLast() {
            guard visited.insert(index).inserted else { continue }
            parent[index] = from
            if targets.contains(index) {
                var path: [String] = []
                var step = index
                while step != -1 {
                    path.append(nodes[step].node.name)
                    step = parent[step] ?? -1
                }
                return [name] + path.reversed()
            }
            stack += nodes[index].dependencies.map { ($0, index) }
        }
        return nil
    }

    // MARK: - Scheduling

    /// Starts what may start, skips what must be skipped, in order of adding.
    private mutating func schedule() -> [Action] {
        guard isStarted, !isCancelled, !isFinished else { return [] }
        var actions: [Action] = []
        // Built requests first: they were waiting for their host.
        for index in nodes.indices where !isPaused {
            guard case .built(let operation, let host) = nodes[index].phase, hostHasRoom(host) else { continue }
            nodes[index].phase = .running(operation, host: host)
            actions.append(.enqueue(index, operation))
        }
        var changed = true
        // Skipping a node may settle its dependents in the same pass: repeat
        // until nothing changes (bounded by the number of nodes).
        while changed {
            changed = false
            for index in nodes.indices {
                guard case .waiting = nodes[index].phase else { continue }
                let dependencies = nodes[index].dependencies.map { nodes[$0] }
                guard dependencies.allSatisfy(\.isDone) else { continue }
                if nodes[index].policy == .cancel,
                   let failed = dependencies.first(where: { !($0.outcome?.isSuccess ?? false) }) {
                    actions += skip(index, because: failed.node)
                    changed = true
                    continue
                }
                guard !isPaused, runningCount < max(maxConcurrent, 1), hostHasRoom(nodes[index].host) else { continue }
                switch nodes[index].work {
                case .operation(let operation):
                    nodes[index].phase = .running(operation, host: nodes[index].host)
                    actions.append(.enqueue(index, operation))
                case .builder(let builder):
                    nodes[index].phase = .building
                    var finished: [RequestGraphNode: Operation] = [:]
                    for dependency in dependencies { finished[dependency.node] = dependency.operation ?? UnbuiltNodeOperation() }
                    actions.append(.build(index, builder, RequestGraphResults(operations: finished)))
                }
            }
        }
        return actions
    }

    /// The operations of the nodes running now.
    var runningOperations: [Operation] {
        nodes.compactMap { node in
            if case .running(let operation, _) = node.phase { return operation }
            return nil
        }
    }

    private func hostHasRoom(_ host: String?) -> Bool {
        guard maxPerHost > 0, let host else { return true }
        var running = 0
        for node in nodes {
            if case .running(_, let other) = node.phase, other == host { running += 1 }
        }
        return running < maxPerHost
    }

    private mutating func skip(_ index: Int, because dependency: RequestGraphNode) -> [Action] {
        let outcome = RequestGraphNodeOutcome.skipped(because: dependency)
        if case .operation(let operation) = nodes[index].work {
            nodes[index].phase = .settling(operation, outcome)
            return [.cancelAndSettle(index, operation)]
        }
        nodes[index].phase = .done(outcome)
        return [.nodeDone]
    }

    /// A node that never started, when the graph is cancelled. `decided`:
    /// each node's outcome as it stood before the cancel.
    private mutating func settleUnstarted(index: Int, decided: [RequestGraphNodeOutcome?]) -> [Action] {
        // Only a dependency whose unsuccessful outcome was decided before the
        // cancel (ended, or skipped and still settling) makes it skipped;
        // those the same cancel is ending do not.
        let failed = nodes[index].dependencies.first { dependency in
            guard let outcome = decided[dependency] else { return false }
            return !outcome.isSuccess
        }
        let outcome: RequestGraphNodeOutcome = nodes[index].policy == .cancel && failed != nil
            ? .skipped(because: nodes[failed!].node) : .cancelled
        if case .operation(let operation) = nodes[index].work {
            nodes[index].phase = .settling(operation, outcome)
            return [.cancelAndSettle(index, operation)]
        }
        nodes[index].phase = .done(outcome)
        return [.nodeDone]
    }

    private mutating func finishIfDone() -> [Action] {
        guard isStarted, !isFinished, nodes.allSatisfy(\.isDone) else { return [] }
        isFinished = true
        var outcomes: [RequestGraphNode: RequestGraphNodeOutcome] = [:]
        for node in nodes { if case .done(let outcome) = node.phase { outcomes[node.node] = outcome } }
        return [.complete(RequestGraphReport(outcomes: outcomes))]
    }
}
