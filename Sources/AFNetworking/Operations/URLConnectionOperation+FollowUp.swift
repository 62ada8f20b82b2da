@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Redirect and challenge decisions. Both run on the processing queue (user
/// blocks never run on the network thread or under a lock); their answers go
/// back to the machine with the question's token, so an answer that arrives
/// after a cancel or pause changes nothing.
extension URLConnectionOperation {
    func askRedirect(_ question: TransferStateMachine.RedirectQuestion) {
        CompletionDefaults.processingQueue.async { self.decideRedirect(question) }
    }

    func askChallenge(_ question: TransferStateMachine.ChallengeQuestion) {
        CompletionDefaults.processingQueue.async { self.presentChallenge(question) }
    }

    private func decideRedirect(_ question: TransferStateMachine.RedirectQuestion) {
        NetworkThread.assertNotCurrent()
        let next: URLRequest?
        if let block = settings.withLock({ $0.redirectResponse }) {
            next = block(self, question.proposed, question.response.httpURLResponse)
        } else {
            next = question.proposed
        }
        driver.handle(.redirectDecided(token: question.token, next))
    }

    private func presentChallenge(_ question: TransferStateMachine.ChallengeQuestion) {
        NetworkThread.assertNotCurrent()
        let challenge = URLAuthenticationChallenge(protectionSpace: question.protectionSpace, proposedCredential: nil,
                                                   previousFailureCount: question.previousFailureCount,
                                                   failureResponse: question.response.httpURLResponse, error: nil, sender: self)
        let block = settings.withLock { settings in
            settings.handedOutChallenge = (challenge, question.token)
            return settings.authenticationChallenge
        }
        if let block {
            block(self, challenge)
        } else {
            answer(challenge, .performDefaultHandling)
        }
    }

    /// Resolves the pending challenge once; answers to any other challenge
    /// object (an old one, a second answer) are ignored.
    func answer(_ challenge: URLAuthenticationChallenge, _ answer: RequestDriver.ChallengeDisposition) {
        let token = settings.withLock { settings -> UInt64? in
            guard let handedOut = settings.handedOutChallenge, handedOut.challenge === challenge else { return nil }
            settings.handedOutChallenge = nil
            return handedOut.token
        }
        guard let token else { return }
        driver.answerChallenge(token: token, answer) { defaultCredential(for: $0, failures: $1, challengedURL: $2) }
    }

    /// Without a block: the operation's credential on the first failure (only
    /// for a challenge met on the way to the original request's origin: see
    /// `CredentialScope`), then the stored default credential when
    /// `shouldUseCredentialStorage`, then none.
    private func defaultCredential(for space: URLProtectionSpace, failures: Int, challengedURL: URL?) -> URLCredential? {
        let (credential, useStorage) = settings.withLock { ($0.credential, $0.shouldUseCredentialStorage) }
        var candidates: [URLCredential] = []
        if let credential, CredentialScope.covers(space, originalURL: request.url, challengedURL: challengedURL) {
            candidates.append(credential)
        }
        if useStorage, let stored = StoredCredentials.defaultCredential(for: space),
           !candidates.contains(where: { $0.user == stored.user && $0.password == stored.password }) {
            candidates.append(stored)
        }
        return failures < candidates.count ? candidates[failures] : nil
    }
}

/// The operation answers its challenges (2.7: the connection's sender).
extension URLConnectionOperation: URLAuthenticationChallengeSender {
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
