@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a front-end hands the driver when its request has an interceptor.
struct InterceptionPlan: Sendable {
    let interceptor: any RequestInterceptor
    /// Statuses the response serializer accepts (nil: any); the retrier is
    /// asked about every other status and about every one outside 200–299.
    let serializerAcceptableStatusCodes: IndexSet?

    /// The statuses the request does not fail for.
    var acceptableStatusCodes: IndexSet {
        let success = IndexSet(integersIn: 200..<300)
        guard let serializerAcceptableStatusCodes else { return success }
        return success.intersection(serializerAcceptableStatusCodes)
    }
}

/// Asking the request interceptor: both questions run off the network thread
/// (see `Effect.placement`), after the lock is released, and
/// their answers come back as events named by the machine's token.
extension RequestDriver {
    /// Asks the interceptor to adapt an attempt's request, on the processing
    /// queue: the thread that started the request (a session verb's caller,
    /// perhaps the main thread) never runs the adapter, so a slow one cannot
    /// hold up the verb that hands back the task.
    func adapt(_ question: TransferStateMachine.AdaptQuestion) {
        let token = question.token, request = question.request
        guard let interceptor else {
            handle(.adapted(token: token, .success(request)))
            return
        }
        // Weak: an answer that never comes, or comes after the request ended, keeps nothing alive.
        let answer: @Sendable (Result<URLRequest, Error>) -> Void = { [weak self] result in
            self?.handle(.adapted(token: token, result.mapError { $0 as NSError }))
        }
        CompletionDefaults.processingQueue.async { interceptor.adapt(request, completion: answer) }
    }

    /// Asks the interceptor's retrier about a failed attempt.
    func askRetrier(_ question: TransferStateMachine.RetrierQuestion) {
        let token = question.token
        guard let interceptor else {
            handle(.retryDecided(token: token, .doNotRetry(nil)))
            return
        }
        let response = question.response?.httpURLResponse
        let error = question.error ?? Self.statusError(response, url: question.response?.url, body: question.body)
        RequestLog.askingRetrier(error, retryCount: question.retryCount, to: frontend?.activityLogger)
        interceptor.retry(question.request, response: response, dueTo: error, retryCount: question.retryCount) { [weak self] result in
            let decision: TransferStateMachine.RetrierDecision
            switch result {
            case .retry: decision = .retry(delay: nil)
            case .retryWithDelay(let delay): decision = .retry(delay: delay)
            case .doNotRetry: decision = .doNotRetry(nil)
            case .doNotRetryWithError(let error): decision = .doNotRetry(error as NSError)
            }
            self?.handle(.retryDecided(token: token, decision))
        }
    }

    /// The error a response serializer would give the unacceptable status
    /// (so a retrier sees the same error whether the attempt was retried or not).
    static func statusError(_ response: HTTPURLResponse?, url: URL?, body: Data?) -> NSError {
        let status = response?.statusCode ?? 0
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: "Request failed: \(HTTPStatusReason.phrase(forStatusCode: status)) (\(status))",
        ]
        if let url { userInfo[NSURLErrorFailingURLErrorKey] = url }
        if let response { userInfo[AFNetworkingOperationFailingURLResponseErrorKey] = response }
        if let body { userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] = body }
        return NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorBadServerResponse, userInfo: userInfo)
    }
}
