@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `RequestInterceptor` that puts a credential on every attempt and
/// refreshes it when it has expired or the server refuses it (Alamofire's
/// `AuthenticationInterceptor`): the token-refresh pattern every 2.x client
/// wrote by hand around its failure blocks.
///
/// - Each attempt is adapted with the current credential
///   (`Authenticator.apply(_:to:)`); with none, it fails with
///   `AuthenticationError.missingCredential` and nothing is sent.
/// - A credential that `requiresRefresh` is refreshed before it is used.
/// - A failed attempt that `Authenticator.didRequest(_:with:failDueToAuthenticationError:)`
///   says was refused is sent again: at once if a newer credential exists
///   (`isRequest(_:authenticatedWith:)` is false), after a refresh otherwise.
///   Sent again at once only while fewer than `maximumResendsWithoutRefresh`
///   retries of the request were made (`retryCount`, the retry policy's
///   included): a refused attempt that never carried the credential (a
///   redirect to another origin drops `Authorization`) is not the sign of a
///   newer one, and would otherwise be resent without end.
/// - One refresh at a time: requests that need the credential meanwhile —
///   new ones and refused ones — are parked and all continue (or fail with
///   the refresh's error) when it ends. Five concurrent 401s make one refresh.
/// - More than `refreshWindow.maximumAttempts` refreshes within
///   `refreshWindow.interval` seconds fail with `AuthenticationError.excessiveRefresh`
///   instead of refreshing for ever (nil: no bound).
///
/// Set it as `requestInterceptor` on an operation or either manager. The
/// authenticator's refresh request must not go through this interceptor.
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestInterceptor, @unchecked Sendable {
    // @unchecked: the mutable state is inside `state` (a LockedState); the
    // rest is immutable and Sendable.

    /// The credential type the authenticator applies.
    public typealias Credential = AuthenticatorType.Credential

    /// How many refreshes are allowed within how long.
    public struct RefreshWindow: Sendable, Equatable {
        /// The window's length in seconds.
        public let interval: TimeInterval
        /// Refreshes allowed within it.
        public let maximumAttempts: Int

        /// Alamofire's defaults: 5 refreshes within 30 seconds.
        public init(interval: TimeInterval = 30, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    /// Applies and refreshes the credential.
    public let authenticator: AuthenticatorType
    /// The bound on refreshes (nil: none).
    public let refreshWindow: RefreshWindow?
    /// The retries of a request (`retryCount`) past which it is no longer
    /// sent again at once for not carrying the current credential.
    static var maximumResendsWithoutRefresh: Int { 5 }
    private let state: LockedState<AuthenticationRefreshState<Credential>>

    /// An interceptor for `authenticator`, starting with `credential`.
    public init(authenticator: AuthenticatorType, credential: Credential? = nil, refreshWindow: RefreshWindow? = RefreshWindow()) {
        self.authenticator = authenticator
        self.refreshWindow = refreshWindow
        state = LockedState(AuthenticationRefreshState(credential: credential))
    }

    /// The current credential; setting it (after a login, say) applies to the
    /// next attempts.
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set { state.withLock { $0.set(newValue) } }
    }

    // MARK: - RequestAdapter

    /// Puts the current credential on `urlRequest`, after a refresh when it needs one.
    public func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        let (credential, generation, refreshing) = state.withLock { ($0.credential, $0.generation, $0.isRefreshing) }
        guard let credential else { return completion(.failure(AuthenticationError.missingCredential)) }
        // `requiresRefresh` is the caller's code: asked outside the lock.
        guard refreshing || credential.requiresRefresh else {
            return completion(.success(applying(credential, to: urlRequest)))
        }
        park(.adapt(urlRequest, completion), seen: generation)
    }

    // MARK: - RequestRetrier

    /// Sends a refused attempt again, with a newer credential or after a refresh.
    public func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
                      completion: @escaping @Sendable (RetryResult) -> Void) {
        guard let response, authenticator.didRequest(request, with: response, failDueToAuthenticationError: error) else {
            return completion(.doNotRetry)
        }
        let (credential, generation, refreshing) = state.withLock { ($0.credential, $0.generation, $0.isRefreshing) }
        guard let credential else { return completion(.doNotRetryWithError(AuthenticationError.missingCredential)) }
        // Sent with an older credential than the current one: just send it
        // again — a bounded number of times (see the type's documentation).
        if !refreshing, !authenticator.isRequest(request, authenticatedWith: credential) {
            return completion(retryCount < Self.maximumResendsWithoutRefresh ? .retry : .doNotRetry)
        }
        park(.retry(completion), seen: generation)
    }

    // MARK: - Refreshing

    private func park(_ waiter: AuthenticationRefreshState<Credential>.Waiter, seen: UInt64) {
        let now = Double(DispatchTime.now().uptimeNanoseconds) / 1e9
        let window = refreshWindow.map { (interval: $0.interval, maximumAttempts: $0.maximumAttempts) }
        switch state.withLock({ $0.park(waiter, seen: seen, now: now, window: window) }) {
        case .wait:
            break
        case .again(let waiter):
            // The credential changed while this caller looked at the old one.
            switch waiter {
            case .adapt(let request, let completion): adapt(request, completion: completion)
            case .retry(let completion): completion(.retry)
            }
        case .fail(let waiters, let error):
            answer(waiters, with: .failure(error))
        case .refresh(let credential):
            authenticator.refresh(credential) { [self] result in
                let waiters = state.withLock { $0.refreshed(result) }
                answer(waiters, with: result)
            }
        }
    }

    private func answer(_ waiters: [AuthenticationRefreshState<Credential>.Waiter], with result: Result<Credential, Error>) {
        for waiter in waiters {
            switch (waiter, result) {
            case (.adapt(let request, let completion), .success(let credential)):
                completion(.success(applying(credential, to: request)))
            case (.adapt(_, let completion), .failure(let error)):
                completion(.failure(error))
            case (.retry(let completion), .success):
                completion(.retry)
            case (.retry(let completion), .failure(let error)):
                completion(.doNotRetryWithError(error))
            }
        }
    }

    private func applying(_ credential: Credential, to request: URLRequest) -> URLRequest {
        var adapted = request
        authenticator.apply(credential, to: &adapted)
        return adapted
    }
}
