import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Rewrites a request just before each attempt is sent (beyond 2.x; the shape
/// of Alamofire's adapter): the first attempt and every retry, so a token
/// refreshed meanwhile is what the retry carries.
///
/// `adapt` runs on the library's processing queue (never the network thread,
/// nor the thread that started the request), under no lock of the library; it
/// may answer later, from any thread. An error ends the request with that
/// error and nothing is sent. A request cancelled meanwhile has already ended:
/// the late answer is ignored.
public protocol RequestAdapter: Sendable {
    /// Hands `completion` the request to send instead of `urlRequest` (each
    /// attempt gets the request as the caller made it, not an earlier
    /// attempt's adapted one), or the error that ends the request. Call it
    /// once; later calls are ignored.
    func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void)
}

/// What a `RequestRetrier` decided about a failed attempt.
public enum RetryResult: Sendable {
    /// Send the request again now (it is adapted again first).
    case retry
    /// Send the request again after this many seconds (cancellable meanwhile;
    /// 0 or less, or NaN: at once; +infinity: not retried; at most 365 days).
    case retryWithDelay(TimeInterval)
    /// The failed attempt is the result.
    case doNotRetry
    /// The failed attempt is the result, failing with this error instead.
    case doNotRetryWithError(Error)
}

/// Decides whether a failed attempt is sent again (beyond 2.x; the shape of
/// Alamofire's retrier).
///
/// It is asked when an attempt fails: a transport error before any of the
/// answer reached the caller, or a response whose status is outside 200–299
/// or not among the response serializer's `acceptableStatusCodes` (the
/// statuses the request would fail for). A `RetryPolicy`, when one is set, is
/// consulted first; the retrier sees only what the policy did not retry.
/// Redirects and authentication challenges are answered before: a 401 reaches
/// the retrier once no credential answered it. The body of an attempt that is
/// retried is discarded (it never reaches the caller); one that is not
/// retried is the response's body, never cut (held whole while the retrier
/// decides when it goes to memory; on an output stream or `bytes(for:)` held up
/// to 1 MiB, past which it is streamed whole and not offered to the retrier;
/// a session manager's response-decision block is asked about it at the end,
/// then its data block gets it in one piece, as for a declined redirect).
///
/// The retrier alone bounds the retries (`retryCount` counts the retries
/// already made). It runs off the network thread, under no lock of the
/// library, and may answer later from any thread; a request cancelled while it
/// decides ends at once and the late answer is ignored.
public protocol RequestRetrier: Sendable {
    /// Calls `completion` once with the decision about `request`'s failed
    /// attempt: `response` is its response (nil after a transport error),
    /// `error` why it failed (the transport's `NSURLErrorDomain` error, or the
    /// response serializer's `AFURLResponseSerializationErrorDomain` error,
    /// `NSURLErrorBadServerResponse`, naming the unacceptable status), and
    /// `retryCount` the retries made so far (0 after the first attempt).
    func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
               completion: @escaping @Sendable (RetryResult) -> Void)
}

/// An adapter and a retrier in one (Alamofire's interceptor): set it as
/// `requestInterceptor` on an operation, an operation manager or a session
/// manager. Both halves have defaults — `adapt` sends the request unchanged,
/// `retry` never retries — so a type implements only what it needs.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Sends the request unchanged.
    public func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        completion(.success(urlRequest))
    }

    /// Never retries.
    public func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
                      completion: @escaping @Sendable (RetryResult) -> Void) {
        completion(.doNotRetry)
    }
}

/// An interceptor made of parts: an adapter, a retrier, or closures.
public struct Interceptor: RequestInterceptor {
    /// Adapts each attempt; nil sends it unchanged.
    public let adapter: (any RequestAdapter)?
    /// Decides about failed attempts; nil never retries.
    public let retrier: (any RequestRetrier)?

    /// An interceptor that adapts with `adapter` and retries with `retrier`.
    public init(adapter: (any RequestAdapter)? = nil, retrier: (any RequestRetrier)? = nil) {
        self.adapter = adapter
        self.retrier = retrier
    }

    /// An interceptor from closures (see `RequestAdapter.adapt` and `RequestRetrier.retry`).
    public init(adaptHandler: (@Sendable (URLRequest, @escaping @Sendable (Result<URLRequest, Error>) -> Void) -> Void)? = nil,
                retryHandler: (@Sendable (URLRequest, HTTPURLResponse?, Error, Int, @escaping @Sendable (RetryResult) -> Void) -> Void)? = nil) {
        adapter = adaptHandler.map(ClosureAdapter.init)
        retrier = retryHandler.map(ClosureRetrier.init)
    }

    /// Adapts with `adapter`, or sends the request unchanged.
    public func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        guard let adapter else { return completion(.success(urlRequest)) }
        adapter.adapt(urlRequest, completion: completion)
    }

    /// Asks `retrier`, or does not retry.
    public func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
                      completion: @escaping @Sendable (RetryResult) -> Void) {
        guard let retrier else { return completion(.doNotRetry) }
        retrier.retry(request, response: response, dueTo: error, retryCount: retryCount, completion: completion)
    }
}

/// An adapter that is a closure.
private struct ClosureAdapter: RequestAdapter {
    let handler: @Sendable (URLRequest, @escaping @Sendable (Result<URLRequest, Error>) -> Void) -> Void

    func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        handler(urlRequest, completion)
    }
}

/// A retrier that is a closure.
private struct ClosureRetrier: RequestRetrier {
    let handler: @Sendable (URLRequest, HTTPURLResponse?, Error, Int, @escaping @Sendable (RetryResult) -> Void) -> Void

    func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
               completion: @escaping @Sendable (RetryResult) -> Void) {
        handler(request, response, error, retryCount, completion)
    }
}
