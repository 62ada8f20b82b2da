@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The background request behind a stale answer served under
/// `stale-while-revalidate` (RFC 5861 §3).
///
/// It is a bare transfer, not an operation or task: no user block, delegate
/// or progress runs for it, and no redirect or challenge is followed. It is
/// sent with the settings of the request that triggered it (security policy,
/// client identity, proxies, per-host limit, cookies as that request would
/// send them, `httpShouldHandleCookies` honoured) and to the same URL, so it
/// updates the same cache entry and variant. What it does with the answer:
/// - 304: its fields merge into the stored response, freshness starts over
///   (RFC 9111 §3.2, §4.3.4) — only if that response is still the stored one.
/// - 2xx: what a foreground answer does (stored, or the entry dropped when it
///   may not be stored), without the will-cache hooks (they are user code).
/// - anything else (a redirect, a challenge, an error): nothing; the entry
///   stays stale, and the first request after the window revalidates it.
/// At most one runs per entry at a time. Its body is kept in memory up to the
/// cache's per-entry limit (larger: aborted, nothing changes); the network
/// thread only appends bytes, the cache and cookie work runs on a queue.
final class StaleRevalidation: TransferDelegate, @unchecked Sendable {
    // @unchecked: every stored property is immutable after init except `received`, which is behind its lock.
    /// Entries (cache, partition, URL) being revalidated now.
    private static let running = LockedState<Set<String>>([])
    /// Where answers are applied (cookie storage and cache index: off the network thread).
    private static let queue = DispatchQueue(label: "com.alamofire.networking.cache-revalidation", qos: .utility)

    private struct Received {
        var head: ReceivedResponse?
        var body = Data()
    }

    private let slot: String
    private let request: URLRequest
    private let stored: CachedURLResponse
    private let key: String
    private let cache: URLCache
    private let policyTag: String
    private let environment: TransferEnvironment
    private let bodyLimit: Int
    private let received = LockedState(Received())

    private init(slot: String, request: URLRequest, stored: CachedURLResponse, key: String, cache: URLCache, policyTag: String,
                 environment: TransferEnvironment) {
        self.slot = slot
        self.request = request
        self.stored = stored
        self.key = key
        self.cache = cache
        self.policyTag = policyTag
        self.environment = environment
        bodyLimit = max(cache.memoryCapacity, cache.diskCapacity) / 20
    }

    /// Sends `request` (the stored entry's conditional request) unless the
    /// entry is already being revalidated. Off the network thread (it reads
    /// the cookie storage and builds the transfer).
    static func start(_ request: URLRequest, stored: CachedURLResponse, key: String, cache: URLCache, policyTag: String,
                      environment: TransferEnvironment) {
        NetworkThread.assertNotCurrent()
        let slot = "\(ObjectIdentifier(cache).hashValue) \(policyTag) \(key)"
        guard running.withLock({ $0.insert(slot).inserted }) else { return }
        let revalidation = StaleRevalidation(slot: slot, request: request, stored: stored, key: key, cache: cache, policyTag: policyTag,
                                             environment: environment)
        guard !revalidation.send() else { return }
        _ = running.withLock { $0.remove(slot) }
    }

    /// Whether a revalidation of `key` is under way (tests wait for it to end).
    static func isRunning(key: String) -> Bool {
        running.withLock { slots in slots.contains { $0.hasSuffix(" \(key)") } }
    }

    /// Builds and starts the transfer; false when it cannot be sent.
    private func send() -> Bool {
        var options = TransferOptions(request: environment.requestAsSent(request))
        options.tls = environment.securityPolicy?.transferVerification ?? TLSVerification()
        if let idle = environment.idleTimeout { options.idleTimeout = min(options.idleTimeout, idle) }
        options.hostLimit = environment.hostLimit
        options.clientIdentity = environment.clientCertificate?.identity
        switch environment.proxies {
        case .success(let proxies)?: options.proxies = proxies
        case .failure?: return false
        case nil: break
        }
        guard let transfer = try? Transfer(options: options, delegate: self) else { return false }
        RequestDriver.defaultEngine.start(transfer)
        return true
    }

    // MARK: - Reports (network thread: memory only)

    func transfer(_ transfer: Transfer, didReceiveHead response: ReceivedResponse) -> NSError? {
        // An answer that will change nothing is not read to its end.
        guard response.statusCode == 304 || (200..<300).contains(response.statusCode) else {
            return TransportErrors.make(NSURLErrorCancelled, url: request.url, underlying: nil)
        }
        received.withLock {
            $0.head = response
            $0.body = Data()
        }
        return nil
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        let fits = received.withLock { received -> Bool in
            guard received.body.count + bytes.count <= bodyLimit else { return false }
            received.body.append(contentsOf: bytes)
            return true
        }
        if fits { return .accepted }
        return .abort(TransportErrors.make(NSURLErrorDataLengthExceedsMaximum, url: request.url, underlying: nil,
                                           description: "The revalidated answer is larger than the cache keeps."))
    }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {}

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        let body = received.withLock { $0.body }
        Self.queue.async { [self] in
            if error == nil, let response { apply(response, body: body) }
            _ = Self.running.withLock { $0.remove(slot) }
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
            index.refresh(key: key, with: CacheRules.merging(stored, with: head), for: request, receivedAt: Date())
            return
        }
        switch CacheRules.effect(of: head, for: request) {
        case .none:
            return
        case .invalidate:
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
