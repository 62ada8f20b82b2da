import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The credential of an `AuthenticationInterceptor` and its refreshes, as a
/// value: events return what to do, the interceptor does it outside its lock.
/// One refresh at a time; requests that need the credential meanwhile wait in
/// `waiting` and are all answered when it ends.
struct AuthenticationRefreshState<Credential: Sendable> {
    /// A request waiting for the refresh: an attempt to adapt, or a failed
    /// attempt to send again.
    enum Waiter {
        case adapt(URLRequest, @Sendable (Result<URLRequest, Error>) -> Void)
        case retry(@Sendable (RetryResult) -> Void)
    }

    /// What the interceptor does after parking a waiter.
    enum Step {
        /// Nothing: a refresh is under way and will answer the waiter.
        case wait
        /// Start the refresh of this credential.
        case refresh(Credential)
        /// The credential changed since the caller looked: look again.
        case again(Waiter)
        /// Fail every waiter with this error (too many refreshes).
        case fail([Waiter], AuthenticationError)
    }

    private(set) var credential: Credential?
    /// Changes with every credential set or refreshed, so a caller that read
    /// one outside the lock can tell whether it is still the current one.
    private(set) var generation: UInt64 = 0
    private(set) var isRefreshing = false
    /// `generation` when the refresh under way began: a credential the caller
    /// set since then is not replaced by the refresh's.
    private var generationAtRefresh: UInt64 = 0
    private(set) var waiting: [Waiter] = []
    /// When the refreshes inside the window started (monotonic seconds).
    private var refreshTimes: [Double] = []

    init(credential: Credential?) {
        self.credential = credential
    }

    /// The caller set a credential: later requests use it (a refresh under
    /// way still answers its waiters with the credential it gets).
    mutating func set(_ credential: Credential?) {
        self.credential = credential
        generation &+= 1
    }

    /// Parks `waiter` until a fresh credential is there. `seen` is the
    /// generation of the credential the caller judged (stale, or refused).
    mutating func park(_ waiter: Waiter, seen: UInt64, now: Double, window: (interval: TimeInterval, maximumAttempts: Int)?) -> Step {
        if isRefreshing {
            waiting.append(waiter)
            return .wait
        }
        guard seen == generation, let credential else { return .again(waiter) }
        if let window {
            refreshTimes.removeAll { now - $0 > window.interval }
            if refreshTimes.count >= window.maximumAttempts {
                return .fail([waiter], .excessiveRefresh)
            }
        }
        refreshTimes.append(now)
        isRefreshing = true
        generationAtRefresh = generation
        waiting.append(waiter)
        return .refresh(credential)
    }

    /// The refresh ended: every waiter, to be answered with `result`. A second
    /// answer to the same refresh (the authenticator's mistake) finds none.
    /// The fresh credential becomes the current one unless the caller set
    /// one meanwhile (a logout's nil included), which stands.
    mutating func refreshed(_ result: Result<Credential, Error>) -> [Waiter] {
        guard isRefreshing else { return [] }
        isRefreshing = false
        if case .success(let fresh) = result, generation == generationAtRefresh { set(fresh) }
        defer { waiting = [] }
        return waiting
    }
}
