@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reports from the current hop's transfer. These run on the network thread
/// (under the driver's lock), so they only decide: no I/O, no user code.
extension TransferStateMachine {
    /// What the driver does with a response head.
    enum HeadAction {
        /// Let the body flow to `route`; `restartOutput` asks the driver to
        /// empty its output stream first (a resumed request answered with the
        /// whole entity).
        case proceed(BodyRoute, restartOutput: Bool)
        /// Refuse the response (the transfer aborts with this error) and
        /// deliver `outcome`.
        case refuse(NSError, Outcome)
        /// A transfer that is no longer current: refuse it.
        case ignore
    }

    /// What the driver does with a piece of body.
    enum BodyAction {
        /// Held or kept here (memory output, held or aside body); nothing to do.
        case kept
        /// Kept in memory as output: report progress.
        case keptWithProgress(Progress)
        /// Output for the driver's stream: write the bytes, then report progress.
        case forward(Progress)
        /// A held answer became the output (too large to hold on a stream
        /// output): announce its head, write the held bytes and then these,
        /// then report progress for both.
        case promote(ReceivedResponse, held: Data, Progress, restartOutput: Bool)
        /// Not current: refuse.
        case refuse
    }

    /// Download progress: this piece, the entity's bytes so far (a resume
    /// offset included) and its full length (-1 when unknown).
    struct Progress: Equatable {
        let bytes: Int
        let total: Int64
        let expected: Int64
    }

    // MARK: - Head

    mutating func headReceived(_ tag: UInt64, _ response: ReceivedResponse) -> HeadAction {
        guard case .running(var journey, var hop) = state, hop.tag == tag else {
            _ = unexpected(.transferReport(tag))
            return .ignore
        }
        state = .modifying
        // A second head of the same hop (curl answering Digest's challenge
        // itself) replaces the first and whatever it held.
        hop.response = response
        hop.heldBody = Data()
        // A head other than the challenge answered shows the credential was
        // taken (curl answering Digest itself reports the challenge's head first).
        if let trial = journey.credentialOnTrial, response.statusCode != trial.challengeStatus {
            journey.acceptedCredentials.append((trial.credential, trial.space))
            journey.credentialOnTrial = nil
        }
        var restartOutput = false
        if mayFollowUp(response, hop: hop) {
            hop.route = .held
        } else if retryPlan(journey, hop: hop, status: response.statusCode) != nil,
                  (RetryRules.retryAfter(in: response) ?? 0) <= (journey.retry?.policy.maximumDelay ?? 0) {
            // Decided on the head, Retry-After included, so an answer that will
            // not be retried goes to the output whole rather than held.
            hop.route = .provisional
        } else if hop.revalidates && response.statusCode == 304 {
            hop.route = .discard
        } else if let offset = hop.resumeOffset {
            switch ResumeRules.decide(statusCode: response.statusCode, contentRange: response.value(forField: "content-range"), offset: offset,
                                      ifRange: hop.request.value(forHTTPHeaderField: "If-Range"),
                                      etag: response.value(forField: "etag"), lastModified: response.value(forField: "last-modified")) {
            case .append:
                hop.route = .output
                journey.output.responseBeforeResume = nil
                journey.output.entityBytes = offset
                journey.output.expectedLength = ResumeRules.completeLength(of: response) ?? -1
                // A HEAD's 206 has no body to fill its range with.
                journey.output.rangeEnd = (hop.request.httpMethod ?? "GET").uppercased() == "HEAD" ? nil : ResumeRules.rangeEnd(of: response)
                journey.output.entityHead = response
            case .restart:
                hop.route = .output
                restartOutput = true
                journey.output.streamHoldsStaleBytes = false
                journey.output.restart()
                journey.output.expect(response.expectedContentLength)
                journey.output.entityHead = response
            case .alreadyComplete:
                hop.route = .discard
                journey.output.entityBytes = offset
                journey.output.expectedLength = offset
            case .fail(let reason):
                let error = TransportErrors.make(NSURLErrorBadServerResponse, url: hop.request.url, underlying: nil,
                                                 description: "The download could not be resumed: \(reason).")
                let outcome = Outcome(failure: error, response: .received(response), request: hop.request, journey: journey)
                state = .delivering(outcome)
                return .refuse(error, outcome)
            case .notApplicable:
                // An error status: its body is not part of the entity.
                hop.route = .aside
            }
        } else if let interception = journey.interception, !interception.acceptableStatusCodes.contains(response.statusCode) {
            // The retrier may send it again: its body waits apart, as a retry policy's does.
            hop.route = .provisional
        } else {
            hop.route = .output
            if journey.output.entityBytes > 0 || journey.output.streamHoldsStaleBytes {
                // The whole entity again (a resume without Range): start over.
                restartOutput = true
                journey.output.streamHoldsStaleBytes = false
                journey.output.restart()
            }
            journey.output.expect(response.expectedContentLength)
            journey.output.entityHead = response
        }
        state = .running(journey, hop)
        return .proceed(hop.route, restartOutput: restartOutput)
    }

    /// Redirects and challenges may lead to another request; their bodies
    /// wait aside instead of reaching the output.
    private func mayFollowUp(_ response: ReceivedResponse, hop: Hop) -> Bool {
        switch response.statusCode {
        // curl resolves the target only once the transfer is done, so while
        // the body arrives the Location header is what tells.
        // An empty Location leads nowhere: that 3xx is the response itself.
        case 301, 302, 303, 307, 308:
            return response.value(forField: "location").map { !$0.trimmingCharacters(in: .whitespaces).isEmpty } ?? false
        case 401, 407: return true
        default: return false
        }
    }

    // MARK: - Body

    mutating func bodyReceived(_ tag: UInt64, _ bytes: UnsafeRawBufferPointer) -> BodyAction {
        guard case .running(var journey, var hop) = state, hop.tag == tag else {
            _ = unexpected(.transferReport(tag))
            return .refuse
        }
        switch hop.route {
        case .discard:
            return .kept
        case .held, .aside, .provisional:
            let room = configuration.heldBodyLimit - hop.heldBody.count
            // A memory output holds the whole of an answer that may become the
            // result (delivered, it would be in memory anyway) — but not a
            // redirect's or challenge's, which is usually followed and its
            // body thrown away: that stops at the limit, as for a stream.
            if room >= bytes.count || (journey.output.memory != nil && hop.route != .held) {
                state = .modifying
                hop.heldBody.append(contentsOf: bytes)
                state = .running(journey, hop)
                return .kept
            }
            if hop.route == .provisional, let response = hop.response {
                // Too large to hold for a retry on a stream output: the answer
                // becomes the result, streamed from here on, whole; it is no
                // longer offered for a retry (what the caller got stays).
                state = .modifying
                let held = hop.heldBody
                hop.heldBody = Data()
                hop.route = .output
                // What an earlier attempt left in the stream goes first.
                let restartOutput = journey.output.entityBytes > 0 || journey.output.streamHoldsStaleBytes
                journey.output.streamHoldsStaleBytes = false
                journey.output.restart()
                journey.output.expectedLength = response.expectedContentLength
                journey.output.entityBytes = Int64(held.count + bytes.count)
                journey.output.entityHead = response
                let progress = Progress(bytes: held.count + bytes.count, total: journey.output.entityBytes,
                                        expected: journey.output.expectedLength)
                state = .running(journey, hop)
                return .promote(response, held: held, progress, restartOutput: restartOutput)
            }
            // A redirect's or challenge's body past the limit is cut (see heldBodyLimit).
            state = .modifying
            hop.heldBodyCut = true
            if room > 0 { hop.heldBody.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(room))) }
            state = .running(journey, hop)
            return .kept
        case .output:
            if let end = journey.output.rangeEnd, journey.output.entityBytes + Int64(bytes.count) > end {
                // Past the range the 206 named: not this entity's bytes. The
                // piece is not written; the hop fails (see completeHop).
                state = .modifying
                hop.overranRange = true
                state = .running(journey, hop)
                return .refuse
            }
            state = .modifying
            journey.output.entityBytes += Int64(bytes.count)
            let progress = Progress(bytes: bytes.count, total: journey.output.entityBytes, expected: journey.output.expectedLength)
            let inMemory = journey.output.memory != nil
            if inMemory { journey.output.memory?.append(contentsOf: bytes) }
            state = .running(journey, hop)
            return inMemory ? .keptWithProgress(progress) : .forward(progress)
        }
    }

    /// The output moves from memory to the driver's writer (a data task that
    /// became a download). Returns the body kept so far, which the driver
    /// writes first; from now on the body is forwarded. After the outcome is
    /// decided it changes nothing (the driver takes the outcome's body).
    mutating func divertOutput() -> Data? {
        switch state {
        case .running(var journey, let hop):
            guard let kept = journey.output.memory else { return nil }
            state = .modifying
            journey.output.memory = nil
            state = .running(journey, hop)
            return kept
        case .awaitingFollowUp(var journey, let followUp):
            guard let kept = journey.output.memory else { return nil }
            journey.output.memory = nil
            state = .awaitingFollowUp(journey, followUp)
            return kept
        case .lookingUpCache(var journey, let token):
            guard let kept = journey.output.memory else { return nil }
            journey.output.memory = nil
            state = .lookingUpCache(journey, token: token)
            return kept
        case .paused(var journey):
            guard let kept = journey.output.memory else { return nil }
            journey.output.memory = nil
            state = .paused(journey)
            return kept
        case .waitingToRetry(var journey, let token):
            guard let kept = journey.output.memory else { return nil }
            journey.output.memory = nil
            state = .waitingToRetry(journey, token: token)
            return kept
        case .adapting(var journey, let attempt):
            guard let kept = journey.output.memory else { return nil }
            journey.output.memory = nil
            state = .adapting(journey, attempt)
            return kept
        case .decidingRetry(var journey, let token, var failed):
            // Nothing of the failed attempt is in the output; if it is not
            // retried its body is written by the end (`bodyToWrite`).
            guard let kept = journey.output.memory else { return nil }
            journey.output.memory = nil
            if failed.bodyToWrite == nil { failed.bodyToWrite = failed.memoryBody }
            failed.memoryBody = nil
            state = .decidingRetry(journey, token: token, failed: failed)
            return kept
        case .waiting, .pausedBeforeStart, .delivering, .completing, .finished:
            return nil
        case .modifying:
            preconditionFailure("divertOutput() while the state is being modified")
        }
    }

    // MARK: - Retry

    /// The spent plan for one more attempt, when the policy allows retrying
    /// `hop` (nil: deliver). `status` nil means a transport failure. A retry
    /// sends the journey's first request again, so both it and the hop must
    /// be idempotent (a POST answered 303 is never re-sent by a retry of the GET).
    private func retryPlan(_ journey: Journey, hop: Hop, status: Int?, errorCode: Int? = nil) -> RetryPlan? {
        guard var plan = journey.retry, plan.attempts < plan.policy.maximumAttempts, plan.bodyCanBeResent,
              hop.resumeOffset == nil, !hop.revalidates,
              RetryPolicy.idempotentMethods.contains((hop.request.httpMethod ?? "GET").uppercased()),
              RetryPolicy.idempotentMethods.contains((journey.request.httpMethod ?? "GET").uppercased()) else { return nil }
        if let status {
            guard plan.policy.retryableStatusCodes.contains(status) else { return nil }
        } else {
            guard let errorCode, plan.policy.retryableErrorCodes.contains(errorCode) else { return nil }
        }
        plan.attempts += 1
        return plan
    }

    /// A transport failure is retried only before the answer's head reached
    /// the output (a session delegate may already have acted on it, and
    /// bytes the caller received are never taken back).
    private mutating func retryAfterFailure(_ journey: Journey, hop: Hop, error: NSError) -> Action? {
        guard error.domain == NSURLErrorDomain, !(hop.route == .output && hop.response != nil),
              let plan = retryPlan(journey, hop: hop, status: nil, errorCode: error.code) else { return nil }
        return scheduleRetry(journey, plan: plan, retryAfter: nil)
    }

    /// Waits for the driver's timer. (Nothing of the attempt is in the
    /// output: its body was provisional, or it failed before any arrived.)
    private mutating func scheduleRetry(_ journey: Journey, plan: RetryPlan, retryAfter: TimeInterval?,
                                        refused: (response: ReceivedResponse, request: URLRequest)? = nil) -> Action? {
        // Past the cap (an unbounded one included) the server asks for too long: no retry.
        if let retryAfter, retryAfter > plan.policy.maximumDelay || !retryAfter.isFinite { return nil }
        var next = journey
        next.cookiesBeforeRetry = refused
        // The retrier's `retryCount` is every retry made so far, the policy's too (API.md).
        next.interception?.retryCount += 1
        next.retry = plan
        next.redirects = 0
        next.authenticationFailures = 0
        let token = makeToken()
        state = .waitingToRetry(next, token: token)
        return .scheduleRetry(RetryWait(token: token, backoff: plan.policy.backoff(afterAttempts: plan.attempts - 1),
                                        retryAfter: retryAfter))
    }

    /// Whether the machine waits for a retry timer.
    var isWaitingToRetry: Bool {
        if case .waitingToRetry = state { return true }
        return false
    }

    /// Whether the machine waits for the retry timer named `token`.
    func isWaitingToRetry(token: UInt64) -> Bool {
        if case .waitingToRetry(_, let waiting) = state { return waiting == token }
        return false
    }

    /// The driver's timer for the retry with `token` fired: the journey's
    /// request goes out again (a stale token changes nothing).
    mutating func retryDue(token: UInt64) -> Action {
        guard case .waitingToRetry(let journey, let waiting) = state, waiting == token else {
            return unexpected(.answer(token, .retryTimer))
        }
        if journey.interception != nil { return adapt(journey, consultsCache: false) }
        return startHop(journey, request: journey.request, credentials: nil, revalidates: false)
    }

    // MARK: - Completion

    /// The current hop's transfer ended: the request's outcome, or a question
    /// that decides the next hop. A failed attempt goes to the interceptor's
    /// retrier, when there is one, before it is delivered.
    mutating func transferCompleted(_ tag: UInt64, response: ReceivedResponse?, error: NSError?) -> Action {
        guard case .running(let journey, let hop) = state, hop.tag == tag else { return unexpected(.transferReport(tag)) }
        endedTag = tag
        return offeringToRetrier(completeHop(journey, hop, response: response, error: error), journey: journey, hop: hop)
    }

    private mutating func completeHop(_ journey: Journey, _ hop: Hop, response: ReceivedResponse?, error: NSError?) -> Action {
        var journey = journey
        var hop = hop
        let tag = hop.tag
        // A resumed 206 must fill its range exactly: more bytes (refused as
        // they came) or fewer (a Content-Length or close short of it) would
        // leave a file that is not the entity, reported as complete.
        if hop.route == .output, let end = journey.output.rangeEnd,
           hop.overranRange || (error == nil && response != nil && journey.output.entityBytes != end) {
            let detail = hop.overranRange ? "more bytes than its Content-Range names"
                                          : "\(journey.output.entityBytes) of the \(end) bytes its Content-Range ends at"
            let mismatch = TransportErrors.make(NSURLErrorBadServerResponse, url: hop.request.url, underlying: nil,
                                                description: "The resumed download's body does not match its range: the server sent \(detail).")
            return deliver(Outcome(failure: mismatch, response: response.map(ResponseValue.received), request: hop.request, journey: journey))
        }
        if let error {
            if let retry = retryAfterFailure(journey, hop: hop, error: error) { return retry }
            return deliver(Outcome(failure: error, response: response.map(ResponseValue.received), request: hop.request, journey: journey))
        }
        guard let response else {
            // A complete exchange always has a head; the transport says so.
            let error = TransportErrors.make(NSURLErrorBadServerResponse, url: hop.request.url, underlying: nil)
            return deliver(Outcome(failure: error, request: hop.request, journey: journey))
        }
        if hop.response == nil {
            // The transport reports every head first; keep the machine whole anyway.
            state = .running(journey, hop)
            _ = headReceived(tag, response)
            guard case .running(let updatedJourney, let updatedHop) = state else { return outcomeAction() }
            journey = updatedJourney
            hop = updatedHop
        }
        if hop.revalidates && response.statusCode == 304, let cached = journey.revalidating {
            guard CacheRules.confirmation(response, selects: cached) else {
                // §4.3.4: a 304 naming another representation (its entity tag
                // is not the stored one's) confirms nothing that is stored, and
                // is no answer to the caller's request: it goes out again, plainly.
                var plain = journey
                plain.revalidating = nil
                return startHop(plain, request: plain.request, credentials: nil, revalidates: false)
            }
            // The caller sees the stored response as the 304 updated it (RFC 9111 §4.3.4).
            var outcome = Outcome(cached: CacheRules.merging(cached, with: response), journey: journey)
            outcome.revalidatedBy = response
            outcome.finalRequest = hop.request
            return deliver(outcome)
        }
        switch hop.route {
        case .held:
            return followUp(journey, hop: hop, response: response)
        case .provisional:
            if let plan = retryPlan(journey, hop: hop, status: response.statusCode),
               let retry = scheduleRetry(journey, plan: plan, retryAfter: RetryRules.retryAfter(in: response), refused: (response, hop.request)) {
                return retry
            }
            // No retry after all: the answer and its body are the result.
            return declineFollowUp(journey, hop: hop, response: response)
        case .discard:
            // A 416 confirming the whole entity is already here.
            let earlier = journey.output.responseBeforeResume ?? journey.lastResponse?.received
            let standing = (earlier ?? response).standingForCompleteEntity(length: journey.output.entityBytes,
                                                                           describesEntity: earlier != nil)
            return deliver(Outcome(success: .received(standing), hop: hop, journey: journey))
        case .aside:
            var outcome = Outcome(success: .received(response), hop: hop, journey: journey)
            if outcome.memoryBody != nil { outcome.memoryBody = hop.heldBody }
            return deliver(outcome)
        case .output:
            return deliver(Outcome(success: .received(response), hop: hop, journey: journey))
        }
    }

    /// After a head refused by the machine, the action for the state it left.
    private func outcomeAction() -> Action {
        if case .delivering(let outcome) = state { return .deliver(outcome) }
        return .none
    }

    /// A redirect or challenge: the question for the driver, or — when it
    /// cannot be followed — the 3xx/401 itself as the outcome.
    private mutating func followUp(_ journey: Journey, hop: Hop, response: ReceivedResponse) -> Action {
        switch response.statusCode {
        case 401, 407:
            let forProxy = response.statusCode == 407
            guard journey.authenticationFailures < configuration.maximumAuthenticationAttempts,
                  let offer = ChallengeOffer.parse(response, forProxy: forProxy),
                  let space = offer.protectionSpace(for: hop.request.url, forProxy: forProxy, proxy: response.proxy) else {
                return declineFollowUp(journey, hop: hop, response: response)
            }
            let followUp = FollowUp(token: makeToken(), kind: .challenge(offer, space, forProxy: forProxy), response: response,
                                    body: hop.heldBody, hop: hop)
            state = .awaitingFollowUp(journey, followUp)
            return .askChallenge(ChallengeQuestion(token: followUp.token, response: response, protectionSpace: space,
                                                   previousFailureCount: journey.authenticationFailures))
        default:
            // No target curl could resolve from Location: not a redirect to
            // follow, so the 3xx is delivered as it is (curl does the same).
            guard response.redirectURL != nil else { return declineFollowUp(journey, hop: hop, response: response) }
            guard journey.redirects < configuration.maximumRedirects else {
                let error = TransportErrors.make(NSURLErrorHTTPTooManyRedirects, url: response.url, underlying: nil)
                return deliver(Outcome(failure: error, response: .received(response), request: hop.request, journey: journey))
            }
            switch RedirectRules.request(following: response, from: hop.request) {
            case .failure(let error):
                return deliver(Outcome(failure: error, response: .received(response), request: hop.request, journey: journey))
            case .success(var proposed):
                if hop.revalidates {
                    // The validators were the cache's, for the stored answer
                    // of this URL: the next one is asked as the caller asked
                    // (a 304 from there would confirm nothing stored).
                    for field in ["If-None-Match", "If-Modified-Since"] {
                        proposed.setValue(journey.request.value(forHTTPHeaderField: field), forHTTPHeaderField: field)
                    }
                }
                var journey = journey
                if hop.revalidates { journey.revalidating = nil }
                let followUp = FollowUp(token: makeToken(), kind: .redirect(proposed: proposed), response: response,
                                        body: hop.heldBody, hop: hop)
                state = .awaitingFollowUp(journey, followUp)
                return .askRedirect(RedirectQuestion(token: followUp.token, response: response, proposed: proposed))
            }
        }
    }

    /// The 3xx/401/407 becomes the result, its held body the output.
    mutating func declineFollowUp(_ journey: Journey, hop: Hop, response: ReceivedResponse) -> Action {
        if response.isTunnelRefusal, let proxy = response.proxy {
            // The proxy's refusal to open the tunnel is not the origin's
            // answer: it never becomes the response (API.md), the request fails.
            let error = TransportErrors.make(NSURLErrorUserAuthenticationRequired, url: hop.request.url, underlying: nil,
                                             description: "The proxy \(proxy.host):\(proxy.port) requires authentication to open a tunnel, and no credential was given.")
            return deliver(Outcome(failure: error, request: hop.request, journey: journey))
        }
        if hop.heldBodyCut {
            // Its body was cut while the follow-up was undecided: delivered,
            // it would be silently short.
            let error = TransportErrors.make(NSURLErrorDataLengthExceedsMaximum, url: hop.request.url, underlying: nil,
                                             description: "The \(response.statusCode) response was not followed, and its body is larger than the \(configuration.heldBodyLimit / 1024) KiB held while that was undecided, so it cannot be delivered whole.")
            return deliver(Outcome(failure: error, response: .received(response), request: hop.request, journey: journey))
        }
        var journey = journey
        // Bytes an earlier attempt left in a stream are not this answer's.
        let staleStream = journey.output.memory == nil && (journey.output.entityBytes > 0 || journey.output.streamHoldsStaleBytes)
        journey.output.streamHoldsStaleBytes = false
        journey.output.restart()
        journey.output.memory?.append(hop.heldBody)
        journey.output.entityBytes = Int64(hop.heldBody.count)
        var outcome = Outcome(success: .received(response), hop: hop, journey: journey)
        // A resumed request's stream already holds the entity's first bytes:
        // the 3xx's body stays out of it, as an error answer's does (`.aside`),
        // so the partial file is still the entity's beginning for the next run.
        if journey.output.memory == nil, hop.resumeOffset == nil {
            outcome.bodyToWrite = hop.heldBody
            outcome.restartsOutput = staleStream
        }
        return deliver(outcome)
    }
}

extension TransferStateMachine.ResponseValue {
    var received: ReceivedResponse? {
        if case .received(let response) = self { return response }
        return nil
    }
}
