import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redirects, one transfer per hop. Following them here rather than inside
/// libcurl lets the redirect block decide each hop, applies cookies, the
/// security policy and header hygiene per hop, and rebuilds request bodies.
extension URLConnectionOperation {
    /// CFNetwork's limit; the next redirect fails with NSURLErrorHTTPTooManyRedirects.
    static let maximumRedirects = 16

    /// Decides what a redirect or challenge response leads to. Runs on the
    /// processing queue: user blocks never run on the network thread.
    func followUp(_ response: ReceivedResponse, body: Data) {
        guard canContinueHops else {
            if isCancelled { finishCancelled() }
            return
        }
        switch response.statusCode {
        case 401, 407:
            answerChallenge(response, body: body)
        default:
            followRedirect(response, body: body)
        }
    }

    private func followRedirect(_ response: ReceivedResponse, body: Data) {
        let (current, count, block) = locked { (hopRequest, redirectCount, redirectResponse) }
        guard count < URLConnectionOperation.maximumRedirects else {
            transferDidEnd(response: response, error: TransportErrors.make(NSURLErrorHTTPTooManyRedirects, url: response.url, underlying: nil))
            return
        }
        let proposed: URLRequest
        switch RedirectRules.request(following: response, from: current) {
        case .success(let request): proposed = request
        case .failure(let error):
            transferDidEnd(response: response, error: error)
            return
        }
        let next: URLRequest?
        if let block {
            next = block(self, proposed, response.makeHTTPURLResponse())
        } else {
            next = proposed
        }
        guard let next else {
            finishWithInterimResponse(response, body: body)
            return
        }
        guard canContinueHops else {
            if isCancelled { finishCancelled() }
            return
        }
        CookieHandling.store(from: response, for: current)
        locked {
            redirectCount += 1
            authenticationFailures = 0
        }
        beginTransfer(Hop(request: next, credentials: nil))
    }
}

/// How a redirected request is made from the one that was redirected, as
/// browsers and NSURLConnection do it.
enum RedirectRules {
    static func request(following response: ReceivedResponse, from request: URLRequest) -> Result<URLRequest, NSError> {
        guard let target = response.redirectURL, let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            return .failure(TransportErrors.make(NSURLErrorUnsupportedURL, url: response.redirectURL ?? response.url, underlying: nil,
                                                 description: "A redirect may only lead to an http or https URL."))
        }
        var next = request
        next.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        let becomesGET: Bool
        switch response.statusCode {
        case 303: becomesGET = method != "GET" && method != "HEAD"
        case 301, 302: becomesGET = method == "POST"
        default: becomesGET = false   // 307, 308 keep the method and the body
        }
        if becomesGET {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for name in ["Content-Type", "Content-Length", "Transfer-Encoding"] { next.setValue(nil, forHTTPHeaderField: name) }
        } else if let stream = request.httpBodyStream {
            // The body was consumed by the first hop: send a fresh copy, or fail.
            guard let copyable = stream as? NSCopying, let fresh = copyable.copy(with: nil) as? InputStream else {
                return .failure(TransportErrors.make(NSURLErrorRequestBodyStreamExhausted, url: target, underlying: nil))
            }
            next.httpBodyStream = fresh
        }
        if !sameOrigin(request.url, target) {
            // Credentials and cookies meant for one origin never go to another.
            for name in ["Authorization", "Proxy-Authorization", "Cookie"] { next.setValue(nil, forHTTPHeaderField: name) }
        }
        return .success(next)
    }

    static func sameOrigin(_ lhs: URL?, _ rhs: URL?) -> Bool {
        guard let lhs, let rhs else { return false }
        return lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased()
            && effectivePort(lhs) == effectivePort(rhs)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}
