@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The background request behind a stale answer served under
/// `stale-while-revalidate` (RFC 5861 §3).
///
/// It runs on a `RequestDriver` like every request (so the machine, the
/// engine's per-host limits and the driver's tests see it), with this type
/// as its front-end: not an operation or task, so no user block, delegate or
/// progress runs for it, and no redirect or challenge is followed (the driver
/// asks; the answer is always "no"). It is sent with the settings of the
/// request that triggered it (security policy, client identity, proxies,
/// per-host limit, cookies as that request would send them,
/// `httpShouldHandleCookies` honoured) and to the same URL, so it updates the
/// same cache entry and variant. What it does with the answer:
/// - 304: its fields merge into the stored response, freshness starts over
///   (RFC 9111 §3.2, §4.3.4) — only if that response is still the stored one.
/// - 2xx: what a foreground answer does (stored, or the entry dropped when it
///   may not be stored), without the will-cache hooks (they are user code).
/// - anything else (a redirect, a challenge, an error): nothing; the entry
///   stays stale, and the first request after the window revalidates it. Such
///   an answer is not read to its end.
/// At most one runs per entry at a time. Its body is kept in memory up to the
/// cache's per-entry limit (larger: the request fails, nothing changes); the
/// cache and cookie work runs on a queue of its own.
final class StaleRevalidation: RequestFrontend, @unchecked Sendable {
    // @unchecked: every stored property is immutable after init.
    /// Entries (cache, partition, URL) being revalidated now.
    private static let running = LockedState<Set<String>>([])
    /// Where answers are applied (cookie storage and cache index: off the network thread).
    private static let queue = DispatchQueue(label: "com.alamofire.networking.cache-revalidation", qos: .utility)

    private let slot: String
    private let request: URLRequest
    private let stored: CachedURLResponse
    private let key: String
    private let cache: URLCache
    private let policyTag: String
    private let environment: TransferEnvironment
    private let bodyLimit: Int64
    private let driver: RequestDriver

    private init(slot: String, request: URLRequest, stored: CachedURLResponse, key: String, cache: URLCache, policyTag: String,
                 environment: TransferEnvironment, engine: any TransferEngine) {
        self.slot = slot
        self.request = request
        self.stored = stored
        self.key = key
        self.cache = cache
        self.policyTag = policyTag
        // Its own answer is never taken from the cache, nor stored by the
        // driver's rules; it is nobody's span, and no rate cap of the request
        // that triggered it (an operation's, its graph's) slows it or is spent on it.
        var own = environment
        own.cache = nil
        own.trace = nil
        own.receiveLimiters = []
        own.maximumReceiveBytesPerSecond = 0
        own.maximumSendBytesPerSecond = 0
        self.environment = own
        bodyLimit = Int64(max(cache.memoryCapacity, cache.diskCapacity) / 20)
        var configuration = TransferStateMachine.Configuration()
        configuration.consultsCache = false
        driver = RequestDriver(configuration: configuration, engine: engine)
        driver.attach(self)
    }

    /// Sends `request` (the stored entry's conditional request) on `engine`
    /// (the triggering request's) unless the entry is already being
    /// revalidated. Off the network thread (the driver reads the cookie
    /// storage and builds the transfer here).
    static func start(_ request: URLRequest, stored: CachedURLResponse, key: String, cache: URLCache, policyTag: String,
                      environment: TransferEnvironment, engine: any TransferEngine) {
        NetworkThread.assertNotCurrent()
        let slot = "\(ObjectIdentifier(cache).hashValue) \(policyTag) \(key)"
        guard running.withLock({ $0.insert(slot).inserted }) else { return }
        let revalidation = StaleRevalidation(slot: slot, request: request, stored: stored, key: key, cache: cache, policyTag: policyTag,
                                             environment: environment, engine: engine)
        // Alive through the start, which makes the driver hold its front-end
        // until the request is over (the driver's own reference is unowned).
        withExtendedLifetime(revalidation) {
            _ = revalidation.driver.handle(.start(request, output: nil, retry: nil, budget: nil, cancelled: false))
        }
    }

    /// Whether a revalidation of `key` is under way (tests wait for it to end).
    static func isRunning(key: String) -> Bool {
        running.withLock { slots in slots.contains { $0.hasSuffix(" \(key)") } }
    }

    // MARK: - The driver's front-end

    func transferEnvironment(for url: URL?) -> TransferEnvironment { environment }

    func prepareRequest(_ request: URLRequest, consumedBodyStream: Bool,
                        ready: @escaping @Sendable (Result<URLRequest, NSError>) -> Void) {
        ready(.success(request))
    }

    func announce(_ change: PhaseChange) {}

    /// A redirect is not followed: the 3xx is the answer (which changes nothing).
    func askRedirect(_ question: TransferStateMachine.RedirectQuestion) {
        driver.handle(.redirectDecided(token: question.token, nil))
    }

    /// Nor is a challenge answered.
    func askChallenge(_ question: TransferStateMachine.ChallengeQuestion) {
        driver.handle(.challengeAnswered(token: question.token, .continueWithoutCredential))
    }

    /// On the network thread: an answer that will change nothing is not read to its end.
    func didReceiveHead(_ response: ReceivedResponse, route: TransferStateMachine.BodyRoute, writer: ResponseBodyWriter?) {
        guard response.statusCode == 304 || (200..<300).contains(response.statusCode) else {
            driver.handle(.cancel(request))
            return
        }
    }

    /// On the network thread: a body past the cache's per-entry limit ends the request.
    func didReceiveBody(_ bytes: UnsafeRawBufferPointer, progress: TransferStateMachine.Progress, writer: ResponseBodyWriter?) {
        guard progress.total > bodyLimit else { return }
        driver.handle(.fail(TransportErrors.make(NSURLErrorDataLengthExceedsMaximum, url: request.url, underlying: nil,
                                                 description: "The revalidated answer is larger than the cache keeps.")))
    }

    func didSendBody(bytes: Int, total: Int64, expected: Int64) {}

    func outputDidClose(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome { outcome }

    var activityLogger: Logger? { nil }

    /// The answer is applied on the revalidation queue (off the network
    /// thread, where this may be called), then the request is over.
    func runCompletion(_ outcome: TransferStateMachine.Outcome) {
        Self.queue.async { [self] in
            if outcome.error == nil, case .received(let head)? = outcome.response, !outcome.servedFromCache {
                apply(head, body: outcome.memoryBody ?? Data())
            }
            _ = Self.running.withLock { $0.remove(slot) }
            driver.handle(.completionFinished)
        }
    }

    // MARK: - The answer

    private func apply(_ head: ReceivedResponse, body: Data) {
        let status = head.statusCode
        guard status == 304 || (200..<300).contains(status) else { return }
        if environment.acceptsCookies { CookieHandling.store(from: head, for: request, in: environment.cookieStorage) }
        let index = CacheIndex.index(for: cache)
        if status == 304 {
            // Merged into the response that was served stale, and only while
            // it is still the stored one (a newer answer may have replaced it).
            guard case .entry(let current) = index.lookup(key), current.cached === stored else { return }
            let status = (stored.response as? HTTPURLResponse)?.statusCode ?? 200
            // A 304 naming another representation confirms nothing stored (§4.3.4);
            // nor may an answer that says it is no longer to be stored be kept.
            if !CacheRules.confirmation(head, selects: stored) || CacheRules.confirmationForbidsStoring(head, status: status, request: request) {
                index.invalidate(request, key: key)
            } else {
                index.refresh(key: key, with: CacheRules.merging(stored, with: head), for: request, receivedAt: Date())
            }
            return
        }
        switch CacheRules.effect(of: head, for: request) {
        case .none, .updateFromHead:   // a GET: never the HEAD's
            return
        case .invalidate, .invalidateTarget:   // a GET: only the first
            index.invalidate(request, key: key)
        case .store:
            guard let received = head.httpURLResponse else { return index.invalidate(request, key: key) }
            let response = CacheRules.storable(received)
            var userInfo: [AnyHashable: Any] = [CacheRules.policyKey: policyTag]
            let varied = CacheRules.varyNames(of: response)
            if !varied.isEmpty {
                userInfo[CacheRules.varyValuesKey] = CacheRules.varyValues(for: varied, of: environment.requestAsSent(request))
            }
            CacheRules.keepReceivedHead(head, of: response, in: &userInfo)
            let entry = CachedURLResponse(response: response, data: body, userInfo: userInfo, storagePolicy: .allowed)
            index.store(entry, for: request, key: key, policyTag: policyTag, receivedAt: Date())
        }
    }
}
