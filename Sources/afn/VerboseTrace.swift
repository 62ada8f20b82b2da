import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// `-v`: the exchange as it happens, on stderr, curl-style: `>` for what is
/// sent, `<` for what arrives, `*` for the rest (redirects, challenges,
/// retries, the cache, metrics, errors). Each request line and its header
/// fields are those actually sent on each hop (a retry, a redirect, the
/// cache's conditional request with `If-None-Match` / `If-Modified-Since`),
/// read from the library's activity log at trace level; credentials and
/// cookies are shown as `<redacted>`. Each response head is printed as it
/// arrives, as received, before its body (a slow body follows its head, as
/// in curl), not once the exchange is over.
final class VerboseTrace: Sendable {
    /// The lines of the last head printed when it arrived: the final head is
    /// printed at the end only when it was not (one the library refused).
    private let lastShown = LockedState<[String]>([])

    /// The operation's logger: hop request lines, their fields and retries go to stderr.
    var logger: Logger {
        var logger = Logger(label: "afn.verbose") { _ in VerboseLogHandler() }
        logger.logLevel = .trace
        return logger
    }

    /// The body's size, before the first hop (the log does not show bodies).
    func sending(_ request: URLRequest) {
        if let body = request.httpBody {
            emit(["* request body: \(body.count) bytes"])
        } else if request.httpBodyStream != nil {
            emit(["* request body: a stream of \(request.value(forHTTPHeaderField: "Content-Length") ?? "unknown") bytes"])
        }
    }

    /// Prints each response head of `operation` when it arrives, and reports
    /// each redirect and authentication challenge, leaving their handling as
    /// it would be without the trace: the redirect block set here is the only
    /// one, so it applies `redirectLimit` (`--max-redirs`) itself.
    /// `operation.completionQueue` must be `callbackQueue`: heads are printed there.
    func attach(to operation: HTTPRequestOperation, redirectLimit: RedirectLimit?) {
        operation.setHeadReceivedBlock { head in
            // The hop's request lines, still on the log's queue, come first.
            RequestLog.flush()
            let lines = StatusAndHeaders.lines(received: head)
            self.lastShown.withLock { $0 = lines }
            self.emit(lines.map { "< " + $0 })
        }
        operation.setRedirectResponseBlock { _, proposed, response in
            let next: URLRequest? = if let redirectLimit { redirectLimit.follow(proposed) } else { proposed }
            guard (response as? HTTPURLResponse) != nil else { return next }
            let line = next == nil
                ? "* not following the redirect to \(proposed.url?.absoluteString ?? "?"): --max-redirs \(redirectLimit?.maximum ?? 0) reached"
                : "* following the redirect to \(proposed.url?.absoluteString ?? "?")"
            // After its head (queued on callbackQueue when it arrived), before the next hop is sent.
            callbackQueue.sync { self.emit([line]) }
            return next
        }
        operation.setWillSendRequestForAuthenticationChallengeBlock { operation, challenge in
            let space = challenge.protectionSpace
            let status = (challenge.failureResponse as? HTTPURLResponse).map { "\($0.statusCode) " } ?? ""
            let scheme = space.authenticationMethod.replacingOccurrences(of: "NSURLAuthenticationMethod", with: "")
            callbackQueue.sync {
                self.emit(["* \(status)challenge: \(scheme) realm \"\(space.realm ?? "")\" at \(space.host):\(space.port)",
                           "* answering it (attempt \(challenge.previousFailureCount + 1)) with the -u credentials if any"])
            }
            operation.performDefaultHandling(for: challenge)
        }
    }

    /// The end of the exchange: for the cache's answer, the stored head (as
    /// received when it was stored) after the 304 that confirmed it; the
    /// final head if it was not printed on arrival; the metrics and the
    /// error, if any.
    func finished(_ exchange: Exchange) {
        // What the log queue still holds (the last hop's lines) comes first.
        RequestLog.flush()
        var lines: [String] = []
        if let head = exchange.receivedHead {
            let headLines = StatusAndHeaders.lines(received: head)
            if headLines != lastShown.value { lines += headLines.map { "< " + $0 } }
        } else if exchange.response != nil {
            lines.append(exchange.revalidationHead != nil
                ? "* the server confirmed the cached response; it is the answer:"
                : "* answered from the cache, nothing sent:")
            lines += StatusAndHeaders.storedLines(exchange).map { "* " + $0 }
        }
        if let metrics = exchange.metrics {
            lines += metrics.traceLines
        }
        if let error = exchange.error {
            lines.append("* error: \(ResponsePrinter.describe(error))")
        }
        emit(lines)
    }

    private func emit(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        Console.err(lines.joined(separator: "\n") + "\n")
    }
}

extension TransferMetrics {
    /// The metrics as `-v` prints them.
    var traceLines: [String] {
        let milliseconds = { (seconds: TimeInterval) in String(format: "%.1f ms", seconds * 1000) }
        return [
            "* timing: dns \(milliseconds(domainLookup)), connect \(milliseconds(connect)), tls \(milliseconds(secureConnection)), "
                + "first byte \(milliseconds(timeToFirstByte)), total \(milliseconds(total))",
            "* \(httpVersion) to \(remoteAddress ?? "an unknown address"), \(reusedConnection ? "reused" : "new") connection, "
                + "\(redirectCount) redirect(s), \(bytesSent) bytes sent, \(bytesReceived) bytes received",
        ]
    }
}

/// Writes the library's trace-level activity records that describe what is
/// sent — `GET <url>` per hop, `> Name: value` per field, `retry in …` — to
/// stderr in `-v`'s format; the rest (`-v` prints heads itself) is dropped.
struct VerboseLogHandler: LogHandler {
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let text = event.message.description
        let written: String?
        switch event.level {
        case .trace where text.hasPrefix("> "):
            written = text
        case .debug where event.metadata?["hop"] != nil:
            written = "> " + text
        case .debug where text.hasPrefix("retry in "):
            written = "* " + text
        default:
            written = nil
        }
        if let written { Console.err(written + "\n") }
    }
}
