import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A data task's answer to its response (the did-receive-response delegate
/// call: allow, cancel, become a download) and the task's end, which waits
/// for that answer. A value: events go in, what to do comes out.
///
/// The body keeps flowing while the question is open (the common answer,
/// `.allow`, then costs nothing); only the end is held back: an outcome that
/// is final before the answer is parked and released by it.
struct ResponseDecision {
    enum State {
        /// Nothing asked yet.
        case open
        /// The delegate was asked; `parked` is the task's end if it came first.
        case asked(parked: TransferStateMachine.Outcome?)
        case allowed
        case cancelled
        /// `.becomeDownload` was answered but the delegate has not yet been
        /// told of the download task: the task's end waits (parked here) so
        /// the did-become call comes before any call about the download.
        case becomingDownload(parked: TransferStateMachine.Outcome?)
        /// `.becomeDownload`, announced: the body goes to a file.
        case becameDownload
    }

    enum Action {
        case none
        /// Continue the task's end with this outcome.
        case proceed(TransferStateMachine.Outcome)
        /// Cancel the running task.
        case cancelTask
        /// Move the body to a file for a new download task, announce it, then
        /// call `downloadAnnounced()` for the end to continue.
        case becomeDownload
    }

    private(set) var state = State.open

    /// A response head for the output arrived; false when nothing needs asking
    /// (asked before, or `mustAsk` false: only `.allow` could come back).
    mutating func responseArrived(mustAsk: Bool) -> Bool {
        guard case .open = state else { return false }
        state = mustAsk ? .asked(parked: nil) : .allowed
        return mustAsk
    }

    /// The task's outcome is final: returns it to continue with now, or nil
    /// while the answer is outstanding (it is parked until then).
    mutating func outcomeFinal(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome? {
        switch state {
        case .asked(parked: nil):
            state = .asked(parked: outcome)
            return nil
        case .becomingDownload(parked: nil):
            state = .becomingDownload(parked: outcome)
            return nil
        case .cancelled:
            return Self.cancelling(outcome)
        case .open, .allowed, .becameDownload, .asked, .becomingDownload:
            return outcome
        }
    }

    /// The delegate's answer; only the first one counts.
    mutating func decide(_ disposition: URLSession.ResponseDisposition) -> Action {
        guard case .asked(let parked) = state else { return .none }
        switch disposition {
        case .cancel:
            state = .cancelled
            return parked.map { .proceed(Self.cancelling($0)) } ?? .cancelTask
        case .becomeDownload:
            state = .becomingDownload(parked: parked)
            return .becomeDownload
        default:
            // `.allow`, and `.becomeStream` (there are no stream tasks on Linux).
            state = .allowed
            return parked.map { .proceed($0) } ?? .none
        }
    }

    /// The delegate has been told of the download task: returns the parked
    /// end to continue with, if the task ended meanwhile.
    mutating func downloadAnnounced() -> TransferStateMachine.Outcome? {
        guard case .becomingDownload(let parked) = state else {
            preconditionFailure("Invalid state for downloadAnnounced: \(state)")
        }
        state = .becameDownload
        return parked
    }

    /// `cancel()` while the answer is outstanding counts as `.cancel`.
    mutating func cancelWhileAsking() -> Action {
        guard case .asked = state else { return .none }
        return decide(.cancel)
    }

    /// Whether body pieces go to the data task's did-receive-data call.
    var deliversData: Bool {
        switch state {
        case .open, .asked, .allowed: return true
        case .cancelled, .becomingDownload, .becameDownload: return false
        }
    }

    var becameDownload: Bool {
        switch state {
        case .becomingDownload, .becameDownload: return true
        case .open, .asked, .allowed, .cancelled: return false
        }
    }

    /// A refused response: the task ends cancelled, without the body.
    private static func cancelling(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome {
        guard outcome.error == nil else { return outcome }
        var cancelled = outcome
        if let request = outcome.finalRequest ?? outcome.originalRequest {
            cancelled.error = TransferStateMachine.cancellationError(for: request)
        } else {
            cancelled.error = NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled)
        }
        cancelled.memoryBody = nil
        return cancelled
    }
}
