@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// Runs one request's lifecycle for its front-end (an operation or a session
/// task), which holds it by composition. The driver alone owns the lock, the
/// `TransferStateMachine` and every per-request field that goes with it (the
/// current transfer, the output's writer, the retry timer, the final hop's
/// timings); front-ends send it `Event`s through `handle(_:)` and read it
/// through the named queries below. It feeds each event to the machine under
/// the lock and carries out the action that comes back after unlocking.
///
/// The engine is injected (`NetworkEngine.shared` by default), so the
/// driver's tests run it against a fake engine with no socket.
final class RequestDriver: @unchecked Sendable {
    // @unchecked: mutable state is inside `core` (LockedState); `attached` is
    // written once, by `attach`, before the first event.

    /// Everything that changes during the request, behind one lock.
    private struct Core {
        var machine: TransferStateMachine
        /// The transfer of the machine's current hop, once built and registered.
        var transfer: Transfer?
        /// Writes the body off the network thread (nil when it stays in memory).
        var writer: ResponseBodyWriter?

        /// What a request fills in only once it runs, or only when it uses
        /// the feature (timings, budget, timers, spans, interceptor): boxed
        /// and made on the first write, so a queued request's state stays
        /// small (some 240 bytes less per queued operation). Read through the
        /// accessors below, which make no box for a read or for writing nil.
        /// They are spelled out one per field on purpose: a generic accessor
        /// through a key path cost ~2k instructions per request on the
        /// operation settings' box (stop 36), and these run on every request.
        private var lateBox: Late?
        private var late: Late {
            mutating get {
                if let lateBox { return lateBox }
                let made = Late()
                lateBox = made
                return made
            }
        }

        /// What curl measured for the last hop that ended.
        var timings: TransferTimings? {
            get { lateBox?.timings }
            set { if newValue != nil || lateBox != nil { late.timings = newValue } }
        }
        /// The total time budget, if the request has one.
        var budget: ResourceBudget? {
            get { lateBox?.budget }
            set { if newValue != nil || lateBox != nil { late.budget = newValue } }
        }
        /// The request's timers (one mechanism: `Deadlines`), each named by
        /// what it is for — the machine's retry token, the budget's run — and
        /// cancelled as soon as that stops being current.
        var retryTimer: (token: UInt64, timer: Deadlines.Token)? {
            get { lateBox?.retryTimer }
            set { if newValue != nil || lateBox != nil { late.retryTimer = newValue } }
        }
        var budgetTimer: (run: UInt64, timer: Deadlines.Token)? {
            get { lateBox?.budgetTimer }
            set { if newValue != nil || lateBox != nil { late.budgetTimer = newValue } }
        }
        /// The spans of the request's attempts, when a tracer is active.
        var spans: RequestSpans {
            get { lateBox?.spans ?? RequestSpans() }
            set { if !newValue.isEmpty || lateBox != nil { late.spans = newValue } }
        }
        /// The request interceptor, set when the request starts (the machine
        /// only knows there is one).
        var interceptor: (any RequestInterceptor)? {
            get { lateBox?.interceptor }
            set { if newValue != nil || lateBox != nil { late.interceptor = newValue } }
        }
        init(machine: TransferStateMachine) { self.machine = machine }

        /// A session task's response decision, download file and resume
        /// data, boxed and made on first use: operations never use them, and
        /// a finished operation keeps its `Core` for as long as it lives.
        lazy var taskOutputBox = TaskOutputBox()
        var taskOutput: SessionTaskOutput {
            mutating get { taskOutputBox.value }
            set { taskOutputBox.value = newValue }
        }
        /// The front-end while the request is in flight or effects are left
        /// to reach it (see `attached`).
        var frontend: (any RequestFrontend)?
        /// Effects decided under the lock and not yet run (see `drain`).
        fileprivate var effects: [Effect] = []
        /// A thread is running effects.
        var draining = false

        /// The queued effects, when the caller becomes the drainer (nil: a
        /// drain is under way and will run them).
        fileprivate mutating func takeEffectsToDrain() -> [Effect]? {
            guard !draining, !effects.isEmpty else { return nil }
            draining = true
            // Taken by swapping: returning the array and then emptying it
            // would copy its buffer on every event.
            var taken: [Effect] = []
            swap(&taken, &effects)
            return taken
        }

        /// Whether the front-end must now start being held: the request is
        /// in flight or has effects to run, and is not over. Before it
        /// first goes in flight only the front-end's own calls reach the
        /// driver (no transfer, timer or writer of its own acts yet), and
        /// after it is over nothing reaches the front-end: so when this is
        /// true the front-end is alive, and only then is `attached` read
        /// (loading it retains it).
        var mustHoldFrontend: Bool {
            frontend == nil && machine.phase != .finished && (machine.isInFlight || !effects.isEmpty)
        }

        /// Once the request is not in flight and no effect is left: lets
        /// the front-end go, and the storage the effects array kept for the
        /// next event (see `drain`).
        mutating func settleIfIdle() {
            guard !draining, effects.isEmpty, !machine.isInFlight else { return }
            frontend = nil
            effects = []
        }
    }

    /// See `Core.taskOutput`.
    private final class TaskOutputBox {
        var value = SessionTaskOutput()
    }

    /// See `Core.lateBox`. Only touched under the driver's lock, through its `Core`.
    private final class Late {
        var timings: TransferTimings?
        var budget: ResourceBudget?
        var retryTimer: (token: UInt64, timer: Deadlines.Token)?
        var budgetTimer: (run: UInt64, timer: Deadlines.Token)?
        var spans = RequestSpans()
        var interceptor: (any RequestInterceptor)?
    }

    /// What front-ends (and the driver's own reports) tell the request.
    enum Event {
        /// An operation's `start()`: `output` is the stream the body goes to
        /// (nil: memory); `cancelled` says the operation already counts itself cancelled.
        case start(URLRequest, output: OutputStream?, retry: TransferStateMachine.RetryPlan?, budget: ResourceBudget?, cancelled: Bool,
                   interception: InterceptionPlan? = nil)
        /// A task's `resume()`: starts it the first time (cancelled at once when
        /// its session did not admit it, failed at once with `refusal` when the
        /// request cannot be sent as made), lets a suspended one continue later.
        case resumeTask(URLRequest, bodyInMemory: Bool, retry: TransferStateMachine.RetryPlan?, budget: ResourceBudget?, admitted: Bool,
                        interception: InterceptionPlan? = nil, refusal: NSError? = nil)
        /// A task's `suspend()`, only while it runs.
        case suspendTask
        /// An operation's `cancel()`.
        case cancel(URLRequest)
        /// A task's `cancel()`: one never resumed completes now.
        case cancelTask(URLRequest, bodyInMemory: Bool)
        case pause
        /// Continues a paused operation with `request` (its pause may have added `Range`).
        case resume(URLRequest, output: OutputStream?)
        /// The request fails with this error, whatever it is doing (a deadline,
        /// an output that refused bytes, a download file that could not be made).
        case fail(NSError)
        case redirectDecided(token: UInt64, URLRequest?)
        case challengeAnswered(token: UInt64, TransferStateMachine.ChallengeAnswer)
        /// The interceptor's answers (a stale token is ignored).
        case adapted(token: UInt64, Result<URLRequest, NSError>)
        case retryDecided(token: UInt64, TransferStateMachine.RetrierDecision)
        /// Completion work has run: the request is over.
        case completionFinished
        /// An archived operation comes back finished with this outcome.
        case restoreFinished(TransferStateMachine.Outcome)

        // Reported by the driver's own effects:
        case cacheLookupFinished(token: UInt64, CacheRules.Plan)
        case transferCouldNotStart(tag: UInt64, NSError)
        case transferCompleted(tag: UInt64, ReceivedResponse?, NSError?, TransferTimings?)
        case retryDue(token: UInt64)
        /// The budget's timer for `run` fired.
        case budgetSpent(run: UInt64)
    }

    /// A session task's state around one event.
    struct TaskTransition {
        let before: URLSessionTask.State
        let after: URLSessionTask.State
    }

    private let core: LockedState<Core>
    let engine: any TransferEngine
    /// The front-end, as `attach` gave it: never retained by this reference,
    /// only read to start holding it (`Core.frontend`) when one of its own
    /// calls puts the request in flight or queues effects (see
    /// `Core.mustHoldFrontend`). Held strongly until the request is over, as
    /// NSURLConnection held its delegate: an operation started and then let
    /// go still finishes. Not `weak`: a weak reference moves an object's
    /// reference counts to a side table, which makes every retain of the
    /// operation by its `OperationQueue` slower (~6 % of a cache hit).
    private unowned(unsafe) var attached: (any RequestFrontend)?

    /// The front-end while the request is in flight (nil before, and after
    /// it is over).
    var frontend: (any RequestFrontend)? { core.withLock { $0.frontend } }

    /// The engine requests run on unless a test injects another: the one
    /// place the library reads `NetworkEngine.shared`.
    static var defaultEngine: any TransferEngine { NetworkEngine.shared }

    init(configuration: TransferStateMachine.Configuration = TransferStateMachine.Configuration(),
         engine: any TransferEngine = RequestDriver.defaultEngine) {
        core = LockedState(Core(machine: TransferStateMachine(configuration: configuration)))
        self.engine = engine
    }

    /// Connects the front-end (once, from its initialiser, before any event).
    func attach(_ frontend: any RequestFrontend) {
        precondition(attached == nil, "RequestDriver attached twice")
        attached = frontend
    }

    // MARK: - Events

    /// Runs `event` against the machine under the lock and queues what it
    /// calls for — timers, the phase change's announcement, an abort, the
    /// machine's action — as effects, which run after unlocking (see
    /// `drain`). Returns the phase change, decided under the lock.
    /// `taskStateChange` sees a session task's state before and after the
    /// event while the lock is held, so notifications of racing
    /// resume/suspend calls are queued in the order they took effect (it must
    /// only enqueue).
    @discardableResult
    func handle(_ event: Event, taskStateChange: ((TaskTransition) -> Void)? = nil) -> PhaseChange {
        let (change, batch) = core.withLock { core -> (PhaseChange, [Effect]?) in
            let before = core.machine.phase
            let taskBefore = taskStateChange == nil ? nil : core.machine.taskState
            let action = apply(event, to: &core)
            if let taskStateChange, let taskBefore { taskStateChange(TaskTransition(before: taskBefore, after: core.machine.taskState)) }
            let change = PhaseChange(before: before, after: core.machine.phase)
            if let retry = core.retryTimer, !core.machine.isWaitingToRetry(token: retry.token) {
                core.effects.append(.cancelTimer(retry.timer))
                core.retryTimer = nil
            }
            if core.machine.phase != before, var budget = core.budget {
                switch budget.phaseChanged(from: before, to: core.machine.phase, now: DispatchTime.now().uptimeNanoseconds) {
                case .none: break
                case .arm(let run, let delay): core.effects.append(.armBudget(run: run, delay: delay))
                case .disarm:
                    if let running = core.budgetTimer { core.effects.append(.cancelTimer(running.timer)) }
                    core.budgetTimer = nil
                }
                core.budget = budget
            }
            if change.before != change.after { core.effects.append(.announce(change)) }
            // Only the transfer of the current hop is kept.
            switch action {
            case .abort(let tag), .abortAndDeliver(let tag, _):
                if let transfer = core.transfer, transfer.tag == tag { core.effects.append(.abort(transfer)) }
                core.transfer = nil
            case .suspendTransfer(let tag, let suspended):
                // Submitted under the lock so that racing suspend/resume calls
                // reach the engine in the machine's order.
                if let transfer = core.transfer, transfer.tag == tag { engine.setSuspended(transfer, suspended) }
            default:
                if let transfer = core.transfer, !core.machine.isCurrent(transfer.tag) { core.transfer = nil }
            }
            if case .none = action {} else { core.effects.append(.perform(action)) }
            if core.mustHoldFrontend { core.frontend = attached }
            let batch = core.takeEffectsToDrain()
            core.settleIfIdle()
            return (change, batch)
        }
        if let batch { drain(batch) }
        return change
    }

    /// Queues the delivery of an outcome the machine decided while refusing
    /// a response head (on the engine's thread).
    func deliverRefused(_ outcome: TransferStateMachine.Outcome) {
        let batch = core.withLock { core -> [Effect]? in
            core.effects.append(.perform(.deliver(outcome)))
            return core.takeEffectsToDrain()
        }
        if let batch { drain(batch) }
    }

    // MARK: - The executor

    /// What is done after unlocking, in the order the events decided it.
    fileprivate enum Effect {
        case cancelTimer(Deadlines.Token)
        case armBudget(run: UInt64, delay: TimeInterval)
        case announce(PhaseChange)
        case abort(Transfer)
        case perform(TransferStateMachine.Action)

        /// Where the effect may run. Decided for every effect and every
        /// action of the machine, without a default: a new action does not
        /// compile until someone decides whether it may run on the engine's
        /// thread (the thread every transfer report arrives on).
        var placement: Placement {
            switch self {
            // The timer heap and the engine's command inbox take any thread.
            case .cancelTimer, .armBudget, .abort: return .anyThread
            // The operation's KVO announcement (the queue's own bookkeeping
            // observes it); a task announces nothing.
            case .announce: return .anyThread
            case .perform(let action):
                switch action {
                // Nothing to do here (the engine was told under the lock).
                case .none, .abort, .suspendTransfer: return .anyThread
                // The cache, cookie and credential storages, the caller's body stream.
                case .lookUpCache, .startTransfer: return .offEngineThread
                // The interceptor is user code.
                case .adapt, .askRetrier: return .offEngineThread
                // Closing the output is queued to the writer's queue; the
                // front-end's `outputIsFinal` hands completion work off.
                case .deliver, .abortAndDeliver: return .anyThread
                // The front-end hands the question to its decider's queue
                // (`RequestFrontend.askRedirect`, `askChallenge`).
                case .askRedirect, .askChallenge: return .anyThread
                // A timer on the timer heap.
                case .scheduleRetry: return .anyThread
                }
            }
        }
    }

    /// Where an effect may run (see `Effect.placement`).
    fileprivate enum Placement {
        case anyThread
        /// Storages, streams, files or user code: the engine's thread hands
        /// the rest of the drain to the processing queue (one hop, at most
        /// one per batch).
        case offEngineThread
    }

    /// Runs queued effects until none is left. One thread drains at a time
    /// (whoever queued effects while nobody drained becomes the drainer, and
    /// others only queue), so the effects of one request never run
    /// concurrently and always run in the order the machine decided them —
    /// an announcement of `executing` can never follow that of `finished`, an
    /// abort never precedes the start it stops. An event sent from inside an
    /// effect (a front-end's hook that answers at once) is queued behind it.
    /// The engine's thread hands a drain over to the processing queue when
    /// it reaches an effect that must not run there.
    private func drain(_ first: consuming [Effect]) {
        var batch = first
        while true {
            for index in batch.indices {
                if case .offEngineThread = batch[index].placement, engine.isReportingThread {
                    let rest = Array(batch[index...])
                    CompletionDefaults.processingQueue.async { self.drain(rest) }
                    return
                }
                run(batch[index])
            }
            batch.removeAll(keepingCapacity: true)
            let more = core.withLock { core -> Bool in
                // The effects queued meanwhile are taken and the emptied
                // array goes back with its storage: the next event's effects
                // need no allocation.
                swap(&batch, &core.effects)
                guard batch.isEmpty else { return true }
                core.draining = false
                core.settleIfIdle()
                return false
            }
            guard more else { return }
        }
    }

    private func run(_ effect: Effect) {
        switch effect {
        case .cancelTimer(let timer): Deadlines.shared.cancel(timer)
        case .armBudget(let run, let delay): armBudget(run: run, delay: delay)
        case .announce(let change): frontend?.announce(change)
        case .abort(let transfer): engine.abort(transfer, reason: .cancelled)
        case .perform(let action): perform(action)
        }
    }

    /// The machine's part of `event`. Under the lock: decides, does no I/O.
    private func apply(_ event: Event, to core: inout Core) -> TransferStateMachine.Action {
        switch event {
        case .start(let request, let output, let retry, let budget, let cancelled, let plan):
            if core.machine.outputIsUnchosen { makeWriterIfNeeded(for: output, in: &core) }
            if core.budget == nil { core.budget = budget }
            if let plan { core.interceptor = plan.interceptor }
            let interception = plan.map { TransferStateMachine.Interception(original: request, acceptableStatusCodes: $0.acceptableStatusCodes) }
            return core.machine.start(request, bodyInMemory: output == nil, retry: retry, cancelled: cancelled, interception: interception)
        case .resumeTask(let request, let bodyInMemory, let retry, let budget, let admitted, let plan, let refusal):
            if core.machine.hasStarted { return core.machine.unsuspend() }
            core.budget = budget
            if !admitted { _ = core.machine.cancel(request) }
            if let plan { core.interceptor = plan.interceptor }
            let interception = plan.map { TransferStateMachine.Interception(original: request, acceptableStatusCodes: $0.acceptableStatusCodes) }
            return core.machine.start(request, bodyInMemory: bodyInMemory, retry: retry, interception: interception, refusal: refusal)
        case .suspendTask:
            guard core.machine.taskState == .running else { return .none }
            return core.machine.suspend()
        case .cancel(let request):
            return core.machine.cancel(request)
        case .cancelTask(let request, let bodyInMemory):
            let action = core.machine.cancel(request)
            // Never resumed: it completes now rather than when resumed.
            if !core.machine.hasStarted { return core.machine.start(request, bodyInMemory: bodyInMemory) }
            return action
        case .pause:
            return core.machine.pause()
        case .resume(let request, let output):
            if core.machine.outputIsUnchosen { makeWriterIfNeeded(for: output, in: &core) }
            return core.machine.resume(with: request, bodyInMemory: output == nil)
        case .fail(let error):
            return core.machine.fail(error)
        case .redirectDecided(let token, let next):
            return core.machine.redirectDecided(token: token, next)
        case .challengeAnswered(let token, let answer):
            return core.machine.challengeAnswered(token: token, answer)
        case .adapted(let token, let result):
            return core.machine.adapted(token: token, result)
        case .retryDecided(let token, let decision):
            return core.machine.retryDecided(token: token, decision)
        case .completionFinished:
            core.machine.completionFinished()
            return .none
        case .restoreFinished(let outcome):
            precondition(!core.machine.hasStarted, "an operation restored from an archive after it started")
            core.machine = TransferStateMachine(restoring: outcome, configuration: core.machine.configuration)
            return .none
        case .cacheLookupFinished(let token, let plan):
            return core.machine.cacheLookupFinished(token: token, plan)
        case .transferCouldNotStart(let tag, let error):
            if !core.spans.isEmpty { core.spans.attemptEnded(tag: tag, status: nil, error: error) }
            return core.machine.transferCouldNotStart(tag, error: error)
        case .transferCompleted(let tag, let response, let error, let timings):
            if core.machine.isCurrent(tag) { core.timings = timings }
            if !core.spans.isEmpty { core.spans.attemptEnded(tag: tag, status: response?.statusCode, error: error) }
            return core.machine.transferCompleted(tag, response: response, error: error)
        case .retryDue(let token):
            return core.machine.retryDue(token: token)
        case .budgetSpent(let run):
            guard var budget = core.budget, budget.expire(run: run) else { return .none }
            core.budget = budget
            core.budgetTimer = nil
            return core.machine.fail(budget.error)
        }
    }

    /// Carries out one action of the machine. Never called with the lock held.
    private func perform(_ action: TransferStateMachine.Action) {
        switch action {
        case .none, .abort, .suspendTransfer:
            break
        case .lookUpCache(let token, let request):
            lookUpCache(token: token, for: request)
        case .startTransfer(let hop):
            startTransfer(hop)
        case .abortAndDeliver(_, let outcome), .deliver(let outcome):
            finishOutput(outcome)
        case .askRedirect(let question):
            RequestLog.redirect(question, to: frontend?.activityLogger)
            frontend?.askRedirect(question)
        case .askChallenge(let question):
            RequestLog.challenge(question, to: frontend?.activityLogger)
            frontend?.askChallenge(question)
        case .scheduleRetry(let wait):
            scheduleRetry(wait)
        case .adapt(let question):
            adapt(question)
        case .askRetrier(let question):
            askRetrier(question)
        }
    }

    // MARK: - Output

    /// The writer for a stream output, made once, before the first hop: the
    /// body stays in memory when there is no stream.
    private func makeWriterIfNeeded(for stream: OutputStream?, in core: inout Core) {
        guard let stream, core.writer == nil else { return }
        core.writer = makeWriter(for: stream)
    }

    private func makeWriter(for stream: OutputStream) -> ResponseBodyWriter {
        ResponseBodyWriter(stream: stream, engine: engine) { [weak self] error in self?.handle(.fail(error)) }
    }

    /// Makes `stream` the output of a request that has not ended (a
    /// streamed response's buffer, installed before the first hop). Returns
    /// false when the outcome was decided meanwhile: the stream is not used.
    func installOutput(_ stream: OutputStream) -> Bool {
        let writer = makeWriter(for: stream)
        return core.withLock { core -> Bool in
            guard core.machine.outcome == nil else { return false }
            core.writer = writer
            return true
        }
    }

    /// Makes `stream`, writing `file`, a download task's output (opened before
    /// its first hop), in one step with the task's record of the file: a
    /// cancel that decided the outcome meanwhile leaves the file unwanted
    /// (the action removes it).
    func installDownloadFile(_ file: URL, stream: OutputStream) -> SessionTaskOutput.Action {
        let writer = makeWriter(for: stream)
        return core.withLock { core -> SessionTaskOutput.Action in
            let installed = core.machine.outcome == nil
            if installed { core.writer = writer }
            return core.taskOutput.handle(.fileOpened(file, installed: installed))
        }
    }

    /// Moves the output from memory to `stream` mid-transfer (a data task that
    /// became a download, writing `file`): the body kept so far is written
    /// first, the rest is forwarded. Returns false when the outcome was
    /// decided meanwhile (the end then writes the body to `file` itself).
    func divertOutput(to stream: OutputStream, file: URL? = nil) -> Bool {
        let writer = makeWriter(for: stream)
        return core.withLock { core -> Bool in
            if let file { _ = core.taskOutput.handle(.diverted(to: file)) }
            guard core.machine.outcome == nil else { return false }
            core.writer = writer
            if let kept = core.machine.divertOutput(), !kept.isEmpty {
                kept.withUnsafeBytes { writer.enqueue($0) }
            }
            return true
        }
    }

    /// The writer, if the body goes to one.
    var writer: ResponseBodyWriter? { core.withLock { $0.writer } }

    // MARK: - A session task's output

    /// Feeds a session task's output event (see `SessionTaskOutput`) under
    /// the lock; the caller carries out the action after it.
    func handle(_ event: SessionTaskOutput.Event) -> SessionTaskOutput.Action {
        core.withLock { $0.taskOutput.handle(event) }
    }

    /// The download file's state.
    var taskOutputFile: SessionTaskOutput.File { core.withLock { $0.taskOutput.file } }

    /// Whether body pieces go to a data task's did-receive-data call.
    var deliversDataToDelegate: Bool { core.withLock { $0.taskOutput.decision.deliversData } }

    /// Whether a data task's delegate made it a download.
    var becameDownload: Bool { core.withLock { $0.taskOutput.decision.becameDownload } }

    // MARK: - Queries

    var phase: TransferStateMachine.Phase { core.withLock { $0.machine.phase } }
    /// The last question token the machine handed out (tests answer every one of them late).
    var lastToken: UInt64 { core.withLock { $0.machine.nextToken } }
    var taskState: URLSessionTask.State { core.withLock { $0.machine.taskState } }
    /// The response to show now (the current hop's head, the last one, the outcome's).
    var currentResponse: TransferStateMachine.ResponseValue? { core.withLock { $0.machine.currentResponse } }
    var currentRequest: URLRequest? { core.withLock { $0.machine.currentRequest } }
    /// The outcome once decided (the output may still be closing).
    var outcome: TransferStateMachine.Outcome? { core.withLock { $0.machine.outcome } }
    /// The outcome once the output is final (completion work running or done).
    var finalOutcome: TransferStateMachine.Outcome? { core.withLock { $0.machine.finalOutcome } }
    var entityBytesInOutput: Int64 { core.withLock { $0.machine.entityBytesInOutput } }
    /// See `TransferStateMachine.releaseMemoryBody()`.
    func releaseMemoryBody() { core.withLock { $0.machine.releaseMemoryBody() } }
    /// The head of the entity in the output and its bytes there, in one step.
    var entityInOutput: (head: ReceivedResponse?, bytes: Int64) { core.withLock { $0.machine.entityInOutput } }
    var expectedEntityLength: Int64 { core.withLock { $0.machine.expectedEntityLength } }

    /// The protection space and failure count of the pending challenge with
    /// `token`, and the URL of the request it challenged.
    func pendingChallenge(token: UInt64) -> (space: URLProtectionSpace, failures: Int, url: URL?)? {
        core.withLock { $0.machine.pendingChallenge(token: token) }
    }

    /// The trailer fields of the final response, once the request has an
    /// outcome: empty before that, for an answer from the cache, and for a
    /// response that sent none. Repeated names are joined by ", ".
    var trailerFields: [String: String] {
        guard case .received(let head)? = outcome?.response else { return [:] }
        return head.trailerDictionary
    }

    /// The final hop's metrics once the request's outcome is known.
    var finishedMetrics: TransferMetrics? {
        core.withLock { core in
            guard let outcome = core.machine.outcome, let timings = core.timings else { return nil }
            return TransferMetrics(timings, redirects: outcome.redirects)
        }
    }

    // MARK: - Reports from the transfer (network thread)

    /// The machine's decision on a head of the transfer tagged `tag`.
    func headReceived(_ tag: UInt64, _ response: ReceivedResponse) -> TransferStateMachine.HeadAction {
        core.withLock { $0.machine.headReceived(tag, response) }
    }

    /// Counts a piece of body, first checking that `writer` (if any) has room
    /// and — for an output that may be diverted — looking the writer up in
    /// the same step, so a piece never goes to memory that was already
    /// handed over. A piece for the writer is queued in the same step as it
    /// is counted: a cancel decided on another thread comes either before
    /// both (the machine refuses the piece) or after both (its close writes
    /// the piece), so progress never reports bytes the output did not get
    /// and resume data always covers what progress reported. nil: the writer
    /// is full (pause the transfer).
    func bodyReceived(_ transfer: Transfer, _ bytes: UnsafeRawBufferPointer, divertible: Bool,
                      fixedWriter: ResponseBodyWriter?) -> (ResponseBodyWriter?, TransferStateMachine.BodyAction)? {
        // Full: curl keeps these bytes until the writer has drained.
        if !divertible, let fixedWriter, !fixedWriter.admit(transfer) { return nil }
        return core.withLock { core -> (ResponseBodyWriter?, TransferStateMachine.BodyAction)? in
            let writer = divertible ? core.writer : fixedWriter
            if divertible, let writer, !writer.admit(transfer) { return nil }
            let action = core.machine.bodyReceived(transfer.tag, bytes)
            // Queuing copies the piece and schedules the writer: no I/O here.
            if case .forward = action { writer?.enqueue(bytes) }
            if case .promote(let response, let held, _, let restartOutput) = action, let writer {
                if restartOutput { writer.restart() }
                // A streamed body's caller gets the head before the first byte.
                writer.announceHead(response)
                held.withUnsafeBytes { writer.enqueue($0) }
                writer.enqueue(bytes)
            }
            return (writer, action)
        }
    }

    /// Whether `tag` names the current hop's transfer.
    func isCurrent(_ tag: UInt64) -> Bool { core.withLock { $0.machine.isCurrent(tag) } }

    // MARK: - Steps of the driver's own effects (RequestDriver+….swift)

    /// Registers `transfer` as the hop's and hands it to the engine in one
    /// step, with its suspension: engine commands for it (a cancel's abort, a
    /// suspend) are then always submitted after its start, in the machine's
    /// order. False when the hop is no longer current (a cancel came first).
    func register(_ transfer: Transfer, for tag: UInt64) -> Bool {
        core.withLock { core -> Bool in
            guard core.machine.isCurrent(tag) else { return false }
            core.transfer = transfer
            // Suspension first: a transfer suspended before it starts is held
            // out of curl, so not even its request head is sent.
            if core.machine.isSuspended { engine.setSuspended(transfer, true) }
            engine.start(transfer)
            return true
        }
    }

    /// The interceptor the request started with.
    var interceptor: (any RequestInterceptor)? { core.withLock { $0.interceptor } }

    /// Whether a retry timer (the policy's or the interceptor's) is being waited for.
    var isWaitingToRetry: Bool { core.withLock { $0.machine.isWaitingToRetry } }

    /// The policy of the retry being waited for.
    var retryPolicy: RetryPolicy? { core.withLock { $0.machine.pendingRetryPolicy } }

    /// Keeps the timer of the retry named `token`; false when the machine no
    /// longer waits for it.
    func keepRetryTimer(_ timer: Deadlines.Token, token: UInt64) -> Bool {
        core.withLock { core -> Bool in
            guard core.machine.isWaitingToRetry(token: token) else { return false }
            core.retryTimer = (token, timer)
            return true
        }
    }

    /// Sets the budget's timer for `run`, unless the run ended meanwhile.
    private func armBudget(run: UInt64, delay: TimeInterval) {
        let timer = Deadlines.shared.add(at: .now() + delay) { [weak self] in self?.handle(.budgetSpent(run: run)) }
        let kept = core.withLock { core -> Bool in
            guard core.budget?.isCurrent(run: run) == true else { return false }
            core.budgetTimer = (run, timer)
            return true
        }
        if !kept { Deadlines.shared.cancel(timer) }
    }

    /// Tells the machine the output is final; returns the final hop's
    /// timings and the spans left to end (every one, the request is over).
    func markOutputFinished(_ outcome: TransferStateMachine.Outcome) -> (TransferTimings?, [RequestSpans.Attempt]) {
        core.withLock { core -> (TransferTimings?, [RequestSpans.Attempt]) in
            core.machine.outputFinished(outcome)
            return (core.timings, core.spans.isEmpty ? [] : core.spans.close(error: outcome.error))
        }
    }

    // MARK: - Spans

    /// Opens the span of the attempt `tag` is about to send (see
    /// `RequestTracing`), unless the request is over.
    func openSpan(for request: inout URLRequest, tag: UInt64, origin: TraceOrigin) {
        let resendCount = core.withLock { $0.spans.started }
        let span = RequestTracing.startAttempt(of: &request, origin: origin, resendCount: resendCount)
        if !core.withLock({ $0.spans.opened(span, tag: tag) }) { span.end() }
    }

    /// Ends the spans of attempts that have ended (off the lock; the caller
    /// is not on the network thread).
    func endSpansOfEndedAttempts() {
        let ended = core.withLock { $0.spans.isEmpty ? [] : $0.spans.takeEnded() }
        if !ended.isEmpty { RequestTracing.end(ended) }
    }
}
