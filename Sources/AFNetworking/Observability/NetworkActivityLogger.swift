@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// Logs what operations and session tasks do, through swift-log (2.x users
/// knew this as AFNetworkActivityLogger). Opt-in: nothing is logged until a
/// `Logger` is set, here for the whole process or on an operation or manager
/// (`logger`) for its requests.
///
/// Each event goes to the operation's or task's `logger`, else to
/// `shared`'s; and besides, to every other instance between its
/// `startLogging()` and `stopLogging()` (a second destination: a test, an
/// audit log), whatever logger the request has.
///
/// Levels: `debug` for each request sent (and its redirect and challenge
/// hops), `info` for a finished request (status, bytes, duration, metrics),
/// `error` for a failed one, `trace` for request header fields. The values
/// of `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`, and
/// a user name and password written into a URL, are never logged. Records
/// are handed to the logger on a serial queue of the package's own, never on
/// the network thread or under a lock.
public final class NetworkActivityLogger: Sendable {
    /// The process-wide logger.
    public static let shared = NetworkActivityLogger()

    private let current = LockedState<Logger?>(nil)

    /// Instances between `startLogging()` and `stopLogging()` (held until stopped).
    private static let started = LockedState<[ObjectIdentifier: NetworkActivityLogger]>([:])

    /// A logger of its own (a second destination, or for tests): it receives
    /// every request's records from `startLogging()` on.
    public init() {}

    /// Where records go; nil (the default) logs nothing.
    public var logger: Logger? {
        get { current[\.self] } set { current.set(\.self, to: newValue) }
    }

    /// From now on, every operation's and task's records also go to this
    /// instance's `logger` (2.x's `-[AFNetworkActivityLogger startLogging]`).
    /// `shared` is consulted without it; starting it changes nothing.
    public func startLogging() {
        guard self !== NetworkActivityLogger.shared else { return }
        NetworkActivityLogger.started.withLock { $0[ObjectIdentifier(self)] = self }
    }

    /// Stops what `startLogging()` started (records already handed over are still written).
    public func stopLogging() {
        NetworkActivityLogger.started.withLock { $0[ObjectIdentifier(self)] = nil }
    }

    /// The loggers an event goes to: the request's own (or the shared one),
    /// then those of the started instances.
    static func destinations(_ primary: Logger?) -> [Logger] {
        let instances = started.withLock { Array($0.values) }
        return (primary.map { [$0] } ?? []) + instances.compactMap(\.logger)
    }
}

/// The records themselves, made at the points every request passes through
/// (`RequestDriver`), for operations and tasks alike. Each record is built
/// where it happens and handed to the logger on one serial queue of its own:
/// some of those points are on the network thread, and a `LogHandler` is the
/// caller's code (it may write to a file or a socket). Order is kept.
package enum RequestLog {
    static let redactedFields: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    private static let queue = DispatchQueue(label: "AFNetworking.log")

    private static func emit(_ logger: Logger, _ write: @escaping @Sendable (Logger) -> Void) {
        queue.async { write(logger) }
    }

    /// Waits until every record handed over so far has been written (tests,
    /// and `afn -v` before it prints the end of the exchange).
    package static func flush() { queue.sync {} }

    /// A failed attempt is sent again after `delay` (the retry policy's backoff, or the server's Retry-After).
    static func retrying(after delay: TimeInterval, serverAsked: Bool, to primary: Logger?) {
        let loggers = NetworkActivityLogger.destinations(primary)
        guard !loggers.isEmpty else { return }
        let line = String(format: "retry in %.1f s", delay) + (serverAsked ? " (Retry-After)" : "")
        for logger in loggers { emit(logger) { $0.debug("\(line)") } }
    }

    /// An attempt failed and the request interceptor's retrier is asked about it.
    static func askingRetrier(_ error: NSError, retryCount: Int, to primary: Logger?) {
        let loggers = NetworkActivityLogger.destinations(primary)
        guard !loggers.isEmpty else { return }
        let line = "asking the interceptor whether to retry (\(retryCount) retries so far): \(error.localizedDescription)"
        for logger in loggers { emit(logger) { $0.debug("\(line)") } }
    }

    static func sending(_ request: URLRequest, hop: UInt64, to primary: Logger?) {
        let loggers = NetworkActivityLogger.destinations(primary)
        guard !loggers.isEmpty else { return }
        let line = "\(request.httpMethod ?? "GET") \(loggable(request.url))"
        let fields = loggers.contains(where: { $0.logLevel <= .trace })
            ? (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }).map { "> \($0.key): \(redacted($0.key, $0.value))" }
            : []
        for logger in loggers {
            emit(logger) { logger in
                logger.debug("\(line)", metadata: ["hop": "\(hop)"])
                for field in fields { logger.trace("\(field)") }
            }
        }
    }

    static func redirect(_ question: TransferStateMachine.RedirectQuestion, to primary: Logger?) {
        let loggers = NetworkActivityLogger.destinations(primary)
        guard !loggers.isEmpty else { return }
        let line = "redirect \(question.response.statusCode) → \(loggable(question.proposed.url))"
        for logger in loggers { emit(logger) { $0.debug("\(line)") } }
    }

    static func challenge(_ question: TransferStateMachine.ChallengeQuestion, to primary: Logger?) {
        let loggers = NetworkActivityLogger.destinations(primary)
        guard !loggers.isEmpty else { return }
        let space = question.protectionSpace
        let line = "challenge \(question.response.statusCode) \(space.authenticationMethod) realm \(space.realm ?? "-")"
        let failures = question.previousFailureCount
        for logger in loggers { emit(logger) { $0.debug("\(line)", metadata: ["previousFailures": "\(failures)"]) } }
    }

    static func finished(_ outcome: TransferStateMachine.Outcome, metrics measured: @autoclosure () -> TransferMetrics?,
                         to primary: Logger?) {
        let loggers = NetworkActivityLogger.destinations(primary)
        guard !loggers.isEmpty else { return }
        let request = outcome.finalRequest ?? outcome.originalRequest
        let target = "\(request?.httpMethod ?? "GET") \(loggable(request?.url))"
        var metadata: Logger.Metadata = ["bytes": "\(outcome.entityBytes)"]
        let metrics = measured()
        if let metrics { metadata["metrics"] = "\(metrics)" }
        if outcome.servedFromCache { metadata["cache"] = "hit" }
        if let error = outcome.error {
            metadata["error"] = "\(error.domain) \(error.code)"
            let line = "\(target) failed: \(error.localizedDescription)"
            for logger in loggers { emit(logger) { [metadata] in $0.error("\(line)", metadata: metadata) } }
            return
        }
        let status = outcome.statusCode.map(String.init) ?? "-"
        let duration = metrics.map { String(format: "%.1f ms", $0.total * 1000) } ?? "-"
        let line = "\(target) \(status) \(outcome.entityBytes) B \(duration)"
        // A 5xx is the server's failure and worth an operator's attention; any
        // other status (a 404 included) is an answer the caller asked for.
        let isServerFailure = outcome.statusCode.map { (500...599).contains($0) } ?? false
        for logger in loggers {
            if isServerFailure {
                emit(logger) { [metadata] in $0.error("\(line)", metadata: metadata) }
            } else {
                emit(logger) { [metadata] in $0.info("\(line)", metadata: metadata) }
            }
        }
    }

    static func redacted(_ name: String, _ value: String) -> String {
        redactedFields.contains(name.lowercased()) ? "<redacted>" : value
    }

    /// The URL without the user and password it may carry.
    static func loggable(_ url: URL?) -> String {
        guard let url else { return "(no URL)" }
        guard url.user != nil || url.password != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.url?.absoluteString ?? url.absoluteString
    }
}
