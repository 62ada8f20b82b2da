@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session task's `state` is not stored: it is read off the transfer
/// machine, so it can never disagree with what the transfer is doing.
extension TransferStateMachine {
    /// The `URLSessionTask.State` this lifecycle shows.
    var taskState: URLSessionTask.State {
        switch state {
        case .waiting(cancelled: false), .pausedBeforeStart, .paused:
            // Never resumed (tasks are created suspended).
            return .suspended
        case .waiting(cancelled: true):
            return .canceling
        case .lookingUpCache, .running, .awaitingFollowUp, .waitingToRetry, .adapting, .decidingRetry:
            return isSuspended ? .suspended : .running
        case .delivering(let outcome):
            return outcome.isCancellation ? .canceling : .running
        case .completing, .finished:
            return .completed
        case .modifying:
            preconditionFailure("taskState read while the state is being modified")
        }
    }

    /// Whether `resume()` has been called (the task left `.waiting`).
    var hasStarted: Bool {
        if case .waiting = state { return false }
        return true
    }

    /// Whether the output (memory or a stream) is still to be chosen: the
    /// next start or resume begins the first journey with the output it is
    /// given. Once chosen it stays: a stream that appears later (an
    /// `outputStream` read or set after the start) is not written to.
    var outputIsUnchosen: Bool {
        switch state {
        case .waiting, .pausedBeforeStart: return true
        default: return false
        }
    }
}

extension TransferStateMachine.Outcome {
    /// Whether it ended with `NSURLErrorCancelled`.
    var isCancellation: Bool {
        guard let error else { return false }
        return error.domain == NSURLErrorDomain && error.code == NSURLErrorCancelled
    }
}
