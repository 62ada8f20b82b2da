@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One resolution of a challenge's answer for both front-ends: the decider
/// (an operation's block or sender, a session delegate) says what to do; the
/// front-end only knows its own default credential.
extension RequestDriver {
    /// A decider's answer, before default handling is resolved.
    enum ChallengeDisposition {
        /// Answer with this credential (nil: none, as `continueWithoutCredential`).
        case use(URLCredential?)
        case continueWithoutCredential
        case cancel
        /// What happens without a decider: the front-end's default credential, if any.
        case performDefaultHandling
    }

    /// Resolves the answer to the challenge with `token` and tells the
    /// machine (an answer to a challenge that is no longer pending changes
    /// nothing). `defaultCredential` gets the protection space, the failures
    /// so far and the URL of the request that was challenged; it runs
    /// outside the lock (it may read a storage).
    func answerChallenge(token: UInt64, _ disposition: ChallengeDisposition,
                         defaultCredential: (URLProtectionSpace, Int, URL?) -> URLCredential?) {
        let answer: TransferStateMachine.ChallengeAnswer
        switch disposition {
        case .use(let credential?): answer = .use(credential)
        case .use(nil), .continueWithoutCredential: answer = .continueWithoutCredential
        case .cancel: answer = .cancel
        case .performDefaultHandling:
            guard let pending = pendingChallenge(token: token) else { return }
            answer = defaultCredential(pending.space, pending.failures, pending.url).map { .use($0) } ?? .continueWithoutCredential
        }
        handle(.challengeAnswered(token: token, answer))
    }
}
