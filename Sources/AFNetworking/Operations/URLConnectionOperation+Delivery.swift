import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The end of an operation: the output is finished (stream closed, partial
/// file moved), then completion work runs (cookies, cache, and in
/// `HTTPRequestOperation` the serializer and success/failure blocks), then
/// the operation is finished — in that order, so a dependent operation never
/// starts before the blocks of the one it depends on have returned.
extension URLConnectionOperation {
    /// Closes the output and records the final outcome. For a stream this
    /// happens on the writer's queue, after every byte queued before it.
    func finishOutput(_ outcome: TransferStateMachine.Outcome) {
        guard let writer = core.withLock({ $0.writer }) else {
            outputFinished(outcome)
            return
        }
        if let error = outcome.error, error.domain == NSURLErrorDomain, error.code == NSURLErrorCancelled {
            writer.discardPending()
        }
        let file = settings.withLock { $0.resumableFile }
        writer.close(writing: outcome.bodyToWrite) { [self] failure, memory in
            var final = outcome
            if final.error == nil, let failure { final.error = failure }
            final.memoryBody = memory
            if final.error == nil, let file, let status = final.statusCode, status == 200 || status == 206 {
                do {
                    try file.complete()
                } catch {
                    final.error = error as NSError
                }
            }
            outputFinished(final)
        }
    }

    /// The output is final: `responseData`, `response` and `error` now hold
    /// their last values. Completion work follows.
    private func outputFinished(_ outcome: TransferStateMachine.Outcome) {
        core.withLock { $0.machine.outputFinished(outcome) }
        runCompletion(outcome)
    }

    /// The operation is over: `isFinished` becomes true.
    func completionFinished() {
        handle { core in
            core.machine.completionFinished()
            return .none
        }
    }

    /// Stores the final response's cookies and updates the cache: stores a
    /// storable answer, refreshes an entry a 304 confirmed, drops an entry a
    /// newer answer made obsolete. Off the network thread, before the
    /// operation finishes, so a request started after it sees all of it.
    func recordResponse(_ outcome: TransferStateMachine.Outcome) {
        NetworkThread.assertNotCurrent()
        if let confirmation = outcome.revalidatedBy, let request = outcome.finalRequest {
            CookieHandling.store(from: confirmation, for: request)
            if let key = outcome.originalRequest?.url?.absoluteString {
                CacheIndex.index(for: URLCache.shared).refresh(key: key, with: confirmation, receivedAt: Date())
            }
            return
        }
        guard !outcome.servedFromCache, case .received(let head)? = outcome.response else { return }
        if let request = outcome.finalRequest {
            CookieHandling.store(from: head, for: request)
        }
        guard outcome.error == nil, let original = outcome.originalRequest else { return }
        let key = head.url.absoluteString
        switch CacheRules.effect(of: head, for: original) {
        case .none:
            return
        case .invalidate:
            CacheIndex.index(for: URLCache.shared).invalidate(original, key: key)
        case .store:
            guard let data = outcome.memoryBody else { return }
            storeInCache(head, data: data, for: original)
        }
    }

    /// Stores the response, through the cache-response block if one is set.
    private func storeInCache(_ head: ReceivedResponse, data: Data, for original: URLRequest) {
        let (block, policy) = settings.withLock { ($0.cacheResponse, $0.securityPolicy) }
        guard let response = head.httpURLResponse else { return }
        // Stored under the URL that produced it (after any redirect), and
        // tagged with the security policy it was fetched under.
        var key = original
        key.url = response.url ?? original.url
        let tag = policy.map(CacheRules.policyTag) ?? CacheRules.standardTag
        let userInfo: [AnyHashable: Any] = [CacheRules.policyKey: tag]
        var cached: CachedURLResponse? = CachedURLResponse(response: response, data: data, userInfo: userInfo, storagePolicy: .allowed)
        if let block, let proposed = cached { cached = block(self, proposed) }
        guard let cached, !isCancelled, let keyString = key.url?.absoluteString else { return }
        CacheIndex.index(for: URLCache.shared).store(cached, for: key, key: keyString, policyTag: tag, receivedAt: Date())
    }

    /// Asks the cache about the request (off the network thread: the first
    /// question about a URL may read the disk) and tells the machine.
    func lookUpCache(for request: URLRequest) {
        NetworkThread.assertNotCurrent()
        let policy = settings.withLock { $0.securityPolicy }
        let plan = CacheRules.plan(for: request, cache: .shared, policyTag: policy.map(CacheRules.policyTag) ?? CacheRules.standardTag)
        handle { $0.machine.cacheLookupFinished(plan) }
    }
}

extension TransferStateMachine.Outcome {
    /// The status code of the final response, if it is an HTTP one.
    var statusCode: Int? {
        switch response {
        case .received(let head)?: return head.statusCode
        case .cached(let cached)?: return (cached.response as? HTTPURLResponse)?.statusCode
        case nil: return nil
        }
    }
}
