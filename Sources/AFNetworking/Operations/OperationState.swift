/// The lifecycle of a `URLConnectionOperation`, as in AFNetworking 2.7.
///
///     ready ──▶ executing ──▶ finished
///       ▲  ╲        │
///       │   ╲       ▼
///       └─── paused ◀┘
///
/// Moves not in `canTransition(to:isCancelled:)` are ignored, never trapped.
enum OperationState: Equatable {
    case ready
    case executing
    case paused
    case finished

    /// The table of legal moves. `isCancelled` additionally lets a ready or
    /// paused operation finish without ever executing (2.7 allowed it from
    /// ready only; a cancelled paused operation would otherwise stay paused
    /// forever and hold its queue slot).
    func canTransition(to next: OperationState, isCancelled: Bool) -> Bool {
        switch (self, next) {
        case (.ready, .executing), (.ready, .paused),
             (.executing, .paused), (.executing, .finished),
             (.paused, .ready):
            return true
        case (.ready, .finished), (.paused, .finished):
            return isCancelled
        default:
            return false
        }
    }

    /// The key Foundation's `OperationQueue` observes for this state.
    var keyPath: String {
        switch self {
        case .ready: return "isReady"
        case .executing: return "isExecuting"
        case .paused: return "isPaused"
        case .finished: return "isFinished"
        }
    }
}
