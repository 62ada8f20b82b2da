@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Connects a transfer to its request's driver. Its methods run on the
/// network thread: they ask the machine (under the driver's lock) and hand
/// everything else (the output stream, user callbacks, completion) to other
/// queues. It holds the front-end strongly for the transfer's life, so a
/// request nobody else keeps still runs to its end.
final class TransferSink: TransferDelegate {
    private let driver: RequestDriver
    private let frontend: any RequestFrontend
    private let fixedWriter: ResponseBodyWriter?
    /// The driver may install a writer later (`divertOutput(to:)`): look it up.
    private let divertible: Bool

    /// Download rate caps (the operation's, its graph's): a piece over budget
    /// pauses the transfer until a timer resumes it.
    private let limiters: [TransferRateLimiter]

    init(driver: RequestDriver, frontend: any RequestFrontend, writer: ResponseBodyWriter?, divertible: Bool = false,
         limiters: [TransferRateLimiter] = []) {
        self.driver = driver
        self.frontend = frontend
        fixedWriter = writer
        self.divertible = divertible
        self.limiters = limiters
    }

    /// The writer of the output, if the body goes to one.
    private var writer: ResponseBodyWriter? {
        if let fixedWriter { return fixedWriter }
        return divertible ? driver.writer : nil
    }

    func transfer(_ transfer: Transfer, didReceiveHead response: ReceivedResponse) -> NSError? {
        assert(driver.engine.isReportingThread, "transfer reports come from the engine's thread")
        switch driver.headReceived(transfer.tag, response) {
        case .ignore:
            return TransferStateMachine.cancellationError(for: transfer.options.request)
        case .refuse(let error, let outcome):
            driver.deliverRefused(outcome)
            return error
        case .proceed(let route, let restartOutput):
            let writer = self.writer
            if restartOutput { writer?.restart() }
            // A streamed body's caller gets the head before the first byte.
            if route == .output { writer?.announceHead(response) }
            frontend.didReceiveHead(response, route: route, writer: writer)
            return nil
        }
    }

    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyDisposition {
        assert(driver.engine.isReportingThread, "transfer reports come from the engine's thread")
        // Before the rate caps count the piece: it comes again once resumed.
        guard frontend.admitsBody(transfer) else { return .pause }
        if !limiters.isEmpty, let wait = TransferRateLimiter.take(bytes.count, from: limiters) {
            // curl hands the same piece over again once resumed; a timer, not a wait.
            let engine = driver.engine
            DispatchQueue.global().asyncAfter(deadline: .now() + wait) { [weak transfer] in
                if let transfer { engine.resumeReceiving(transfer) }
            }
            return .pause
        }
        guard let (writer, action) = driver.bodyReceived(transfer, bytes, divertible: divertible, fixedWriter: fixedWriter) else {
            // The output is full: the piece comes again, and is counted then.
            for limiter in limiters { limiter.refund(bytes.count) }
            return .pause
        }
        switch action {
        case .kept:
            return .accepted
        case .keptWithProgress(let progress):
            frontend.didReceiveBody(bytes, progress: progress, writer: nil)
            return .accepted
        case .forward(let progress):
            // Already queued to the writer, in the step that counted it.
            frontend.didReceiveBody(bytes, progress: progress, writer: writer)
            return .accepted
        case .promote(_, let held, let progress, _):
            // Already queued to the writer, held bytes first; progress covers both.
            var both = held
            both.append(contentsOf: bytes)
            both.withUnsafeBytes { frontend.didReceiveBody($0, progress: progress, writer: writer) }
            return .accepted
        case .refuse:
            return .abort(TransferStateMachine.cancellationError(for: transfer.options.request))
        }
    }

    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64) {
        guard driver.isCurrent(transfer.tag) else { return }
        frontend.didSendBody(bytes: bytesSent, total: totalBytesSent, expected: totalBytesExpected)
    }

    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?) {
        let (tag, timings, driver) = (transfer.tag, transfer.timings, self.driver)
        guard let writer else {
            driver.handle(.transferCompleted(tag: tag, response, error, timings))
            return
        }
        // After every byte of this transfer is in the stream.
        writer.perform { driver.handle(.transferCompleted(tag: tag, response, error, timings)) }
    }
}
