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

    /// Stores the final response's cookies and, when it may be cached, the
    /// response in `URLCache.shared`. Off the network thread, before the
    /// operation finishes, so a request started after it sees both.
    func recordResponse(_ outcome: TransferStateMachine.Outcome) {
        NetworkThread.assertNotCurrent()
        guard !outcome.servedFromCache, case .received(let head)? = outcome.response else { return }
        if let request = outcome.finalRequest {
            CookieHandling.store(from: head, for: request)
        }
        guard outcome.error == nil, let data = outcome.memoryBody, let original = outcome.originalRequest,
              CacheRules.mayStore(head, for: original) else { return }
        storeInCache(head, data: data, for: original)
    }

    /// Stores the response, through the cache-response block if one is set.
    private func storeInCache(_ head: ReceivedResponse, data: Data, for original: URLRequest) {
        let (block, policy) = settings.withLock { ($0.cacheResponse, $0.securityPolicy) }
        let cache = URLCache.shared
        // As Apple's URLCache: nothing larger than 5% of the cache, so one big
        // download never evicts everything else or stalls its completion on a
        // multi-megabyte disk write.
        guard let response = head.httpURLResponse, CacheRules.isStorable(response, for: original),
              data.count <= max(cache.memoryCapacity, cache.diskCapacity) / 20 else { return }
        // Stored under the URL that produced it (after any redirect), and
        // tagged with the security policy it was fetched under.
        var key = original
        key.url = response.url ?? original.url
        let userInfo: [AnyHashable: Any] = [CacheRules.policyKey: CacheRules.policyTag(policy)]
        var cached: CachedURLResponse? = CachedURLResponse(response: response, data: data, userInfo: userInfo, storagePolicy: .allowed)
        if let block, let proposed = cached { cached = block(self, proposed) }
        guard let cached, !isCancelled else { return }
        cache.storeCachedResponse(cached, for: key)
    }

    /// Asks `URLCache.shared` for the request (off the network thread: the
    /// cache reads its disk) and tells the machine.
    func lookUpCache(for request: URLRequest) {
        NetworkThread.assertNotCurrent()
        let policy = settings.withLock { $0.securityPolicy }
        let plan = CacheRules.plan(for: request, cache: .shared, policy: policy)
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
