@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The lifecycle of one request as AFNetworking runs it — waiting, consulting
/// the cache, a transfer in flight, waiting for a redirect or challenge
/// decision, paused, delivering, finished — as one value: events go in, the
/// actions to perform come out. It does no I/O, takes no lock and knows
/// nothing of `Operation` or `URLSessionTask`: its `RequestDriver` keeps it behind a
/// lock, feeds it events, and performs the returned actions after unlocking.
///
/// Every transfer it asks for carries a tag and every question a token; a
/// report or answer that is no longer current (cancelled, paused,
/// superseded) is a named race ignored here, once, rather than by guards in
/// each handler, and one that cannot happen — a tag or token never handed
/// out, a report after the newest ended transfer's end, an answer of the wrong kind —
/// traps with the event and the state (`TransferStateMachine+Unexpected.swift`).
struct TransferStateMachine {
    /// Fixed for the machine's life.
    struct Configuration {
        /// Whether `URLCache` rules apply (the driver has a cache to consult).
        var consultsCache = true
        /// CFNetwork's limit; the next redirect fails with NSURLErrorHTTPTooManyRedirects.
        var maximumRedirects = 16
        /// Answers to challenges of one hop chain before the 401/407 is delivered
        /// as the response, so a block that keeps offering a wrong credential cannot loop.
        var maximumAuthenticationAttempts = 8
        /// Bodies of responses that may be followed up (redirects, challenges)
        /// are small in practice; past this, on a stream output, a redirect's
        /// or challenge's body is cut rather than held without bound (and the
        /// request fails if that response is then delivered: the body would
        /// be short), and an answer held for a retry becomes the output (a
        /// memory output holds any of them whole: delivered, it would be in
        /// memory anyway).
        var heldBodyLimit = 1 << 20
    }

    /// Where the body of a response goes.
    enum BodyRoute: Equatable {
        /// The entity: into the output (memory here, or the driver's stream).
        case output
        /// A redirect's or a challenge's body, held until the follow-up is decided.
        case held
        /// An error answer to a resumed request: kept apart so the part of the
        /// entity already in the output stays intact.
        case aside
        /// Not part of anything (a 304 confirming a cached entry, a 416 for a
        /// body that is already complete).
        case discard
        /// An answer the retry policy may send again (a 503, a 429): its body
        /// waits apart until that is decided.
        case provisional
    }

    /// One request on the wire.
    struct Hop {
        /// Names this hop's transfer (`TransferOptions.tag`).
        let tag: UInt64
        /// The request as decided here (cookies are added by the driver).
        let request: URLRequest
        let credentials: TransferCredentials?
        /// The `Range: bytes=N-` offset this hop asks for, if it resumes.
        let resumeOffset: Int64?
        /// Whether it asks the server to confirm `Journey.revalidating`.
        let revalidates: Bool
        /// The latest response head of this hop.
        var response: ReceivedResponse?
        var route: BodyRoute = .output
        /// The held or aside body.
        var heldBody = Data()
        /// Whether `heldBody` was cut at `heldBodyLimit` (a stream output's
        /// redirect or challenge body): delivered, it would be silently short.
        var heldBodyCut = false
        /// A resumed 206 sent bytes past the end its `Content-Range` named.
        var overranRange = false
    }

    /// A journey's challenge credentials, immutable (a change makes a new
    /// record, so journeys stay values).
    // @unchecked: immutable after init; URLCredential and URLProtectionSpace are immutable objects.
    final class CredentialRecord: @unchecked Sendable {
        let onTrial: CredentialOnTrial?
        let accepted: [(credential: URLCredential, space: URLProtectionSpace)]
        init(onTrial: CredentialOnTrial?, accepted: [(credential: URLCredential, space: URLProtectionSpace)]) {
            self.onTrial = onTrial
            self.accepted = accepted
        }
    }

    /// A credential sent in answer to a challenge, not yet known to work.
    struct CredentialOnTrial {
        let credential: URLCredential
        let space: URLProtectionSpace
        /// The challenge's status: a head with another one shows it was taken.
        let challengeStatus: Int
    }

    /// What carries over from hop to hop until the request ends or pauses.
    struct Journey {
        /// The request the journey started from (the driver's `request`, as
        /// the interceptor adapted it when there is one).
        var request: URLRequest
        /// The refused answer a retry is waiting after, whose `Set-Cookie`
        /// the next hop stores first (as a redirect's or a challenge's): a
        /// rate limiter's or load balancer's cookie must reach the retry.
        var cookiesBeforeRetry: (response: ReceivedResponse, request: URLRequest)?
        var redirects = 0
        var authenticationFailures = 0
        /// The credentials answered to challenges (nil for almost every
        /// request: a nil reference costs a copied journey nothing).
        var credentialRecord: CredentialRecord?
        /// A credential answered to a challenge, to be remembered (its
        /// persistence allows it) once a head shows the server took it.
        var credentialOnTrial: CredentialOnTrial? {
            get { credentialRecord?.onTrial }
            set { credentialRecord = CredentialRecord(onTrial: newValue, accepted: acceptedCredentials) }
        }
        /// Credentials the server took: the driver stores them when the request ends.
        var acceptedCredentials: [(credential: URLCredential, space: URLProtectionSpace)] {
            get { credentialRecord?.accepted ?? [] }
            set { credentialRecord = CredentialRecord(onTrial: credentialOnTrial, accepted: newValue) }
        }
        /// The cached entry a conditional hop is revalidating.
        var revalidating: CachedURLResponse?
        var output: Output
        /// What `response` shows between hops.
        var lastResponse: ResponseValue?
        /// The retry policy and the attempts made, when retries are wanted.
        var retry: RetryPlan?
        /// What the request interceptor needs of the journey, when there is one.
        var interception: Interception?
    }

    /// A journey's retries: the policy and what has been spent of it.
    struct RetryPlan: Equatable {
        let policy: RetryPolicy
        /// Attempts made so far (the first one included).
        var attempts = 1
        /// Whether the request's body can be sent again (no stream, or one that copies itself).
        let bodyCanBeResent: Bool
    }

    /// The body written so far, across pauses.
    struct Output {
        /// The body itself when the driver keeps it in memory; nil when it
        /// streams the body to an `OutputStream` (then only counted here).
        var memory: Data?
        /// Bytes of the current entity in the output, a resume offset included.
        var entityBytes: Int64 = 0
        /// The entity's full length (Content-Length, or Content-Range's total), -1 when unknown.
        var expectedLength: Int64 = -1
        /// The response that stands if a resumed request finds the body complete (416).
        var responseBeforeResume: ReceivedResponse?
        /// Where a resumed 206's range ends (its last byte + 1): the entity
        /// must reach exactly there, whatever the body's own framing says.
        var rangeEnd: Int64?
        /// The driver's stream still holds bytes of an entity this one
        /// replaces (a resume without `Range`): the next entity's head tells
        /// it to start over, before its first byte.
        var streamHoldsStaleBytes = false
        /// The head of the entity whose bytes these are, once one arrived
        /// (nil before, and from a restart until the next one): what a pause
        /// asks the rest of. Until then a request's `Range` is left as it is
        /// (a restart-proof download's stream already holds the bytes before it).
        var entityHead: ReceivedResponse?

        init(inMemory: Bool) { memory = inMemory ? Data() : nil }
    }

    /// A follow-up question the driver must get answered.
    struct FollowUp {
        enum Kind {
            case redirect(proposed: URLRequest)
            case challenge(ChallengeOffer, URLProtectionSpace, forProxy: Bool)
        }
        let token: UInt64
        let kind: Kind
        /// The 3xx / 401 / 407 and its body.
        let response: ReceivedResponse
        let body: Data
        /// The hop that got it (its request is what a retry repeats).
        let hop: Hop
    }

    enum State {
        /// Not started. `cancelled`: cancel() came first; start() ends it.
        case waiting(cancelled: Bool)
        /// Paused before it ever ran; `started` once something asked it to start.
        case pausedBeforeStart(started: Bool)
        /// The cache is asked; `cacheLookupFinished(token:_:)` answers.
        indirect case lookingUpCache(Journey, token: UInt64)
        indirect case running(Journey, Hop)
        indirect case awaitingFollowUp(Journey, FollowUp)
        /// Paused after it ran: no transfer; `resume(with:)` continues the output.
        indirect case paused(Journey)
        /// A retry is scheduled; `retryDue(token:)` sends the request again.
        indirect case waitingToRetry(Journey, token: UInt64)
        /// The interceptor adapts the next attempt's request (`adapted(token:_:)`
        /// answers); then the cache is consulted or the hop starts at once.
        indirect case adapting(Journey, Attempt)
        /// The interceptor decides about a failed attempt (`retryDecided(token:_:)`
        /// answers); `failed` is what is delivered if it is not retried.
        indirect case decidingRetry(Journey, token: UInt64, failed: Outcome)
        /// The outcome is decided; the driver finishes the output (closing a
        /// stream, moving a file), then reports `outputFinished`.
        indirect case delivering(Outcome)
        /// The output is final; the driver runs completion work (serializer,
        /// blocks), then reports `completionFinished`.
        indirect case completing(Outcome)
        indirect case finished(Outcome)
        /// Only while an event function rewrites the state in place (keeps
        /// the body `Data` uniquely referenced, so appends never copy it).
        case modifying
    }

    /// The coarse lifecycle front-ends announce (KVO for operations, `state` for tasks).
    enum Phase: Equatable {
        case ready, executing, paused, finished
    }

    var state: State
    let configuration: Configuration
    /// The last transfer tag handed out (tags count up from 1).
    private(set) var nextTag: UInt64 = 0
    /// The last question token handed out (tokens count up from 1).
    private(set) var nextToken: UInt64 = 0
    /// The tag of the last transfer whose end (completed, or could not
    /// start) the machine took: the engine reports nothing after that. (Set
    /// only by those two events, in `TransferStateMachine+Transfer.swift` and
    /// here; an earlier ended transfer's late report is taken for a
    /// superseded one's.)
    var endedTag: UInt64 = 0
    /// The body stream an earlier hop handed to a transfer (consumed by it).
    private var sentBodyStream: ObjectIdentifier?
    /// Whether the data flow is stopped (a session task's `suspend()`); not a
    /// state of its own because a request can be suspended in any state and
    /// carries on from where it was when resumed.
    private(set) var isSuspended = false

    init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        state = .waiting(cancelled: false)
    }

    /// A machine for an outcome restored from an archive (NSSecureCoding).
    init(restoring outcome: Outcome, configuration: Configuration = Configuration()) {
        self.configuration = configuration
        state = .finished(outcome)
    }

    var phase: Phase {
        switch state {
        case .waiting: return .ready
        case .pausedBeforeStart, .paused: return .paused
        case .lookingUpCache, .running, .awaitingFollowUp, .waitingToRetry, .adapting, .decidingRetry, .delivering, .completing:
            return .executing
        case .finished: return .finished
        case .modifying: preconditionFailure("phase read while the state is being modified")
        }
    }

    /// Started and not over, paused included: events may still come from
    /// transfers, timers and writers, and effects must reach the front-end.
    /// Only a front-end's own call puts a request in flight.
    var isInFlight: Bool {
        switch state {
        case .waiting, .pausedBeforeStart, .finished: return false
        case .lookingUpCache, .running, .awaitingFollowUp, .paused, .waitingToRetry, .adapting, .decidingRetry, .delivering, .completing:
            return true
        case .modifying: preconditionFailure("isInFlight read while the state is being modified")
        }
    }

    // MARK: - Starting

    /// The driver's `start()`: `request` is what to send now, `retry` how
    /// failures are retried (nil: never). `cancelled`: the front-end already
    /// counts itself cancelled (`Operation.isCancelled` is set before its
    /// `cancel()` reaches the machine, and a queue may start the operation on
    /// another thread in between): it ends cancelled and nothing is sent.
    /// `refusal`: the request cannot be sent as it was made (a session
    /// configuration's header that cannot be sent); it ends with that error
    /// before the interceptor, the cache or the network sees it. Only session
    /// tasks give one, and they never pause before they start.
    mutating func start(_ request: URLRequest, bodyInMemory: Bool, retry: RetryPlan? = nil, cancelled: Bool = false,
                        interception: Interception? = nil, refusal: NSError? = nil) -> Action {
        switch state {
        case .waiting where cancelled, .pausedBeforeStart where cancelled:
            return deliver(Outcome(failure: Self.cancellationError(for: request), request: request))
        case .waiting(cancelled: true):
            return deliver(Outcome(failure: Self.cancellationError(for: request), request: request))
        case .waiting(cancelled: false):
            if let refusal { return deliver(Outcome(failure: refusal, request: request)) }
            var journey = Journey(request: request, output: Output(inMemory: bodyInMemory))
            journey.retry = retry
            journey.interception = interception
            return begin(journey)
        case .pausedBeforeStart:
            // It runs when resumed; the queue already counts it as started.
            state = .pausedBeforeStart(started: true)
            return .none
        case .lookingUpCache, .running, .awaitingFollowUp, .paused, .waitingToRetry, .adapting, .decidingRetry:
            return tolerate(.redundantCall)
        case .delivering, .completing, .finished:
            return tolerate(.afterOutcome)
        case .modifying:
            preconditionFailure("start() while the state is being modified")
        }
    }

    /// Opens a journey: the interceptor adapts its request first, if there is one.
    private mutating func begin(_ journey: Journey) -> Action {
        if journey.interception != nil { return adapt(journey, consultsCache: true) }
        return beginAdapted(journey)
    }

    /// Opens a journey whose request is final: through the cache when the
    /// request may be answered from it, else straight to the network.
    mutating func beginAdapted(_ journey: Journey) -> Action {
        if configuration.consultsCache && CacheRules.mayConsultCache(for: journey.request) && CacheRules.mayAnswer(into: journey.output) {
            let token = makeToken()
            state = .lookingUpCache(journey, token: token)
            return .lookUpCache(token: token, journey.request)
        }
        return startHop(journey, request: journey.request, credentials: nil, revalidates: false)
    }

    /// What `URLCache` said about the journey's request (the lookup named `token`).
    mutating func cacheLookupFinished(token: UInt64, _ plan: CacheRules.Plan) -> Action {
        guard case .lookingUpCache(var journey, let asked) = state, asked == token else {
            // Cancelled or paused while the cache was consulted: moot.
            return unexpected(.answer(token, .cacheLookup))
        }
        switch plan {
        case .load:
            return startHop(journey, request: journey.request, credentials: nil, revalidates: false)
        case .revalidate(let cached, let conditional):
            journey.revalidating = cached
            return startHop(journey, request: conditional, credentials: nil, revalidates: true)
        case .useCached(let cached):
            return deliver(Outcome(cached: cached, journey: journey))
        case .fail(let error):
            return deliver(Outcome(failure: error, request: journey.request))
        }
    }

    /// A new hop of `journey` and the action that starts its transfer.
    mutating func startHop(_ journey: Journey, request: URLRequest, credentials: TransferCredentials?, revalidates: Bool,
                           after previous: FollowUpEffects = FollowUpEffects()) -> Action {
        var journey = journey
        var previous = previous
        if let refused = journey.cookiesBeforeRetry {
            if previous.storeCookies == nil { previous.storeCookies = refused }
            journey.cookiesBeforeRetry = nil
        }
        nextTag += 1
        let hop = Hop(tag: nextTag, request: request, credentials: credentials,
                      resumeOffset: ResumeRules.offset(of: request).flatMap { $0 > 0 ? $0 : nil }, revalidates: revalidates)
        state = .running(journey, hop)
        var needsFreshBodyStream = false
        if let stream = request.httpBodyStream {
            let identity = ObjectIdentifier(stream)
            needsFreshBodyStream = sentBodyStream == identity
            sentBodyStream = identity
        }
        return .startTransfer(HopStart(tag: hop.tag, request: request, credentials: credentials, effects: previous,
                                       needsFreshBodyStream: needsFreshBodyStream))
    }

    /// The driver could not build or submit the transfer for `tag`.
    mutating func transferCouldNotStart(_ tag: UInt64, error: NSError) -> Action {
        guard case .running(let journey, let hop) = state, hop.tag == tag else { return unexpected(.transferReport(tag)) }
        endedTag = tag
        return offeringToRetrier(deliver(Outcome(failure: error, request: hop.request, journey: journey)), journey: journey, hop: hop)
    }

    /// Whether `tag` names the transfer the machine is waiting for.
    func isCurrent(_ tag: UInt64) -> Bool {
        if case .running(_, let hop) = state { return hop.tag == tag }
        return false
    }

    // MARK: - Cancel, pause, resume

    /// Ends the request with `NSURLErrorCancelled`, whatever it is doing.
    /// `request` names the failing URL when nothing has started yet.
    mutating func cancel(_ request: URLRequest) -> Action {
        switch state {
        case .waiting(cancelled: false):
            state = .waiting(cancelled: true)
            return .none
        case .pausedBeforeStart(started: false):
            // Back to waiting, so its queue starts it and start() ends it.
            state = .waiting(cancelled: true)
            return .none
        case .pausedBeforeStart(started: true):
            // Its queue already started it and waits for it to finish.
            return deliver(Outcome(failure: Self.cancellationError(for: request), request: request))
        case .lookingUpCache(let journey, _), .paused(let journey), .waitingToRetry(let journey, _), .adapting(let journey, _),
             .decidingRetry(let journey, _, _):
            // An answer still to come from the interceptor finds another state: ignored.
            return deliver(Outcome(failure: Self.cancellationError(for: journey.request), request: journey.request, journey: journey))
        case .awaitingFollowUp(let journey, let followUp):
            return deliver(Outcome(failure: Self.cancellationError(for: followUp.hop.request), request: followUp.hop.request,
                                   journey: journey))
        case .running(let journey, let hop):
            // The head of the entity being received stays the response (a
            // download's resume data needs its validator).
            let response = hop.route == .output ? hop.response.map(ResponseValue.received) : nil
            let outcome = Outcome(failure: Self.cancellationError(for: hop.request), response: response, request: hop.request,
                                  journey: journey)
            _ = deliver(outcome)
            return .abortAndDeliver(tag: hop.tag, outcome)
        case .waiting(cancelled: true):
            return tolerate(.redundantCall)
        case .delivering, .completing, .finished:
            return tolerate(.afterOutcome)
        case .modifying:
            preconditionFailure("cancel() while the state is being modified")
        }
    }

    /// The driver's side failed (its output stream refused bytes): the
    /// request ends with `error`, whatever it is doing.
    mutating func fail(_ error: NSError) -> Action {
        switch state {
        case .lookingUpCache(let journey, _), .paused(let journey), .waitingToRetry(let journey, _), .adapting(let journey, _),
             .decidingRetry(let journey, _, _):
            return deliver(Outcome(failure: error, request: journey.request, journey: journey))
        case .awaitingFollowUp(let journey, let followUp):
            return deliver(Outcome(failure: error, request: followUp.hop.request, journey: journey))
        case .running(let journey, let hop):
            let outcome = Outcome(failure: error, response: hop.response.map(ResponseValue.received), request: hop.request, journey: journey)
            _ = deliver(outcome)
            return .abortAndDeliver(tag: hop.tag, outcome)
        case .waiting, .pausedBeforeStart:
            return tolerate(.failureBeforeStart)
        case .delivering, .completing, .finished:
            // A writer's failure or the budget's timer raced the outcome.
            return tolerate(.afterOutcome)
        case .modifying:
            preconditionFailure("fail() while the state is being modified")
        }
    }

    /// Stops the data flow without ending anything (a session task's
    /// `suspend()`): a running transfer keeps its connection and position; a
    /// hop started while suspended starts stopped.
    mutating func suspend() -> Action {
        guard !isSuspended else { return tolerate(.redundantCall) }
        isSuspended = true
        if case .running(_, let hop) = state { return .suspendTransfer(tag: hop.tag, true) }
        return .none
    }

    /// Lets the data flow again after `suspend()`.
    mutating func unsuspend() -> Action {
        guard isSuspended else { return tolerate(.redundantCall) }
        isSuspended = false
        if case .running(_, let hop) = state { return .suspendTransfer(tag: hop.tag, false) }
        return .none
    }

    /// Stops the request and keeps what arrived; `resume(with:)` continues.
    mutating func pause() -> Action {
        switch state {
        case .waiting(cancelled: false):
            state = .pausedBeforeStart(started: false)
            return .none
        case .lookingUpCache(let journey, _), .awaitingFollowUp(let journey, _), .waitingToRetry(let journey, _),
             .adapting(let journey, _), .decidingRetry(let journey, _, _):
            // Resumed, it adapts again (a pending interceptor answer is ignored).
            state = .paused(journey.pausing())
            return .none
        case .running(let journey, let hop):
            state = .paused(journey.pausing(during: hop))
            return .abort(tag: hop.tag)
        case .waiting(cancelled: true), .pausedBeforeStart, .paused:
            return tolerate(.redundantCall)
        case .delivering, .completing, .finished:
            return tolerate(.afterOutcome)
        case .modifying:
            preconditionFailure("pause() while the state is being modified")
        }
    }

    /// Continues a paused request with `request` (the driver's, which its
    /// pause may have rewritten with `Range`). A request paused before it
    /// ever ran goes back to waiting unless something already started it;
    /// then it starts now, its body kept in memory or not as `bodyInMemory` says.
    mutating func resume(with request: URLRequest, bodyInMemory: Bool) -> Action {
        switch state {
        case .pausedBeforeStart(started: false):
            state = .waiting(cancelled: false)
            return .none
        case .pausedBeforeStart(started: true):
            state = .waiting(cancelled: false)
            return start(request, bodyInMemory: bodyInMemory)
        case .paused(let earlier):
            var journey = Journey(request: request, output: earlier.output)
            journey.lastResponse = earlier.lastResponse
            journey.retry = earlier.retry
            // The resumed request (perhaps with Range) is what each attempt adapts now.
            journey.interception = earlier.interception.map { Interception(original: request, acceptableStatusCodes: $0.acceptableStatusCodes,
                                                                           retryCount: $0.retryCount) }
            if ResumeRules.offset(of: request) == nil {
                // Without Range the server sends the entity from its start.
                if journey.output.entityBytes > 0 { journey.output.streamHoldsStaleBytes = true }
                journey.output.restart()
            }
            state = .waiting(cancelled: false)
            return begin(journey)
        case .waiting, .lookingUpCache, .running, .awaitingFollowUp, .waitingToRetry, .adapting, .decidingRetry:
            return tolerate(.redundantCall)
        case .delivering, .completing, .finished:
            return tolerate(.afterOutcome)
        case .modifying:
            preconditionFailure("resume() while the state is being modified")
        }
    }

    /// The head of the entity in the output and its bytes there, while the
    /// request runs or is paused (nil, 0: no head of it has arrived).
    var entityInOutput: (head: ReceivedResponse?, bytes: Int64) {
        guard let output = outputInProgress else { return (nil, 0) }
        return (output.entityHead, output.entityBytes)
    }

    /// The output of a request that runs or is paused (nil before its start
    /// and once its outcome is decided).
    private var outputInProgress: Output? {
        switch state {
        case .running(let journey, _), .awaitingFollowUp(let journey, _), .paused(let journey), .lookingUpCache(let journey, _),
             .waitingToRetry(let journey, _), .adapting(let journey, _), .decidingRetry(let journey, _, _):
            return journey.output
        case .waiting, .pausedBeforeStart, .delivering, .completing, .finished, .modifying:
            return nil
        }
    }

    /// Bytes of the entity in the output (what a ranged resume skips).
    var entityBytesInOutput: Int64 {
        switch state {
        case .delivering(let outcome), .completing(let outcome), .finished(let outcome):
            return outcome.entityBytes
        default:
            return outputInProgress?.entityBytes ?? 0
        }
    }

    // MARK: - Delivering

    /// Moves to `.delivering` and tells the driver to finish the output.
    mutating func deliver(_ outcome: Outcome) -> Action {
        state = .delivering(outcome)
        return .deliver(outcome)
    }

    /// The driver finished the output (possibly turning success into a
    /// failure: a stream that could not be written, a file that could not be
    /// moved). Completion work comes next.
    mutating func outputFinished(_ outcome: Outcome) {
        guard case .delivering = state else {
            preconditionFailure("Invalid state for outputFinished: \(state)")
        }
        state = .completing(outcome)
    }

    /// Completion work has run: the request is over.
    mutating func completionFinished() {
        guard case .completing(let outcome) = state else {
            preconditionFailure("Invalid state for completionFinished: \(state)")
        }
        state = .finished(outcome)
    }

    /// The front-end handed the in-memory body over and offers no way to
    /// read it again (a session task, as URLSession's): the decided outcome
    /// lets it go, so a task kept after its end does not keep its body.
    mutating func releaseMemoryBody() {
        switch state {
        case .completing(var outcome) where outcome.memoryBody != nil:
            outcome.memoryBody = nil
            state = .completing(outcome)
        case .finished(var outcome) where outcome.memoryBody != nil:
            outcome.memoryBody = nil
            state = .finished(outcome)
        default:
            break
        }
    }

    /// The outcome, once decided.
    var outcome: Outcome? {
        switch state {
        case .delivering(let outcome), .completing(let outcome), .finished(let outcome): return outcome
        default: return nil
        }
    }

    /// The outcome once the output is final (completion work running or done).
    var finalOutcome: Outcome? {
        switch state {
        case .completing(let outcome), .finished(let outcome): return outcome
        default: return nil
        }
    }

    /// The policy of the retry being waited for.
    var pendingRetryPolicy: RetryPolicy? {
        if case .waitingToRetry(let journey, _) = state { return journey.retry?.policy }
        return nil
    }

    /// The response to show now: the current hop's head, the last one seen,
    /// or the outcome's.
    var currentResponse: ResponseValue? {
        switch state {
        case .running(let journey, let hop): return hop.response.map(ResponseValue.received) ?? journey.lastResponse
        case .awaitingFollowUp(let journey, let followUp):
            // While a proxy's 407 to CONNECT is being answered, the origin has said nothing yet.
            return followUp.response.isTunnelRefusal ? journey.lastResponse : .received(followUp.response)
        case .lookingUpCache(let journey, _), .paused(let journey), .waitingToRetry(let journey, _), .adapting(let journey, _):
            return journey.lastResponse
        case .decidingRetry(_, _, let failed): return failed.response
        case .delivering(let outcome), .completing(let outcome), .finished(let outcome): return outcome.response
        case .waiting, .pausedBeforeStart, .modifying: return nil
        }
    }

    /// The request on the wire now: the current hop's, the one a follow-up
    /// question is about, or the last one sent.
    var currentRequest: URLRequest? {
        switch state {
        case .running(_, let hop): return hop.request
        case .awaitingFollowUp(_, let followUp): return followUp.hop.request
        case .lookingUpCache(let journey, _), .paused(let journey), .waitingToRetry(let journey, _), .adapting(let journey, _),
             .decidingRetry(let journey, _, _):
            return journey.request
        case .delivering(let outcome), .completing(let outcome), .finished(let outcome): return outcome.finalRequest ?? outcome.originalRequest
        case .waiting, .pausedBeforeStart, .modifying: return nil
        }
    }

    /// The entity's full length as the current response announced it (-1 when unknown).
    var expectedEntityLength: Int64 {
        switch state {
        case .delivering(let outcome), .completing(let outcome), .finished(let outcome):
            return outcome.expectedLength
        default:
            return outputInProgress?.expectedLength ?? -1
        }
    }

    static func cancellationError(for request: URLRequest) -> NSError {
        TransportErrors.make(NSURLErrorCancelled, url: request.url, underlying: nil)
    }

    /// A fresh token for a follow-up question.
    mutating func makeToken() -> UInt64 {
        nextToken += 1
        return nextToken
    }
}

extension TransferStateMachine.Journey {
    /// The journey as a pause leaves it: no hop, its response kept for `response`.
    func pausing(during hop: TransferStateMachine.Hop? = nil) -> Self {
        var paused = self
        if let response = hop?.response, hop?.route == .output { paused.lastResponse = .received(response) }
        paused.revalidating = nil
        return paused
    }
}

extension TransferStateMachine.Output {
    /// The entity starts over from byte 0 (the driver empties a stream).
    mutating func restart() {
        if memory != nil { memory = Data() }
        entityBytes = 0
        entityHead = nil
        rangeEnd = nil
    }

    /// The most a memory output reserves ahead for a length its head
    /// announces: a head can claim any length, and bytes it never sends are
    /// never touched (never resident), but stay within reason.
    static let reservationLimit: Int64 = 32 << 20

    /// The entity's head announced its length (-1: unknown). A memory output
    /// still empty makes room for it at once: one allocation of the right
    /// size instead of a doubling series, each step a copy and a free block
    /// left in the heap.
    mutating func expect(_ length: Int64) {
        expectedLength = length
        guard let memory, memory.isEmpty, length > 0 else { return }
        self.memory = Data(capacity: Int(min(length, Self.reservationLimit)))
    }
}
