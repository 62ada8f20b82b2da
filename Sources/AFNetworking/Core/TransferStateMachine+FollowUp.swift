@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers to the follow-up questions (redirect, challenge). An answer whose
/// token is not the pending question's (the request was cancelled, paused or
/// moved on meanwhile) changes nothing.
extension TransferStateMachine {
    /// How a challenge was answered. (`performDefaultHandling` is resolved by
    /// the driver into one of these: it needs the credential storage.)
    enum ChallengeAnswer {
        case use(URLCredential)
        /// No credential: the 401/407 becomes the response.
        case continueWithoutCredential
        case cancel
    }

    /// The redirect decider's answer: the request to send next, or nil to
    /// stop at the redirect (it becomes the response, its body the output).
    mutating func redirectDecided(token: UInt64, _ next: URLRequest?) -> Action {
        guard case .awaitingFollowUp(var journey, let followUp) = state, followUp.token == token,
              case .redirect = followUp.kind else { return unexpected(.answer(token, .redirect)) }
        guard let next else {
            return offeringToRetrier(declineFollowUp(journey, hop: followUp.hop, response: followUp.response), journey: journey,
                                     hop: followUp.hop)
        }
        journey.redirects += 1
        journey.authenticationFailures = 0
        journey.lastResponse = .received(followUp.response)
        var effects = FollowUpEffects()
        effects.storeCookies = (followUp.response, followUp.hop.request)
        return startHop(journey, request: next, credentials: nil, revalidates: false, after: effects)
    }

    /// The challenge decider's answer.
    mutating func challengeAnswered(token: UInt64, _ answer: ChallengeAnswer) -> Action {
        guard case .awaitingFollowUp(var journey, let followUp) = state, followUp.token == token,
              case .challenge(let offer, let space, let forProxy) = followUp.kind else { return unexpected(.answer(token, .challenge)) }
        let request = followUp.hop.request
        switch answer {
        case .cancel:
            // A proxy's refusal of CONNECT is not the origin's answer: the
            // request ends cancelled with no response rather than the proxy's head.
            let response = followUp.response.isTunnelRefusal ? nil : TransferStateMachine.ResponseValue.received(followUp.response)
            return deliver(Outcome(failure: Self.cancellationError(for: request), response: response,
                                   request: request, journey: journey))
        case .continueWithoutCredential:
            return offeringToRetrier(declineFollowUp(journey, hop: followUp.hop, response: followUp.response), journey: journey,
                                     hop: followUp.hop)
        case .use(let credential):
            guard let user = credential.user, let password = credential.password else {
                return offeringToRetrier(declineFollowUp(journey, hop: followUp.hop, response: followUp.response), journey: journey,
                                         hop: followUp.hop)
            }
            if offer.scheme == .basic, user.contains(":") {
                // RFC 7617 §2: Basic cannot carry it (the server splits at the
                // first colon and would read another user and password).
                let error = TransportErrors.make(NSURLErrorUserAuthenticationRequired, url: request.url, underlying: nil,
                                                 description: "The credential's user name contains \":\", which Basic authentication cannot carry (RFC 7617 §2); it was not sent.")
                let response = followUp.response.isTunnelRefusal ? nil : TransferStateMachine.ResponseValue.received(followUp.response)
                return deliver(Outcome(failure: error, response: response, request: request, journey: journey))
            }
            journey.authenticationFailures += 1
            var effects = FollowUpEffects()
            // A proxy's Set-Cookie is not the origin's.
            if !followUp.response.isProxysOwnAnswer { effects.storeCookies = (followUp.response, request) }
            // Remembered only once a head shows the server took it (a wrong
            // password is not stored), and only when its persistence allows.
            journey.credentialOnTrial = credential.persistence == .none ? nil
                : CredentialOnTrial(credential: credential, space: space, challengeStatus: forProxy ? 407 : 401)
            let credentials = TransferCredentials(user: user, password: password, scheme: offer.scheme, forProxy: forProxy)
            // Still the cache's question when it was one: the 304 that may
            // answer it confirms the stored response.
            return startHop(journey, request: request, credentials: credentials, revalidates: followUp.hop.revalidates, after: effects)
        }
    }

    /// The protection space and failure count of the pending challenge with
    /// `token`, and the URL of the request it challenged (the driver
    /// resolves default handling with them).
    func pendingChallenge(token: UInt64) -> (space: URLProtectionSpace, failures: Int, url: URL?)? {
        guard case .awaitingFollowUp(let journey, let followUp) = state, followUp.token == token,
              case .challenge(_, let space, _) = followUp.kind else { return nil }
        return (space, journey.authenticationFailures, followUp.hop.request.url)
    }
}
