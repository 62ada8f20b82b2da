import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP authentication (401 from the server, 407 from a proxy) with Basic and
/// Digest. The operation is the challenge's sender, as in 2.7.
extension URLConnectionOperation: URLAuthenticationChallengeSender {
    /// Answers to one challenge before the operation gives up and delivers the
    /// 401/407 itself, so a block that keeps offering a wrong credential cannot loop.
    static let maximumAuthenticationAttempts = 8

    /// A challenge and what to do with its answer (exactly once).
    struct PendingChallenge {
        let challenge: URLAuthenticationChallenge
        let resolve: (ChallengeAnswer) -> Void
    }

    enum ChallengeAnswer {
        case use(URLCredential)
        case continueWithoutCredential
        case cancel
        case performDefaultHandling
    }

    func answerChallenge(_ response: ReceivedResponse, body: Data) {
        let forProxy = response.statusCode == 407
        let (request, failures, block) = locked { (hopRequest, authenticationFailures, authenticationChallenge) }
        guard let offer = ChallengeOffer.parse(response, forProxy: forProxy),
              failures < URLConnectionOperation.maximumAuthenticationAttempts,
              let space = offer.protectionSpace(for: request.url, forProxy: forProxy) else {
            finishWithInterimResponse(response, body: body)
            return
        }
        let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: failures,
                                                   failureResponse: response.makeHTTPURLResponse(), error: nil, sender: self)
        let resolve: (ChallengeAnswer) -> Void = { [self] answer in
            switch answer {
            case .use(let credential):
                retry(request, with: credential, offer: offer, forProxy: forProxy, space: space, response: response, body: body)
            case .continueWithoutCredential:
                finishWithInterimResponse(response, body: body)
            case .cancel:
                transferDidEnd(response: response, error: cancellationError())
            case .performDefaultHandling:
                if let credential = defaultCredential(for: space, failures: failures) {
                    retry(request, with: credential, offer: offer, forProxy: forProxy, space: space, response: response, body: body)
                } else {
                    finishWithInterimResponse(response, body: body)
                }
            }
        }
        locked { pendingChallenge = PendingChallenge(challenge: challenge, resolve: resolve) }
        if let block {
            block(self, challenge)
        } else {
            answer(challenge, .performDefaultHandling)
        }
    }

    /// Without a block: the operation's credential on the first failure, then
    /// the stored default credential when `shouldUseCredentialStorage`, then none.
    private func defaultCredential(for space: URLProtectionSpace, failures: Int) -> URLCredential? {
        var candidates: [URLCredential] = []
        if let credential { candidates.append(credential) }
        if shouldUseCredentialStorage, let stored = StoredCredentials.defaultCredential(for: space),
           !candidates.contains(where: { $0.user == stored.user && $0.password == stored.password }) {
            candidates.append(stored)
        }
        return failures < candidates.count ? candidates[failures] : nil
    }

    private func retry(_ request: URLRequest, with credential: URLCredential, offer: ChallengeOffer, forProxy: Bool,
                       space: URLProtectionSpace, response: ReceivedResponse, body: Data) {
        guard let user = credential.user, let password = credential.password else {
            finishWithInterimResponse(response, body: body)
            return
        }
        guard canContinueHops else {
            if isCancelled { finishCancelled() }
            return
        }
        var again = request
        if let stream = request.httpBodyStream {
            guard let copyable = stream as? NSCopying, let fresh = copyable.copy(with: nil) as? InputStream else {
                transferDidEnd(response: response, error: TransportErrors.make(NSURLErrorRequestBodyStreamExhausted, url: request.url, underlying: nil))
                return
            }
            again.httpBodyStream = fresh
        }
        if credential.persistence != .none {
            URLCredentialStorage.shared.set(credential, for: space)
        }
        CookieHandling.store(from: response, for: request)
        locked { authenticationFailures += 1 }
        let credentials = TransferCredentials(user: user, password: password, scheme: offer.scheme, forProxy: forProxy)
        beginTransfer(Hop(request: again, credentials: credentials))
    }

    /// Resolves the pending challenge once; later answers to it are ignored.
    private func answer(_ challenge: URLAuthenticationChallenge, _ answer: ChallengeAnswer) {
        let pending: PendingChallenge? = locked {
            guard let pending = pendingChallenge, pending.challenge === challenge else { return nil }
            pendingChallenge = nil
            return pending
        }
        pending?.resolve(answer)
    }

    // MARK: URLAuthenticationChallengeSender

    /// Retries the request with `credential`.
    public func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        answer(challenge, .use(credential))
    }

    /// Gives up on authenticating: the 401/407 response becomes the result.
    public func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {
        answer(challenge, .continueWithoutCredential)
    }

    /// Cancels the operation (`NSURLErrorCancelled`).
    public func cancel(_ challenge: URLAuthenticationChallenge) {
        answer(challenge, .cancel)
    }

    /// What happens without a challenge block: the operation's credential, then stored ones.
    public func performDefaultHandling(for challenge: URLAuthenticationChallenge) {
        answer(challenge, .performDefaultHandling)
    }

    /// Same as continuing without a credential: there is no other protection space to try.
    public func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {
        answer(challenge, .continueWithoutCredential)
    }
}

/// What a 401/407 offers: the strongest scheme this library speaks, and its realm.
struct ChallengeOffer {
    let scheme: TransferCredentials.Scheme
    let realm: String?

    static func parse(_ response: ReceivedResponse, forProxy: Bool) -> ChallengeOffer? {
        let values = response.values(forField: forProxy ? "proxy-authenticate" : "www-authenticate")
        var basic: ChallengeOffer?
        for value in values {
            let lowered = value.lowercased()
            if lowered.hasPrefix("digest") {
                return ChallengeOffer(scheme: .digest, realm: realm(in: value))
            }
            if lowered.hasPrefix("basic"), basic == nil {
                basic = ChallengeOffer(scheme: .basic, realm: realm(in: value))
            }
        }
        return basic
    }

    private static func realm(in value: String) -> String? {
        guard let range = value.range(of: "realm=", options: .caseInsensitive) else { return nil }
        var rest = value[range.upperBound...]
        if rest.first == "\"" {
            rest = rest.dropFirst()
            return String(rest.prefix { $0 != "\"" })
        }
        return String(rest.prefix { $0 != "," && $0 != " " })
    }

    func protectionSpace(for url: URL?, forProxy: Bool) -> URLProtectionSpace? {
        guard let url, let host = url.host else { return nil }
        let scheme = url.scheme?.lowercased() ?? "http"
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        let method = self.scheme == .digest ? NSURLAuthenticationMethodHTTPDigest : NSURLAuthenticationMethodHTTPBasic
        if forProxy {
            return URLProtectionSpace(proxyHost: host, port: port, type: NSURLProtectionSpaceHTTPProxy, realm: realm, authenticationMethod: method)
        }
        return URLProtectionSpace(host: host, port: port, protocol: scheme, realm: realm, authenticationMethod: method)
    }
}

/// Looks credentials up in `URLCredentialStorage.shared` by the protection
/// space's fields. swift-corelibs-foundation's `URLProtectionSpace` equality
/// compares identity, so `defaultCredential(for:)` only finds the very
/// instance a credential was stored with.
enum StoredCredentials {
    static func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        let storage = URLCredentialStorage.shared
        for (stored, credentials) in storage.allCredentials where matches(stored, space) {
            return storage.defaultCredential(for: stored) ?? credentials.values.first
        }
        return nil
    }

    private static func matches(_ lhs: URLProtectionSpace, _ rhs: URLProtectionSpace) -> Bool {
        lhs.host.lowercased() == rhs.host.lowercased() && lhs.port == rhs.port
            && lhs.protocol?.lowercased() == rhs.protocol?.lowercased() && lhs.realm == rhs.realm
            && lhs.authenticationMethod == rhs.authenticationMethod && lhs.isProxy() == rhs.isProxy()
    }
}
