import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Options for the requests the managers' verb methods build inside a scope,
/// without changing the shared request serializer (which other threads may be
/// building requests with):
///
/// ```swift
/// RequestOptions.with(RequestOptions(timeoutInterval: 5)) {
///     manager.get("slow", parameters: nil, success: { _, _ in }, failure: { _, _ in })
/// }
/// let reply = try await RequestOptions.with(RequestOptions(timeoutInterval: 5)) {
///     try await manager.get("slow")
/// }
/// ```
///
/// Every verb of `HTTPRequestOperationManager` and `HTTPSessionManager`
/// (callback and `async`, plain, `headers:`, `Encodable`, multipart, `bytes`,
/// `httpRequestOperation(withHTTPMethod:…)`) reads the options in scope when
/// it builds its request; the scope is the calling thread's (or task's, and
/// the child tasks it starts), so concurrent callers do not see each other's.
/// A `with` inside another replaces the outer options for its body (it
/// does not merge them); an unstructured `Task { }` started in the scope
/// keeps the options it started with, as task-locals do.
/// An option left nil keeps what the serializer gives. An option that cannot
/// be applied fails the call as a bad header does — `NSURLErrorBadURL` in
/// `NSURLErrorDomain`, through `failure(nil, error)` or thrown — and nothing
/// is sent.
public struct RequestOptions: Sendable, Equatable {
    /// The request's `timeoutInterval` for this call: the longest time, in
    /// seconds, without progress before the request fails with
    /// `NSURLErrorTimedOut` (as `URLRequest.timeoutInterval`; a session's
    /// `timeoutIntervalForRequest` still applies when it is shorter). Must be
    /// a finite number greater than 0; nil: the serializer's `timeoutInterval`.
    public var timeoutInterval: TimeInterval?

    /// Options that change nothing unless set.
    public init(timeoutInterval: TimeInterval? = nil) {
        self.timeoutInterval = timeoutInterval
    }

    /// Runs `body` with `options` applied to every verb call made in it on
    /// this thread; returns what `body` returns.
    public static func with<Result>(_ options: RequestOptions, _ body: () throws -> Result) rethrows -> Result {
        try $current.withValue(options, operation: body)
    }

    /// Runs `body` with `options` applied to every verb call made in it by
    /// this task and the child tasks it starts; returns what `body` returns.
    public static func with<Result>(_ options: RequestOptions, isolation: isolated (any Actor)? = #isolation,
                                    _ body: () async throws -> Result) async rethrows -> Result {
        try await $current.withValue(options, operation: body, isolation: isolation)
    }

    /// The options in scope (none outside `with`).
    @TaskLocal static var current = RequestOptions()

    /// Throws when an option cannot be applied (see the type's documentation).
    func check(url: URL?) throws {
        if let timeoutInterval, !(timeoutInterval.isFinite && timeoutInterval > 0) {
            var info: [String: Any] = [
                NSLocalizedDescriptionKey: "The request's timeoutInterval (\(timeoutInterval)) is not a number of seconds greater than 0; nothing was sent.",
            ]
            if let url {
                info[NSURLErrorFailingURLErrorKey] = url
                info["NSErrorFailingURLStringKey"] = url.absoluteString
            }
            throw NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL, userInfo: info)
        }
    }

    /// Sets the options on a request the serializer built.
    func apply(to request: inout URLRequest) {
        if let timeoutInterval { request.timeoutInterval = timeoutInterval }
    }
}
