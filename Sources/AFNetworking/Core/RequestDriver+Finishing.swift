@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The end of a request: the output closed, then completion work.
extension RequestDriver {
    /// Closes the output and records the final outcome. For a stream this
    /// happens on the writer's queue, after every byte queued before it.
    func finishOutput(_ outcome: TransferStateMachine.Outcome) {
        guard let frontend else { return }
        guard let writer else {
            frontend.outputIsFinal(outcome, driver: self)
            return
        }
        if outcome.isCancellation, frontend.dropsQueuedBodyOnCancel {
            writer.discardPending()
        }
        if outcome.restartsOutput { writer.restart() }
        writer.close(writing: outcome.bodyToWrite) { [self] failure, memory in
            var final = outcome
            if final.error == nil, let failure { final.error = failure }
            final.memoryBody = memory
            let closed = frontend.outputDidClose(final)
            // A `ResponseBytes` consumer learns how the body ended (after its last byte).
            writer.chunks?.finish(response: closed.urlResponse, error: closed.error)
            frontend.outputIsFinal(closed, driver: self)
        }
    }

    /// The output is final: `response`, `error` and the body now hold their
    /// last values. Completion work follows (the front-end's `runCompletion`).
    func outputFinished(_ outcome: TransferStateMachine.Outcome) {
        let (timings, spans) = markOutputFinished(outcome)
        // Built only when someone logs (the request's logger, or a started instance's).
        RequestLog.finished(outcome, metrics: timings.map { TransferMetrics($0, redirects: outcome.redirects) },
                            to: frontend?.activityLogger)
        guard !spans.isEmpty else {
            frontend?.runCompletion(outcome)
            return
        }
        // Spans end before completion work, so whoever the completion wakes
        // sees them ended; the tracer's code runs off the network thread.
        guard engine.isReportingThread else {
            RequestTracing.end(spans)
            frontend?.runCompletion(outcome)
            return
        }
        let frontend = self.frontend
        CompletionDefaults.processingQueue.async {
            RequestTracing.end(spans)
            frontend?.runCompletion(outcome)
        }
    }
}

extension TransferStateMachine.Outcome {
    /// The final response as a `URLResponse` (nil when the request ended without one).
    var urlResponse: URLResponse? { response?.urlResponse }
}
