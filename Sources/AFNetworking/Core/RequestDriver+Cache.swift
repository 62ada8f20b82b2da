@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The cache and cookies around a request.
extension RequestDriver {
    /// Asks the cache about the request (off the network thread: the first
    /// question about a URL may read the disk) and tells the machine.
    func lookUpCache(token: UInt64, for request: URLRequest) {
        assert(!engine.isReportingThread, "storages, streams and files stay off the engine's thread")
        guard let frontend else { return }
        let environment = frontend.transferEnvironment(for: request.url)
        guard let cache = environment.cache else {
            handle(.cacheLookupFinished(token: token, .load))
            return
        }
        let tag = CacheRules.partitionTag(policy: environment.securityPolicy, clientCertificate: environment.clientCertificate,
                                          request: request)
        var background: CacheRules.BackgroundRevalidation?
        let plan = CacheRules.plan(for: request, sent: { environment.requestAsSent(request) }, cache: cache, policyTag: tag,
                                   background: &background)
        if let background {
            // With this request's settings, on its engine.
            StaleRevalidation.start(background.request, stored: background.stored, key: background.key, cache: cache, policyTag: tag,
                                    environment: environment, engine: engine)
        }
        handle(.cacheLookupFinished(token: token, plan))
    }

    /// Stores the final response's cookies and updates the cache: refreshes
    /// an entry a 304 confirmed, drops an entry a newer answer made obsolete,
    /// and returns a storable answer as a proposal for the front-end to pass
    /// through its will-cache hook and commit. Off the network thread, before
    /// the request finishes, so one started after it sees all of it.
    func recordResponse(_ outcome: TransferStateMachine.Outcome) -> CacheProposal? {
        assert(!engine.isReportingThread, "storages, streams and files stay off the engine's thread")
        guard let frontend else { return nil }
        // Made only when there is something to record: a hit has nothing.
        func makeEnvironment() -> TransferEnvironment { frontend.transferEnvironment(for: outcome.finalRequest?.url) }
        if !outcome.acceptedCredentials.isEmpty, let storage = makeEnvironment().credentialStorage {
            for (credential, space) in outcome.acceptedCredentials { storage.set(credential, for: space) }
        }
        if let confirmation = outcome.revalidatedBy, let request = outcome.finalRequest {
            let environment = makeEnvironment()
            if environment.acceptsCookies { CookieHandling.store(from: confirmation, for: request, in: environment.cookieStorage) }
            if let cache = environment.cache, let original = outcome.originalRequest, let key = original.url?.absoluteString,
               case .cached(let merged)? = outcome.response {
                let index = CacheIndex.index(for: cache)
                let status = (merged.response as? HTTPURLResponse)?.statusCode ?? 200
                if CacheRules.confirmationForbidsStoring(confirmation, status: status, request: original) {
                    index.invalidate(original, key: key)
                } else {
                    index.refresh(key: key, with: merged, for: original, receivedAt: Date())
                }
            }
            return nil
        }
        guard !outcome.servedFromCache, case .received(let head)? = outcome.response else { return nil }
        let environment = makeEnvironment()
        // A forwarding proxy's own 407 sets no cookies for the origin.
        if let request = outcome.finalRequest, environment.acceptsCookies, !head.isProxysOwnAnswer {
            CookieHandling.store(from: head, for: request, in: environment.cookieStorage)
        }
        guard let original = outcome.originalRequest, let cache = environment.cache else { return nil }
        let effect = CacheRules.effect(of: head, for: original, redirected: head.url != original.url)
        if case .invalidateTarget = effect, let target = original.url {
            // §4.4: the unsafe request's own URL, not the one its redirect
            // led to; even when the body then failed (the server answered).
            let index = CacheIndex.index(for: cache)
            index.invalidate(original, key: target.absoluteString)
            for url in CacheRules.alsoInvalidated(by: head, target: target) {
                var request = original
                request.url = url
                index.invalidate(request, key: url.absoluteString)
            }
            return nil
        }
        guard outcome.error == nil else { return nil }
        // The final URL (after any redirect): what a GET's answer is stored under.
        let key = head.url.absoluteString
        // Made only when the cache is touched (a URLRequest copy is not free).
        func finalRequest() -> URLRequest {
            var request = original
            if request.url != head.url { request.url = head.url }
            return request
        }
        switch effect {
        case .none, .invalidateTarget:
            return nil
        case .invalidate:
            CacheIndex.index(for: cache).invalidate(finalRequest(), key: key)
            return nil
        case .updateFromHead:
            var request = finalRequest()
            request.httpMethod = "GET"
            let tag = CacheRules.partitionTag(policy: environment.securityPolicy, clientCertificate: environment.clientCertificate,
                                              request: original)
            updateStoredAnswer(byHead: head, request: request, key: key, cache: cache, policyTag: tag,
                               sent: { environment.requestAsSent(request) })
            return nil
        case .store:
            // An answer earned with a credential the origin asked for is that
            // user's: no later request (which may never be challenged) gets it.
            guard !outcome.answeredChallenge, let data = outcome.memoryBody, let received = head.httpURLResponse else {
                // The body went to a stream (or is a user's): this newer
                // answer is not stored, so no older one may answer in its place.
                CacheIndex.index(for: cache).invalidate(finalRequest(), key: key)
                return nil
            }
            // Stored under the URL that produced it (after any redirect), and
            // tagged with the security policy and client identity it was
            // fetched under and the request fields it varies on.
            var keyRequest = original
            keyRequest.url = received.url ?? original.url
            let response = CacheRules.storable(received)
            let tag = CacheRules.partitionTag(policy: environment.securityPolicy, clientCertificate: environment.clientCertificate,
                                              request: original)
            var userInfo: [AnyHashable: Any] = [CacheRules.policyKey: tag]
            let varied = CacheRules.varyNames(of: response)
            if !varied.isEmpty {
                userInfo[CacheRules.varyValuesKey] = CacheRules.varyValues(for: varied, of: environment.requestAsSent(outcome.finalRequest ?? original))
            }
            CacheRules.keepReceivedHead(head, of: response, in: &userInfo)
            let proposal = CachedURLResponse(response: response, data: data, userInfo: userInfo, storagePolicy: .allowed)
            return CacheProposal(proposal: proposal, cache: cache, keyRequest: keyRequest, key: key, policyTag: tag)
        }
    }
}

extension RequestDriver {
    /// A `200` to a HEAD updates or removes the stored GET answer for its
    /// URL (RFC 9111 §4.3.5). `request` is the HEAD as a GET (the entry's key).
    private func updateStoredAnswer(byHead head: ReceivedResponse, request: URLRequest, key: String, cache: URLCache,
                                    policyTag: String, sent: () -> URLRequest) {
        let index = CacheIndex.index(for: cache)
        guard let entry = index.entry(for: request, key: key) else { return }
        switch CacheRules.update(of: entry, byHead: head, policyTag: policyTag, request: sent) {
        case .refresh(let merged): index.refresh(key: key, with: merged, for: request, receivedAt: Date())
        case .invalidate: index.invalidate(request, key: key)
        case .none: break
        }
    }
}

/// A response the cache may store, waiting for the front-end's will-cache
/// decision (a block, a delegate method that answers later).
struct CacheProposal: @unchecked Sendable {
    // @unchecked: CachedURLResponse is immutable once made.
    let proposal: CachedURLResponse
    let cache: URLCache
    let keyRequest: URLRequest
    let key: String
    let policyTag: String

    /// Stores `answer` (the proposal, or what the hook replaced it with); nil stores nothing.
    func commit(_ answer: CachedURLResponse?) {
        guard let answer else { return }
        CacheIndex.index(for: cache).store(answer, for: keyRequest, key: key, policyTag: policyTag, receivedAt: Date())
    }
}
