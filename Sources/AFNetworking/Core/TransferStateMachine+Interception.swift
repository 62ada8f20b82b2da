@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request interceptor's two questions as states of the lifecycle: adapt
/// before each attempt (`.adapting`), decide about a failed one
/// (`.decidingRetry`). The driver keeps the interceptor and asks it; the
/// machine only knows that there is one. Each question carries a token, so an
/// answer that arrives after a cancel, a pause or a second answer is ignored.
extension TransferStateMachine {
    /// What the machine needs of a journey's interceptor.
    struct Interception: Equatable {
        /// The request as the caller made it: every attempt adapts this one,
        /// not an earlier attempt's adapted request.
        var original: URLRequest
        /// Statuses the request does not fail for; any other is offered to
        /// the retrier (200–299 narrowed by the response serializer's
        /// `acceptableStatusCodes`).
        var acceptableStatusCodes: IndexSet
        /// Retries the retrier asked for so far.
        var retryCount = 0

        init(original: URLRequest, acceptableStatusCodes: IndexSet = IndexSet(integersIn: 200..<300), retryCount: Int = 0) {
            self.original = original
            self.acceptableStatusCodes = acceptableStatusCodes
            self.retryCount = retryCount
        }
    }

    /// An attempt whose request is being adapted.
    struct Attempt {
        /// Names the adapt question.
        let token: UInt64
        /// The first attempt may be answered from the cache; a retry goes to the network.
        let consultsCache: Bool
    }

    /// Asks the driver's interceptor to adapt `request`; report `adapted(token:_:)`.
    struct AdaptQuestion {
        let token: UInt64
        let request: URLRequest
    }

    /// Asks the driver's interceptor about a failed attempt; report `retryDecided(token:_:)`.
    struct RetrierQuestion {
        let token: UInt64
        /// The attempt's request as sent (adapted).
        let request: URLRequest
        /// Its response, when the failure is the status.
        let response: ReceivedResponse?
        /// The transport's error, when the failure is that.
        let error: NSError?
        /// The failed attempt's body (for the status error's user info).
        let body: Data?
        let retryCount: Int
    }

    /// The retrier's answer, as the machine applies it.
    enum RetrierDecision {
        /// Send again after `delay` seconds (nil or ≤ 0: at once).
        case retry(delay: TimeInterval?)
        /// Deliver the failed attempt, failing with `error` when given.
        case doNotRetry(NSError?)
    }

    /// The longest `retryWithDelay` waited for (longer ones wait this long).
    static let longestRetrierDelay: TimeInterval = 365 * 24 * 3600

    /// Moves to `.adapting`: the interceptor adapts the journey's original request.
    mutating func adapt(_ journey: Journey, consultsCache: Bool) -> Action {
        guard let interception = journey.interception else {
            preconditionFailure("adapting a journey without an interceptor")
        }
        let attempt = Attempt(token: makeToken(), consultsCache: consultsCache)
        state = .adapting(journey, attempt)
        return .adapt(AdaptQuestion(token: attempt.token, request: interception.original))
    }

    /// The interceptor's adapted request for the attempt named `token` (a
    /// stale token changes nothing). An error ends the request, nothing sent.
    mutating func adapted(token: UInt64, _ result: Result<URLRequest, NSError>) -> Action {
        guard case .adapting(var journey, let attempt) = state, attempt.token == token else {
            return unexpected(.answer(token, .adaptedRequest))
        }
        switch result {
        case .failure(let error):
            return deliver(Outcome(failure: error, request: journey.request, journey: journey))
        case .success(let request):
            journey.request = request
            if attempt.consultsCache { return beginAdapted(journey) }
            return startHop(journey, request: request, credentials: nil, revalidates: false)
        }
    }

    /// `action` ends `hop`'s attempt; when that is a failure and the journey
    /// has an interceptor, its retrier is asked first (`journey` is the
    /// journey as the attempt left it, nothing of the failure in its output).
    /// A retry policy's retry was already decided inside `action`: the
    /// policy comes first. Not offered: a cancellation, an answer from the
    /// cache, and a transport error or status after the answer's head reached
    /// the output (bytes the caller received are never taken back: an answer
    /// too large to hold on a stream output is streamed, see `heldBodyLimit`).
    mutating func offeringToRetrier(_ action: Action, journey: Journey, hop: Hop) -> Action {
        guard let interception = journey.interception, case .deliver(let failed) = action, case .delivering = state else { return action }
        let received = failed.response?.received
        // Bytes of the answer that reached the output are never taken back.
        guard !(hop.route == .output && hop.response != nil) else { return action }
        if failed.error != nil {
            guard !failed.isCancellation else { return action }
        } else {
            guard let received, !failed.servedFromCache, !interception.acceptableStatusCodes.contains(received.statusCode) else {
                return action
            }
        }
        let token = makeToken()
        state = .decidingRetry(journey, token: token, failed: failed)
        return .askRetrier(RetrierQuestion(token: token, request: hop.request, response: received, error: failed.error,
                                           body: failed.memoryBody ?? failed.bodyToWrite, retryCount: interception.retryCount))
    }

    /// The retrier's decision for the question named `token` (a stale token
    /// changes nothing).
    mutating func retryDecided(token: UInt64, _ decision: RetrierDecision) -> Action {
        guard case .decidingRetry(var journey, let waiting, var failed) = state, waiting == token else {
            return unexpected(.answer(token, .retrierDecision))
        }
        switch decision {
        case .doNotRetry(let error):
            if let error { failed.error = error }
            return deliver(failed)
        case .retry(let delay):
            journey.interception?.retryCount += 1
            // Its cookies are stored before the retry goes out (a proxy's own
            // answer sets none for the origin).
            if let refused = failed.response?.received, !refused.isProxysOwnAnswer, let request = failed.finalRequest {
                journey.cookiesBeforeRetry = (refused, request)
            }
            journey.redirects = 0
            journey.authenticationFailures = 0
            guard let delay, delay > 0 else { return adapt(journey, consultsCache: false) }
            // A wait that is not a number of seconds (infinity) is no retry; a
            // year is longer than any deadline a timer needs to express.
            guard delay.isFinite else { return deliver(failed) }
            let timer = makeToken()
            state = .waitingToRetry(journey, token: timer)
            return .scheduleRetry(RetryWait(token: timer, backoff: min(delay, Self.longestRetrierDelay), retryAfter: nil, exact: true))
        }
    }
}
