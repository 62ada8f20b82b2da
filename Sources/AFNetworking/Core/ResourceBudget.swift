@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// A request's total time budget (`timeoutIntervalForResource` of an
/// operation or of a session's configuration), kept by its driver: the clock
/// runs exactly while the lifecycle's phase is executing — it stops while an
/// operation is paused and resumes where it stopped — and the request fails
/// with `NSURLErrorTimedOut` once the budget is spent. A value: the driver
/// changes it under its lock and sets the one timer it asks for after.
struct ResourceBudget {
    /// What the timeout error says about where the budget came from.
    let description: String
    /// The failing URL of the timeout error.
    let url: URL?
    private(set) var remaining: TimeInterval
    /// Uptime nanoseconds when the current run began, while the clock runs.
    private(set) var runningSince: UInt64?
    /// Names the current run: a timer of an earlier run is stale.
    private(set) var run: UInt64 = 0
    private(set) var expired = false

    /// What the driver does with the timer after a phase change.
    enum TimerChange: Equatable {
        case none
        /// Set a timer for run `run` firing after `delay` seconds.
        case arm(run: UInt64, delay: TimeInterval)
        /// Cancel the current run's timer.
        case disarm
    }

    /// A budget of `limit` seconds; nil when there is none (0, negative, or
    /// longer than a transfer's longest idle timeout: "infinite").
    init?(limit: TimeInterval, url: URL?, description: String) {
        guard limit > 0, limit.isFinite, limit <= TransferOptions.longestIdleTimeout else { return nil }
        remaining = limit
        self.url = url
        self.description = description
    }

    /// Starts or stops the clock as the phase moves into or out of executing.
    mutating func phaseChanged(from before: TransferStateMachine.Phase, to after: TransferStateMachine.Phase,
                               now: UInt64) -> TimerChange {
        guard !expired else { return .none }
        if after == .executing, runningSince == nil {
            runningSince = now
            run += 1
            return .arm(run: run, delay: max(0, remaining))
        }
        if before == .executing, after != .executing, let since = runningSince {
            remaining -= Double(now &- since) / 1e9
            runningSince = nil
            return .disarm
        }
        return .none
    }

    /// Whether a timer of `run` may still be kept (its run is the current, running one).
    func isCurrent(run: UInt64) -> Bool {
        !expired && runningSince != nil && self.run == run
    }

    /// The timer of `run` fired: true when it ends the request now.
    mutating func expire(run: UInt64) -> Bool {
        guard isCurrent(run: run) else { return false }
        expired = true
        return true
    }

    /// The error the request fails with.
    var error: NSError {
        TransportErrors.make(NSURLErrorTimedOut, url: url, underlying: nil, description: "The request timed out (\(description)).")
    }
}
