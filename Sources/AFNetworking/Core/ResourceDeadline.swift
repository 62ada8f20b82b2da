import AFNetworkingTransport
import Foundation

/// A request's total time budget (an operation's `timeoutIntervalForResource`):
/// it runs while the request runs and stops while it is paused, and calls
/// its expiry action once the budget is spent.
final class ResourceDeadline: Sendable {
    private struct State {
        var remaining: TimeInterval
        /// When the current run began (uptime nanoseconds), while armed.
        var armedAt: UInt64?
        /// Names the current run: a timer of an earlier run finds it changed.
        var run = 0
        var token: Deadlines.Token?
        var expired = false
        /// The newest phase change applied: arm and disarm run after the
        /// operation's lock is released, so two racing changes (a pause and
        /// a resume) can arrive here out of order; the older one is ignored.
        var sequence: UInt64 = 0
    }

    private let state: LockedState<State>

    init(limit: TimeInterval) {
        state = LockedState(State(remaining: limit))
    }

    /// Starts (or continues) the clock for the phase change numbered
    /// `sequence`; `expired` runs once when it reaches zero.
    func arm(sequence: UInt64, onExpiry expired: @escaping @Sendable () -> Void) {
        let scheduled = state.withLock { state -> (run: Int, remaining: TimeInterval)? in
            guard sequence > state.sequence else { return nil }
            state.sequence = sequence
            guard state.armedAt == nil, !state.expired else { return nil }
            state.armedAt = DispatchTime.now().uptimeNanoseconds
            state.run += 1
            return (state.run, state.remaining)
        }
        guard let scheduled else { return }
        let token = Deadlines.shared.add(at: .now() + max(0, scheduled.remaining)) { [self] in
            let fire = state.withLock { state -> Bool in
                guard state.run == scheduled.run, state.armedAt != nil, !state.expired else { return false }
                state.expired = true
                return true
            }
            if fire { expired() }
        }
        let stale = state.withLock { state -> Bool in
            guard state.run == scheduled.run, state.armedAt != nil else { return true }
            state.token = token
            return false
        }
        // Disarmed (or re-armed) while the timer was being set: it is not this run's any more.
        if stale { Deadlines.shared.cancel(token) }
    }

    /// Stops the clock for the phase change numbered `sequence`, keeping
    /// what is left of the budget.
    func disarm(sequence: UInt64) {
        let token = state.withLock { state -> Deadlines.Token? in
            guard sequence > state.sequence else { return nil }
            state.sequence = sequence
            guard let armedAt = state.armedAt else { return nil }
            state.remaining -= Double(DispatchTime.now().uptimeNanoseconds &- armedAt) / 1e9
            state.armedAt = nil
            defer { state.token = nil }
            return state.token
        }
        if let token { Deadlines.shared.cancel(token) }
    }
}
