@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the machine asks its driver to do, and what it hands over.
extension TransferStateMachine {
    enum Action {
        case none
        /// Consult the cache for this request; report `cacheLookupFinished(token:_:)`.
        case lookUpCache(token: UInt64, URLRequest)
        /// Build and submit the transfer for a hop.
        case startTransfer(HopStart)
        /// Abort the transfer with this tag (pause): nothing else happens.
        case abort(tag: UInt64)
        /// Abort the transfer with this tag, then deliver (cancel mid-transfer).
        case abortAndDeliver(tag: UInt64, Outcome)
        /// Ask the redirect decider; report `redirectDecided`.
        case askRedirect(RedirectQuestion)
        /// Ask the challenge decider; report `challengeAnswered`.
        case askChallenge(ChallengeQuestion)
        /// Finish the output, then report `outputFinished`.
        case deliver(Outcome)
        /// Stop (true) or restart (false) the data flow of the transfer with
        /// this tag, keeping its connection (a session task's suspend/resume).
        case suspendTransfer(tag: UInt64, Bool)
        /// Start the retry timer; report `retryDue(token:)` when it fires.
        case scheduleRetry(RetryWait)
        /// Ask the interceptor to adapt an attempt's request; report `adapted(token:_:)`.
        case adapt(AdaptQuestion)
        /// Ask the interceptor's retrier about a failed attempt; report `retryDecided(token:_:)`.
        case askRetrier(RetrierQuestion)
    }

    /// How long to wait before a retry.
    struct RetryWait: Equatable {
        let token: UInt64
        /// The policy's exponential wait (the driver adds the jitter).
        let backoff: TimeInterval
        /// The server's `Retry-After`, which is used as is when present.
        let retryAfter: TimeInterval?
        /// `backoff` is a retrier's own delay: used as is, without jitter.
        var exact = false
    }

    /// The request and credentials of a new hop, plus what the previous hop
    /// leaves to do first (off the network thread, before the hop's cookies
    /// are read).
    struct HopStart {
        let tag: UInt64
        let request: URLRequest
        let credentials: TransferCredentials?
        let effects: FollowUpEffects
        /// The request's body stream was consumed by an earlier hop: the
        /// driver sends a fresh copy of it (or fails the hop when it cannot
        /// be copied). Copying runs caller code, so it is not done here.
        let needsFreshBodyStream: Bool
    }

    /// Side effects of a decided follow-up.
    struct FollowUpEffects {
        /// Cookies the 3xx/401 set, for the request that got it.
        var storeCookies: (response: ReceivedResponse, request: URLRequest)?
    }

    struct RedirectQuestion {
        let token: UInt64
        let response: ReceivedResponse
        let proposed: URLRequest
    }

    struct ChallengeQuestion {
        let token: UInt64
        let response: ReceivedResponse
        let protectionSpace: URLProtectionSpace
        let previousFailureCount: Int
    }

    /// A response as the request ends with it: from the network (built into
    /// an `HTTPURLResponse` only when asked), or from `URLCache`.
    enum ResponseValue {
        case received(ReceivedResponse)
        case cached(CachedURLResponse)

        /// The response as Foundation shows it (nil for a received head that
        /// cannot be an `HTTPURLResponse`). Off the network thread.
        var urlResponse: URLResponse? {
            switch self {
            case .received(let head): return head.httpURLResponse
            case .cached(let cached): return cached.response
            }
        }
    }

    /// An outcome's rare fields (see `Outcome`), immutable.
    // @unchecked: immutable after init; its references are to immutable objects.
    final class OutcomeRare: @unchecked Sendable {
        struct Fields {
            var answeredChallenge = false
            var credentialRecord: CredentialRecord?
            var resumeData: Data?
        }
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
        var answeredChallenge: Bool { fields.answeredChallenge }
        var credentialRecord: CredentialRecord? { fields.credentialRecord }
        var resumeData: Data? { fields.resumeData }
    }

    /// How a request ended.
    struct Outcome {
        var response: ResponseValue?
        var error: NSError?
        /// The body, when the output is memory.
        var memoryBody: Data?
        /// Bytes the driver must still write to its output stream (a cached
        /// entry, a declined redirect's body) before it closes it.
        var bodyToWrite: Data?
        /// The output stream holds an earlier attempt's bytes (a pause
        /// without `Range`, a retried answer's): the driver empties it before
        /// writing `bodyToWrite`, as a new entity's head does on the way in.
        var restartsOutput = false
        /// Bytes of the entity in the output.
        var entityBytes: Int64 = 0
        /// The entity's full length as announced (-1 when unknown).
        var expectedLength: Int64 = -1
        /// Redirects followed on the way.
        var redirects = 0
        /// The request of the last hop (cookies of the final response belong to its URL).
        var finalRequest: URLRequest?
        /// The journey's request (the cache key, the cache policy).
        var originalRequest: URLRequest?
        /// Whether the answer came from `URLCache` (and is not stored again).
        var servedFromCache = false
        /// The 304 that confirmed a cached entry, when one did.
        var revalidatedBy: ReceivedResponse?
        /// What few outcomes carry, in one box: every outcome is copied
        /// several times, and each inline field would cost every copy.
        private var rare: OutcomeRare?
        /// The last hop answered the origin's challenge (401) with a
        /// credential: its answer belongs to that user, and is not stored
        /// where another request could be answered with it.
        var answeredChallenge: Bool {
            get { rare?.answeredChallenge ?? false }
            set { change { $0.answeredChallenge = newValue } }
        }
        /// The journey's challenge credentials (nil for almost every request).
        var credentialRecord: CredentialRecord? {
            get { rare?.credentialRecord }
            set { if newValue != nil || rare != nil { change { $0.credentialRecord = newValue } } }
        }
        /// Credentials answered to challenges that the server took, to be
        /// remembered in the credential storage (their persistence allows it).
        var acceptedCredentials: [(credential: URLCredential, space: URLProtectionSpace)] { credentialRecord?.accepted ?? [] }
        /// A resumed download that the server answered with an error status:
        /// the resume data that still continues it, for whatever error its
        /// completion reports (the transfer itself did not fail).
        var resumeData: Data? {
            get { rare?.resumeData }
            set { change { $0.resumeData = newValue } }
        }

        private mutating func change(_ edit: (inout OutcomeRare.Fields) -> Void) {
            var fields = rare?.fields ?? OutcomeRare.Fields()
            edit(&fields)
            rare = OutcomeRare(fields)
        }

        init(failure error: NSError, response: ResponseValue? = nil, request: URLRequest, journey: Journey? = nil) {
            self.error = error
            self.response = response ?? journey?.lastResponse
            memoryBody = journey?.output.memory
            entityBytes = journey?.output.entityBytes ?? 0
            expectedLength = journey?.output.expectedLength ?? -1
            redirects = journey?.redirects ?? 0
            finalRequest = request
            originalRequest = journey?.request ?? request
            credentialRecord = journey?.credentialRecord
        }

        /// The answer `hop` received, the last of `journey`.
        init(success response: ResponseValue, hop: Hop, journey: Journey) {
            self.init(success: response, request: hop.request, journey: journey)
            if let credentials = hop.credentials, !credentials.forProxy { answeredChallenge = true }
        }

        init(success response: ResponseValue, request: URLRequest, journey: Journey) {
            self.response = response
            memoryBody = journey.output.memory
            entityBytes = journey.output.entityBytes
            expectedLength = journey.output.expectedLength
            redirects = journey.redirects
            finalRequest = request
            originalRequest = journey.request
            credentialRecord = journey.credentialRecord
        }

        init(cached: CachedURLResponse, journey: Journey) {
            response = .cached(cached)
            servedFromCache = true
            if journey.output.memory != nil {
                memoryBody = cached.data
            } else {
                bodyToWrite = cached.data
            }
            entityBytes = Int64(cached.data.count)
            expectedLength = entityBytes
            originalRequest = journey.request
            credentialRecord = journey.credentialRecord
        }

        /// An outcome restored from an archive.
        init(restoredResponse: URLResponse?, error: NSError?, body: Data?) {
            response = restoredResponse.map { .cached(CachedURLResponse(response: $0, data: body ?? Data())) }
            self.error = error
            memoryBody = body
            entityBytes = Int64(body?.count ?? 0)
        }
    }
}
