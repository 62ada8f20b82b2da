import Foundation

/// When the network activity indicator shows, as AFNetworking 3 decides it:
/// activity must last `activationDelay` before it shows, and the indicator
/// stays `completionDelay` after activity stopped, so short requests and
/// back-to-back ones do not make it flicker. A value: events go in, what to
/// do comes out; timers carry a token so that one fired after the state
/// moved on changes nothing.
struct ActivityIndicatorStateMachine: Equatable {
    enum State: Equatable {
        case notActive
        case delayingStart(token: Int)
        case active
        case delayingEnd(token: Int)
    }

    enum Action: Equatable {
        case none
        /// Call `activationTimerFired(token:activityCount:)` after the activation delay.
        case startActivationTimer(token: Int)
        /// Call `completionTimerFired(token:)` after the completion delay.
        case startCompletionTimer(token: Int)
        /// The visible flag changed to this value: tell the action block.
        case setVisible(Bool)
    }

    private(set) var state = State.notActive
    private(set) var isVisible = false
    private var nextToken = 0

    /// The activity count changed (while enabled).
    mutating func activityChanged(count: Int) -> Action {
        switch state {
        case .notActive where count > 0:
            nextToken += 1
            state = .delayingStart(token: nextToken)
            return .startActivationTimer(token: nextToken)
        case .active where count == 0:
            nextToken += 1
            state = .delayingEnd(token: nextToken)
            return .startCompletionTimer(token: nextToken)
        case .delayingEnd where count > 0:
            // Activity resumed before the indicator went away: it stays.
            state = .active
            return .none
        case .notActive, .active, .delayingStart, .delayingEnd:
            return .none
        }
    }

    mutating func activationTimerFired(token: Int, activityCount: Int) -> Action {
        guard case .delayingStart(token) = state else { return .none }
        if activityCount > 0 {
            state = .active
            return setVisible(true)
        }
        state = .notActive
        return setVisible(false)
    }

    mutating func completionTimerFired(token: Int) -> Action {
        guard case .delayingEnd(token) = state else { return .none }
        state = .notActive
        return setVisible(false)
    }

    /// `isEnabled = false`: hidden at once.
    mutating func disable() -> Action {
        state = .notActive
        return setVisible(false)
    }

    private mutating func setVisible(_ visible: Bool) -> Action {
        guard isVisible != visible else { return .none }
        isVisible = visible
        return .setVisible(visible)
    }
}
