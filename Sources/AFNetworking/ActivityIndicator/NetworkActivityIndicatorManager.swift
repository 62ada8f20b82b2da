@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// AFNetworking's `AFNetworkActivityIndicatorManager` without UIKit: counts
/// the requests in flight (operations and session tasks, from their
/// notifications) and turns that into a debounced "visible" flag whose
/// changes go to an action block on the main queue.
///
/// Each operation or task is counted at most once: a finish, suspend or
/// complete of an object that is not counted (a task cancelled while
/// suspended, or never resumed) changes nothing, so it cannot cancel out
/// another request's activity.
open class NetworkActivityIndicatorManager: NSObject, @unchecked Sendable {
    // @unchecked: mutable state lives in `state` (LockedState); the observer
    // tokens are written once in init.

    private struct State {
        var isEnabled = false
        var activityCount = 0
        var activationDelay: TimeInterval = 1.0
        var completionDelay: TimeInterval = 0.17
        var machine = ActivityIndicatorStateMachine()
        var action: (@Sendable (Bool) -> Void)?
        /// The operations and tasks counted now (weakly: a request object
        /// freed while counted must not be mistaken for a new one).
        var counted: [ObjectIdentifier: Weak] = [:]
    }

    private struct Weak {
        weak var object: AnyObject?
    }

    private static let sharedInstance = NetworkActivityIndicatorManager()
    private let state = LockedState(State())
    private var observers: [NSObjectProtocol] = []

    /// The process-wide instance.
    public static func shared() -> NetworkActivityIndicatorManager { sharedInstance }

    /// An independent manager, observing the request notifications.
    public override init() {
        super.init()
        let center = NotificationCenter.default
        let starts: [Notification.Name] = [.AFNetworkingOperationDidStart, .AFNetworkingTaskDidResume]
        let ends: [Notification.Name] = [.AFNetworkingOperationDidFinish, .AFNetworkingTaskDidSuspend, .AFNetworkingTaskDidComplete]
        for name in starts {
            observers.append(center.addObserver(forName: name, object: nil, queue: nil) { [weak self] note in
                self?.requestStarted(note.object as AnyObject?)
            })
        }
        for name in ends {
            observers.append(center.addObserver(forName: name, object: nil, queue: nil) { [weak self] note in
                self?.requestEnded(note.object as AnyObject?)
            })
        }
    }

    deinit {
        for observer in observers { NotificationCenter.default.removeObserver(observer) }
    }

    // MARK: - Settings

    /// Whether the visible flag follows the activity (default false). Turning
    /// it off hides the indicator at once; turning it on waits for the next change.
    public var isEnabled: Bool {
        get { state[\.isEnabled] }
        set {
            apply { state in
                state.isEnabled = newValue
                return newValue ? .none : state.machine.disable()
            }
        }
    }

    /// Whether the indicator is showing.
    public var isNetworkActivityIndicatorVisible: Bool { state[\.machine.isVisible] }

    /// Requests in flight (counted whether or not the manager is enabled).
    public var activityCount: Int { state[\.activityCount] }

    /// How long activity must last before the indicator shows (default 1 s).
    public var activationDelay: TimeInterval {
        get { state[\.activationDelay] } set { state.set(\.activationDelay, to: newValue) }
    }

    /// How long the indicator stays after activity stopped (default 0.17 s).
    public var completionDelay: TimeInterval {
        get { state[\.completionDelay] } set { state.set(\.completionDelay, to: newValue) }
    }

    /// Called on the main queue with the new value each time the visible flag changes.
    @preconcurrency
    public func setNetworkingActivityActionWithBlock(_ block: (@Sendable (Bool) -> Void)?) {
        state.set(\.action, to: block)
    }

    // MARK: - Counting

    /// One more request in flight.
    public func incrementActivityCount() {
        changeCount(by: 1)
    }

    /// One request fewer (never below zero).
    public func decrementActivityCount() {
        changeCount(by: -1)
    }

    private func changeCount(by delta: Int) {
        apply { state in
            state.activityCount = max(0, state.activityCount + delta)
            return state.isEnabled ? state.machine.activityChanged(count: state.activityCount) : .none
        }
    }

    /// Counts requests whose URL is known (2.7's rule), once each.
    private func requestStarted(_ object: AnyObject?) {
        guard let object, Self.hasURL(object) else { return }
        let key = ObjectIdentifier(object)
        let isNew = state.withLock { state -> Bool in
            if let known = state.counted[key], known.object === object { return false }
            state.counted[key] = Weak(object: object)
            return true
        }
        if isNew { incrementActivityCount() }
    }

    private func requestEnded(_ object: AnyObject?) {
        guard let object else { return }
        let key = ObjectIdentifier(object)
        let wasCounted = state.withLock { state -> Bool in
            guard let known = state.counted[key], known.object === object else { return false }
            state.counted[key] = nil
            return true
        }
        if wasCounted { decrementActivityCount() }
    }

    private static func hasURL(_ object: AnyObject) -> Bool {
        if let operation = object as? URLConnectionOperation { return operation.request.url != nil }
        if let task = object as? URLSessionTask { return task.originalRequest?.url != nil }
        return false
    }

    // MARK: - Visibility

    /// Feeds the machine under the lock. A change of the visible flag is
    /// queued to the main queue before the lock is released, so the action
    /// block sees the changes in the order they happened; timers start after.
    private func apply(_ event: (inout State) -> ActivityIndicatorStateMachine.Action) {
        let (action, delays) = state.withLock { state -> (ActivityIndicatorStateMachine.Action, (TimeInterval, TimeInterval)) in
            let action = event(&state)
            if case .setVisible(let visible) = action, let block = state.action {
                DispatchQueue.main.async { block(visible) }
            }
            return (action, (state.activationDelay, state.completionDelay))
        }
        switch action {
        case .none, .setVisible:
            break
        case .startActivationTimer(let token):
            DispatchQueue.main.asyncAfter(deadline: .now() + max(0, delays.0)) { [weak self] in
                self?.apply { $0.machine.activationTimerFired(token: token, activityCount: $0.activityCount) }
            }
        case .startCompletionTimer(let token):
            DispatchQueue.main.asyncAfter(deadline: .now() + max(0, delays.1)) { [weak self] in
                self?.apply { $0.machine.completionTimerFired(token: token) }
            }
        }
    }
}
