import Foundation

/// Events that find no transition in the machine's state. Each one that can
/// happen is a named race (or a call the public API makes a no-op) and
/// changes nothing; every other one cannot happen and traps with the
/// event/state pair, so a mistake shows up in the machine's own tests rather
/// than as a hang against a server (`TransferStateMachineGridTests` covers
/// every event in every state).
extension TransferStateMachine {
    /// The questions the machine asks and waits for, each named by a token.
    enum Question: String, Equatable {
        case cacheLookup, redirect, challenge, adaptedRequest, retrierDecision, retryTimer
    }

    /// An event that may arrive after the machine moved on.
    enum LateEvent: Equatable {
        /// A head, a piece of body, a completion or a failure to start, from the transfer with this tag.
        case transferReport(UInt64)
        /// The answer to the question with this token.
        case answer(UInt64, Question)
    }

    /// Why an event that changes nothing is expected.
    enum Tolerated: Equatable {
        /// A report from a transfer the machine has moved past: a cancel, a
        /// pause or a failure (decided on another thread) aborted it while the
        /// engine's reports were already on their way to the driver's lock.
        case supersededTransfer
        /// An answer to a question no longer asked: the request was
        /// cancelled, paused or failed while the cache, a decider, the
        /// interceptor or a timer was at work; or user code answered twice.
        case withdrawnQuestion
        /// A caller's `cancel()`, `pause()`, `resume()` or `start()` after the
        /// outcome was decided: the caller raced the request's end.
        case afterOutcome
        /// A call asking for what already holds: a second `start()`, a pause
        /// of a paused request, a resume of one that is not paused, a second
        /// cancel, a second suspend.
        case redundantCall
        /// A failure from the driver's side (the budget's timer) for a
        /// request paused before it ever ran: nothing is in flight to fail.
        case failureBeforeStart
    }

    /// What the machine makes of an event in its current state.
    enum Disposition: Equatable {
        case handled
        case tolerated(Tolerated)
        /// Cannot happen; the text names the event and the state.
        case impossible(String)
    }

    /// The question the machine waits for, if any.
    var pendingQuestion: (token: UInt64, question: Question)? {
        switch state {
        case .lookingUpCache(_, let token): return (token, .cacheLookup)
        case .awaitingFollowUp(_, let followUp):
            if case .redirect = followUp.kind { return (followUp.token, .redirect) }
            return (followUp.token, .challenge)
        case .adapting(_, let attempt): return (attempt.token, .adaptedRequest)
        case .decidingRetry(_, let token, _): return (token, .retrierDecision)
        case .waitingToRetry(_, let token): return (token, .retryTimer)
        case .waiting, .pausedBeforeStart, .running, .paused, .delivering, .completing, .finished, .modifying: return nil
        }
    }

    /// Whether `event` has a transition now, is a tolerated race, or cannot happen.
    func disposition(of event: LateEvent) -> Disposition {
        switch event {
        case .transferReport(let tag):
            if case .running(_, let hop) = state, hop.tag == tag { return .handled }
            guard tag > 0, tag <= nextTag else {
                return .impossible("a report from transfer \(tag), which the machine never started (last tag \(nextTag)), in state \(stateName)")
            }
            guard tag != endedTag else {
                return .impossible("a report from transfer \(tag) after its end was reported, in state \(stateName)")
            }
            return .tolerated(.supersededTransfer)
        case .answer(let token, let question):
            guard token > 0, token <= nextToken else {
                return .impossible("an answer (\(question.rawValue)) to question \(token), which the machine never asked (last token \(nextToken)), in state \(stateName)")
            }
            guard let pending = pendingQuestion, pending.token == token else { return .tolerated(.withdrawnQuestion) }
            guard pending.question == question else {
                return .impossible("a \(question.rawValue) answer to the pending \(pending.question.rawValue) question \(token), in state \(stateName)")
            }
            return .handled
        }
    }

    /// A late event that found no transition: nothing to do when it is a
    /// tolerated race; a trap naming the event and state when it cannot happen.
    func unexpected(_ event: LateEvent) -> Action {
        switch disposition(of: event) {
        case .tolerated:
            return .none
        case .impossible(let why):
            preconditionFailure("TransferStateMachine: \(why)")
        case .handled:
            preconditionFailure("TransferStateMachine: \(event) has a transition in state \(stateName) but was not taken")
        }
    }

    /// A call that changes nothing, and why that is expected (see `Tolerated`).
    func tolerate(_ reason: Tolerated) -> Action { .none }

    /// The state's case name, for trap messages (its data may be large).
    var stateName: String {
        switch state {
        case .waiting(let cancelled): return cancelled ? "waiting(cancelled)" : "waiting"
        case .pausedBeforeStart(let started): return started ? "pausedBeforeStart(started)" : "pausedBeforeStart"
        case .lookingUpCache: return "lookingUpCache"
        case .running: return "running"
        case .awaitingFollowUp: return "awaitingFollowUp"
        case .paused: return "paused"
        case .waitingToRetry: return "waitingToRetry"
        case .adapting: return "adapting"
        case .decidingRetry: return "decidingRetry"
        case .delivering: return "delivering"
        case .completing: return "completing"
        case .finished: return "finished"
        case .modifying: return "modifying"
        }
    }
}
