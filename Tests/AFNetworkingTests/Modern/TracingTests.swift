@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import InMemoryTracing
import Tracing
import XCTest

/// Spans with swift-distributed-tracing against the scripted server. Each
/// test binds its own `InMemoryTracer` with `withTracer` (a task-local
/// scope), so nothing is bootstrapped for the rest of the process: requests
/// made inside the scope take its tracer, the others record nothing.
final class TracingTests: OperationTestCase {
    private let attempts = Locked(0)

    override func setUpWithError() throws {
        try super.setUpWithError()
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        server.respond("/broken", status: 500, body: Data("no".utf8))
        let attempts = self.attempts
        server.route("/flaky") { _ in
            let attempt = attempts.withLock { count -> Int in count += 1; return count }
            return attempt == 1
                ? [.head(status: 503, headers: [("Retry-After", "0"), ("Content-Length", "4")]), .body(Data("busy".utf8)), .end]
                : [.head(status: 200, headers: [("Content-Length", "2")]), .body(Data("ok".utf8)), .end]
        }
    }

    private func operation(_ path: String, tracer: InMemoryTracer) -> HTTPRequestOperation {
        withTracer(tracer) { HTTPRequestOperation(request: request(path)) }
    }

    func testAnOperationRecordsOneClientSpanWithOpenTelemetrysAttributes() throws {
        let tracer = InMemoryTracer()
        let outcome = run(operation("/ok", tracer: tracer))
        XCTAssertNil(outcome.error)
        let spans = tracer.finishedSpans
        XCTAssertEqual(spans.count, 1, "ended before the completion block ran")
        let span = try XCTUnwrap(spans.first)
        XCTAssertEqual(span.operationName, "GET")
        XCTAssertEqual(span.kind, .client)
        XCTAssertEqual(span.attributes["http.request.method"]?.toSpanAttribute(), "GET")
        XCTAssertEqual(span.attributes["url.full"]?.toSpanAttribute(), .string(url("/ok").absoluteString))
        XCTAssertEqual(span.attributes["server.address"]?.toSpanAttribute(), "127.0.0.1")
        XCTAssertEqual(span.attributes["server.port"]?.toSpanAttribute(), .int64(Int64(server.port)))
        XCTAssertEqual(span.attributes["http.response.status_code"]?.toSpanAttribute(), .int64(200))
        XCTAssertNil(span.attributes["http.request.resend_count"], "the first attempt")
        XCTAssertNil(span.attributes["error.type"])
        XCTAssertNil(span.status)
        XCTAssertNil(span.parentSpanID, "no span was current: a root")
        // The tracer's own propagation fields went out with the request.
        let sent = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(sent.headers[InMemoryTracer.traceIDKey], [span.traceID])
        XCTAssertEqual(sent.headers[InMemoryTracer.spanIDKey], [span.spanID])
    }

    func testWithoutATracerNothingIsRecordedAndNoHeaderIsAdded() {
        let tracer = InMemoryTracer()
        let outcome = run(HTTPRequestOperation(request: request("/ok")))
        XCTAssertNil(outcome.error)
        XCTAssertTrue(tracer.finishedSpans.isEmpty)
        let sent = server.requests.last
        XCTAssertEqual(sent?.headers[InMemoryTracer.traceIDKey], [])
        XCTAssertEqual(sent?.headers["traceparent"], [])
    }

    func testTheSpanIsAChildOfTheContextCurrentWhenTheOperationWasMade() throws {
        let tracer = InMemoryTracer()
        let (parent, operation) = withTracer(tracer) { () -> (InMemorySpan, HTTPRequestOperation) in
            let parent = tracer.startSpan("job")
            let operation = ServiceContext.withValue(parent.context) { HTTPRequestOperation(request: request("/ok")) }
            return (parent, operation)
        }
        XCTAssertNil(run(operation).error)
        parent.end()
        let child = try XCTUnwrap(tracer.finishedSpans.first { $0.operationName == "GET" })
        XCTAssertEqual(child.parentSpanID, parent.spanID)
        XCTAssertEqual(child.traceID, parent.traceID)
    }

    func testAStatusOf400OrMoreMarksTheSpanAsAnError() throws {
        let tracer = InMemoryTracer()
        let outcome = run(operation("/broken", tracer: tracer))
        XCTAssertNotNil(outcome.error, "2.x's acceptable codes refuse a 500")
        let span = try XCTUnwrap(tracer.finishedSpans.first)
        XCTAssertEqual(span.attributes["http.response.status_code"]?.toSpanAttribute(), .int64(500))
        XCTAssertEqual(span.attributes["error.type"]?.toSpanAttribute(), "500")
        XCTAssertEqual(span.status?.code, .error)
    }

    func testATransportFailureRecordsItsErrorAndNoStatus() throws {
        let tracer = InMemoryTracer()
        let refused = URLRequest(url: URL(string: "http://127.0.0.1:\(Fixtures.refusedPort)/ok")!)
        let outcome = run(withTracer(tracer) { HTTPRequestOperation(request: refused) })
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotConnectToHost)
        let span = try XCTUnwrap(tracer.finishedSpans.first)
        XCTAssertNil(span.attributes["http.response.status_code"])
        XCTAssertEqual(span.attributes["error.type"]?.toSpanAttribute(), .string("\(NSURLErrorDomain) \(NSURLErrorCannotConnectToHost)"))
        XCTAssertEqual(span.status?.code, .error)
        XCTAssertEqual(span.errors.count, 1)
    }

    func testEachAttemptOfARetriedRequestIsASpanAndTheSecondCountsAResend() throws {
        let tracer = InMemoryTracer()
        let operation = operation("/flaky", tracer: tracer)
        var policy = RetryPolicy()
        policy.maximumAttempts = 2
        operation.retryPolicy = policy
        XCTAssertNil(run(operation).error)
        let spans = tracer.finishedSpans
        XCTAssertEqual(spans.count, 2)
        XCTAssertEqual(spans.map { $0.attributes["http.response.status_code"]?.toSpanAttribute() }, [.int64(503), .int64(200)])
        XCTAssertNil(spans[0].attributes["http.request.resend_count"])
        XCTAssertEqual(spans[1].attributes["http.request.resend_count"]?.toSpanAttribute(), .int64(1))
        // Each attempt carried its own span's identifiers.
        XCTAssertEqual(server.requests.map { $0.headers[InMemoryTracer.spanIDKey] }, spans.map { [$0.spanID] })
    }

    func testTheURLOfTheSpanCarriesNoUserInformation() throws {
        var components = URLComponents(url: url("/ok"), resolvingAgainstBaseURL: false)!
        components.user = "alice"
        components.password = "secret"
        let tracer = InMemoryTracer()
        let operation = withTracer(tracer) { HTTPRequestOperation(request: URLRequest(url: components.url!)) }
        XCTAssertNil(run(operation).error)
        let full = try XCTUnwrap(tracer.finishedSpans.first?.attributes["url.full"]?.toSpanAttribute())
        XCTAssertEqual(full, .string(url("/ok").absoluteString))
    }

    func testASessionTaskRecordsASpan() throws {
        let tracer = InMemoryTracer()
        let manager = URLSessionManager(sessionConfiguration: .ephemeral)
        defer { manager.invalidateSessionCancelingTasks(true) }
        let done = expectation(description: "task")
        let task = withTracer(tracer) {
            manager.dataTask(with: request("/ok"), completionHandler: { _, _, _ in done.fulfill() })
        }
        task.resume()
        wait(for: [done], timeout: 10)
        let span = try XCTUnwrap(tracer.finishedSpans.first)
        XCTAssertEqual(tracer.finishedSpans.count, 1)
        XCTAssertEqual(span.kind, .client)
        XCTAssertEqual(span.attributes["http.response.status_code"]?.toSpanAttribute(), .int64(200))
        XCTAssertEqual(server.requests.last?.headers[InMemoryTracer.spanIDKey], [span.spanID])
    }

    func testAnAsyncVerbRecordsASpanUnderTheCallersContext() async throws {
        let tracer = InMemoryTracer()
        let manager = HTTPSessionManager(baseURL: server.baseURL)
        let parent = tracer.startSpan("caller")
        _ = try await withTracer(tracer) {
            try await ServiceContext.withValue(parent.context) { try await manager.get("ok") }
        }
        parent.end()
        let child = try XCTUnwrap(tracer.finishedSpans.first { $0.operationName == "GET" })
        XCTAssertEqual(child.parentSpanID, parent.spanID)
        manager.invalidateSessionCancelingTasks(true)
    }

    func testAGraphRecordsAParentSpanWhoseChildrenAreItsNodesSpans() throws {
        let tracer = InMemoryTracer()
        let graph = RequestGraph()
        graph.name = "nightly"
        let first = try graph.add(HTTPRequestOperation(request: request("/ok")), name: "first")
        let okURL = url("/ok")
        try graph.add(name: "second", dependencies: [first]) { _ in HTTPRequestOperation(request: URLRequest(url: okURL)) }
        let ended = Locked<[String]?>(nil)
        let done = expectation(description: "graph")
        graph.setCompletionBlock(queue: .global()) { _ in
            ended.value = tracer.finishedSpans.map(\.operationName)
            done.fulfill()
        }
        withTracer(tracer) { graph.start() }
        wait(for: [done], timeout: 10)
        XCTAssertEqual(ended.value?.sorted(), ["GET", "GET", "nightly"], "every span ended before the completion block")
        let spans = tracer.finishedSpans
        let parent = try XCTUnwrap(spans.first { $0.operationName == "nightly" })
        XCTAssertEqual(parent.kind, .internal)
        XCTAssertNil(parent.status)
        for child in spans where child.operationName == "GET" {
            XCTAssertEqual(child.parentSpanID, parent.spanID)
        }
    }

    func testAGraphWithAFailedNodeEndsItsSpanAsAnError() throws {
        let tracer = InMemoryTracer()
        let graph = RequestGraph()
        try graph.add(HTTPRequestOperation(request: request("/broken")))
        let done = expectation(description: "graph")
        graph.setCompletionBlock(queue: .global()) { _ in done.fulfill() }
        withTracer(tracer) { graph.start() }
        wait(for: [done], timeout: 10)
        let parent = try XCTUnwrap(tracer.finishedSpans.first { $0.operationName == "RequestGraph" }, "the default name")
        XCTAssertEqual(parent.status?.code, .error)
    }

    func testAW3CTracersTraceparentGoesOutAndAHostileFieldDoesNot() throws {
        let tracer = HeaderWritingTracer(fields: [
            ("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            ("bad\r\nname", "x"),
            ("x-split", "a\r\nInjected: yes"),
        ])
        let outcome = run(withTracer(tracer) { HTTPRequestOperation(request: request("/ok")) })
        XCTAssertNil(outcome.error)
        let sent = try XCTUnwrap(server.requests.last)
        XCTAssertEqual(sent.headers["traceparent"], ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"])
        XCTAssertEqual(sent.headers["Injected"], [])
        XCTAssertEqual(sent.headers["x-split"], [])
    }

    func testTheSpansOfAttemptsAreValuesWithoutIO() {
        var spans = RequestSpans()
        let tracer = InMemoryTracer()
        XCTAssertTrue(spans.opened(tracer.startSpan("GET"), tag: 1))
        XCTAssertEqual(spans.started, 1)
        spans.attemptEnded(tag: 1, status: 307, error: nil)
        XCTAssertTrue(spans.opened(tracer.startSpan("GET"), tag: 2))
        XCTAssertEqual(spans.takeEnded().map(\.status), [307])
        spans.attemptEnded(tag: 99, status: 200, error: nil)   // not an attempt of this request: ignored
        let closing = spans.close(error: NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled))
        XCTAssertEqual(closing.map(\.tag), [2])
        XCTAssertEqual(closing.first?.error?.code, NSURLErrorCancelled, "open when the request ended: cancelled")
        XCTAssertFalse(spans.opened(tracer.startSpan("GET"), tag: 3), "nothing is kept after the end")
        RequestTracing.end(closing)
        XCTAssertEqual(tracer.finishedSpans.count, 1)
    }
}

/// A tracer that records through an `InMemoryTracer` and injects fixed
/// fields (a W3C tracer's `traceparent`, or hostile ones).
private struct HeaderWritingTracer: Tracer {
    let fields: [(String, String)]
    let recorder = InMemoryTracer()

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> InMemorySpan {
        recorder.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        for (name, value) in fields { injector.inject(value, forKey: name, into: &carrier) }
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}
}
