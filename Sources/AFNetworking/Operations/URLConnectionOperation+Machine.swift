import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Feeding the machine and carrying out what it asks: the one place where the
/// operation's lock is taken for a lifecycle change (compute under the lock,
/// act after it).
extension URLConnectionOperation {
    /// The phases around one event, for callers that react to the change.
    struct PhaseChange {
        let before: TransferStateMachine.Phase
        let after: TransferStateMachine.Phase
    }

    /// Runs `event` against the machine under the lock, then performs the
    /// action it returned and announces any phase change, after unlocking.
    @discardableResult
    func handle(_ event: (inout Core) -> TransferStateMachine.Action) -> PhaseChange {
        let (action, change, aborted) = core.withLock { core -> (TransferStateMachine.Action, PhaseChange, Transfer?) in
            let before = core.machine.phase
            let action = event(&core)
            // The registry keeps the transfer of the current hop only.
            var aborted: Transfer?
            switch action {
            case .abort(let tag), .abortAndDeliver(let tag, _):
                if core.transfer?.tag == tag { aborted = core.transfer }
                core.transfer = nil
            default:
                if let transfer = core.transfer, !core.machine.isCurrent(transfer.tag) { core.transfer = nil }
            }
            return (action, PhaseChange(before: before, after: core.machine.phase), aborted)
        }
        announce(change)
        if let aborted {
            NetworkEngine.shared.abort(aborted, reason: .cancelled)
        }
        perform(action)
        return change
    }

    /// Carries out one action of the machine. Never called with the lock held.
    func perform(_ action: TransferStateMachine.Action) {
        switch action {
        case .none, .abort:
            break
        case .lookUpCache(let request):
            lookUpCache(for: request)
        case .startTransfer(let hop):
            startTransfer(hop)
        case .abortAndDeliver(_, let outcome), .deliver(let outcome):
            finishOutput(outcome)
        case .askRedirect(let question):
            CompletionDefaults.processingQueue.async { self.askRedirect(question) }
        case .askChallenge(let question):
            CompletionDefaults.processingQueue.async { self.askChallenge(question) }
        }
    }

    /// Tells Foundation's OperationQueue (outside the lock: its observers take
    /// their own locks and call back into `isReady`/`isFinished`), and posts
    /// the 2.7 start/finish notifications.
    func announce(_ change: PhaseChange) {
        guard change.before != change.after else { return }
        // Leaving `ready` is not announced: swift-corelibs-foundation answers
        // a change of isReady by rescheduling the whole queue, which matters
        // only when an operation becomes ready (and is wasted on every start).
        let leaving = change.before == .ready ? nil : change.before.keyPath
        willChangeValue(forKey: change.after.keyPath)
        if let leaving { willChangeValue(forKey: leaving) }
        if let leaving { didChangeValue(forKey: leaving) }
        didChangeValue(forKey: change.after.keyPath)
        if change.after == .executing {
            MainQueueNotifier.shared.post(.AFNetworkingOperationDidStart, object: self)
        } else if change.before == .executing {
            MainQueueNotifier.shared.post(.AFNetworkingOperationDidFinish, object: self)
        }
    }

    /// The output stream refused bytes: the operation fails with that error.
    func outputDidFail(_ error: NSError) {
        handle { $0.machine.fail(error) }
    }
}
