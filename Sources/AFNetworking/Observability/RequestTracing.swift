@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tracing

/// Where a request's spans come from: the tracer that was active and the
/// `ServiceContext` that was current when the request was made (an
/// operation's init, a session task's creation, an async verb's call) — the
/// task-local ones of the caller, which a queue's thread no longer sees when
/// the request starts. A graph replaces the context with its own span's.
///
/// nil everywhere when no tracer is bootstrapped (or bound with
/// `withTracer`): then no span is started and no header is added.
struct TraceOrigin: Sendable {
    let tracer: any Tracer
    let context: ServiceContext

    /// The caller's tracer and context, or nil when the tracer does nothing.
    static var current: TraceOrigin? {
        // The common case first, with a cast to a concrete type: nothing
        // bootstrapped or bound (every request asks this when it is made).
        if InstrumentationSystem.instrument is NoOpInstrument { return nil }
        let tracer = InstrumentationSystem.tracer
        if tracer is NoOpTracer { return nil }
        return TraceOrigin(tracer: tracer, context: ServiceContext.current ?? .topLevel)
    }

    /// The same tracer, under `parent`.
    func under(_ parent: ServiceContext) -> TraceOrigin {
        TraceOrigin(tracer: tracer, context: parent)
    }
}

/// The spans of one request's attempts (OpenTelemetry's rule: one client
/// span per request sent — a redirect, a retry, an answered challenge, a
/// resumed download each send one). A value kept in the driver's `Core`:
/// spans are opened, their end recorded (with the instant curl reported it,
/// possibly on the network thread) and ended later, off the lock and off the
/// network thread, by whoever flushes (the next attempt, or the request's end).
struct RequestSpans {
    /// One attempt's span and what its end recorded.
    struct Attempt {
        let tag: UInt64
        let span: any Span
        var status: Int?
        var error: NSError?
        var endedAt: DefaultTracerClock.Instant?
    }

    /// Attempts started so far: the next one's `http.request.resend_count`.
    private(set) var started = 0
    /// Spans not ended yet, ended or not by their transfer.
    private var attempts: [Attempt] = []
    /// The request has ended: spans of later reports are not kept.
    private var closed = false

    var isEmpty: Bool { attempts.isEmpty }

    /// An attempt's span is open; returns its resend count.
    mutating func opened(_ span: any Span, tag: UInt64) -> Bool {
        guard !closed else { return false }
        started += 1
        attempts.append(Attempt(tag: tag, span: span))
        return true
    }

    /// The attempt `tag` ended (its response's status, its error).
    mutating func attemptEnded(tag: UInt64, status: Int?, error: NSError?) {
        guard let index = attempts.firstIndex(where: { $0.tag == tag && $0.endedAt == nil }) else { return }
        attempts[index].status = status
        attempts[index].error = error
        attempts[index].endedAt = DefaultTracerClock.now
    }

    /// The spans whose attempt ended, to be ended by the caller (off the lock).
    mutating func takeEnded() -> [Attempt] {
        guard attempts.contains(where: { $0.endedAt != nil }) else { return [] }
        let ended = attempts.filter { $0.endedAt != nil }
        attempts.removeAll { $0.endedAt != nil }
        return ended
    }

    /// The request ended: every span left, the open ones with `error` (an
    /// attempt cancelled or cut off before its transfer reported).
    mutating func close(error: NSError?) -> [Attempt] {
        closed = true
        let now = DefaultTracerClock.now
        let all = attempts.map { attempt -> Attempt in
            var attempt = attempt
            if attempt.endedAt == nil {
                attempt.error = error
                attempt.endedAt = now
            }
            return attempt
        }
        attempts = []
        return all
    }
}

/// OpenTelemetry's HTTP client attributes, and the span ends.
enum RequestTracing {
    /// Starts an attempt's client span for `request` under `origin`, and
    /// writes what the tracer injects (a W3C tracer: `traceparent`) into the
    /// request's headers. The library writes no header of its own.
    static func startAttempt(of request: inout URLRequest, origin: TraceOrigin, resendCount: Int) -> any Span {
        let method = request.httpMethod ?? "GET"
        let span = origin.tracer.startSpan(method, context: origin.context, ofKind: .client)
        let url = request.url
        span.attributes["http.request.method"] = method
        if let url { span.attributes["url.full"] = fullURL(url) }
        if let host = url?.host { span.attributes["server.address"] = host }
        if let port = url.flatMap(serverPort) { span.attributes["server.port"] = port }
        if resendCount > 0 { span.attributes["http.request.resend_count"] = resendCount }
        var carrier = InjectedHeaders()
        origin.tracer.inject(span.context, into: &carrier, using: HeaderInjector())
        for (name, value) in carrier.fields where HeaderInjector.isSendable(name: name, value: value) {
            request.setValue(value, forHTTPHeaderField: name)
        }
        return span
    }

    /// Ends spans whose attempt ended (never under a lock, never on the network thread).
    static func end(_ attempts: [RequestSpans.Attempt]) {
        for attempt in attempts {
            let span = attempt.span
            if let status = attempt.status {
                span.attributes["http.response.status_code"] = status
            }
            if let error = attempt.error {
                span.attributes["error.type"] = errorType(error)
                span.recordError(error)
                span.setStatus(SpanStatus(code: .error, message: error.localizedDescription))
            } else if let status = attempt.status, status >= 400 {
                span.attributes["error.type"] = String(status)
                span.setStatus(SpanStatus(code: .error))
            }
            span.end(at: attempt.endedAt ?? DefaultTracerClock.now)
        }
    }

    /// The URL without user information (OpenTelemetry's `url.full` must not carry credentials).
    static func fullURL(_ url: URL) -> String {
        guard url.user != nil || url.password != nil,
              var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.url?.absoluteString ?? url.absoluteString
    }

    /// The port the request goes to: the URL's, else the scheme's default.
    static func serverPort(_ url: URL) -> Int? {
        if let port = url.port { return port }
        switch url.scheme?.lowercased() {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }

    /// A low-cardinality name of a failure: its error domain and code
    /// (`NSURLErrorDomain -1001`), the same for every request that fails that way.
    static func errorType(_ error: NSError) -> String {
        "\(error.domain) \(error.code)"
    }
}

/// The header fields a tracer injects, in order.
struct InjectedHeaders: Sendable {
    var fields: [(name: String, value: String)] = []
}

/// Hands a tracer's propagation fields to the request's headers.
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout InjectedHeaders) {
        carrier.fields.append((key, value))
    }

    /// A field a tracer injected goes out only when it is a valid header
    /// (a token name, a value without CR, LF or NUL): a tracer cannot split
    /// the request.
    static func isSendable(name: String, value: String) -> Bool {
        RequestValidation.isToken(name) && RequestValidation.isFieldValue(value)
    }
}
