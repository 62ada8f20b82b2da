@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a streamed response body waits between the response writer (the
/// producer, on the writer's queue) and the one consumer of `ResponseBytes`.
///
/// It is bounded by the writer, not by itself: the writer counts a byte as
/// pending from the moment curl hands it over until this buffer reports it
/// `released` (handed to the consumer or dropped), and pauses the transfer
/// once `ResponseBodyWriter.highWater` bytes are pending. A consumer that
/// stops reading therefore stops curl, and reading lifts the pause.
///
/// The lifecycle is `BodyChunkLifecycle`, computed under the lock; the
/// continuations are resumed and the callbacks called after unlocking.
/// Nothing here blocks, and nothing runs user code.
final class BodyChunkBuffer: Sendable {
    fileprivate struct Core {
        var lifecycle = BodyChunkLifecycle()
        /// Suspended `next()` calls, oldest first (as many as the lifecycle counts).
        var consumers: [CheckedContinuation<Data?, Error>] = []
        var headWaiter: (@Sendable (Result<URLResponse, NSError>) -> Void)?
        /// The head when it arrived before anyone waited for it.
        var earlyHead: Result<URLResponse, NSError>?
        /// Told how many bytes left the buffer (the writer's accounting).
        var release: (@Sendable (Int) -> Void)?
        /// Stops the transfer (set by the front-end that made the request).
        var cancelTransfer: (@Sendable () -> Void)?
    }

    private let core = LockedState(Core())

    // MARK: - Wiring (before the transfer starts)

    /// Who is told about released bytes: the response writer (set once, when it is made).
    func connect(release: @escaping @Sendable (Int) -> Void) {
        core.withLock { $0.release = release }
    }

    /// How to stop the request when the consumer gives up.
    func onCancel(_ cancelTransfer: @escaping @Sendable () -> Void) {
        core.withLock { $0.cancelTransfer = cancelTransfer }
    }

    /// Calls `answer` once with the final response head, or the error that
    /// ended the request before one arrived (at once if that happened already).
    func whenHeadArrives(_ answer: @escaping @Sendable (Result<URLResponse, NSError>) -> Void) {
        let early = core.withLock { core -> Result<URLResponse, NSError>? in
            if let early = core.earlyHead { return early }
            core.headWaiter = answer
            return nil
        }
        if let early { answer(early) }
    }

    // MARK: - Producer (the writer's queue)

    /// The final response's head: `bytes(for:)` can return.
    func headArrived(_ response: URLResponse) {
        let waiter = core.withLock { core -> (@Sendable (Result<URLResponse, NSError>) -> Void)? in
            guard core.lifecycle.headArrived() else { return nil }
            return core.takeHeadWaiter(.success(response))
        }
        waiter?(.success(response))
    }

    /// A piece of body; its bytes count as pending in the writer until released.
    func append(_ chunk: Data) {
        let (action, consumer, release) = core.withLock { core in
            let action = core.lifecycle.received(chunk)
            let consumer: CheckedContinuation<Data?, Error>?
            if case .resumeConsumer = action { consumer = core.consumers.removeFirst() } else { consumer = nil }
            return (action, consumer, core.release)
        }
        switch action {
        case .buffered:
            break
        case .resumeConsumer(let chunk, let released):
            consumer?.resume(returning: chunk)
            release?(released)
        case .discard(let released):
            release?(released)
        }
    }

    /// The request ended: `error` nil when the whole body arrived.
    func finish(response: URLResponse?, error: NSError?) {
        run(core.withLock { core in core.take(core.lifecycle.finished(response: response, error: error)) })
    }

    /// The output stream that feeds this buffer was replaced. Before a writer
    /// took the stream (the request had not started) nothing will ever
    /// arrive: the sequence fails. Once a writer has it, the body keeps coming
    /// here and this changes nothing.
    func outputWasReplaced() {
        let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [
            NSLocalizedDescriptionKey: "The operation's outputStream was replaced after makeResponseBytes(): its body will not reach the sequence.",
        ])
        run(core.withLock { core in
            core.release == nil ? core.take(core.lifecycle.finished(response: nil, error: error)) : Work(actions: .init())
        })
    }

    // MARK: - Consumer

    /// The next chunk, nil at the end; throws the transfer's error, or
    /// `CancellationError` when the consumer's task was cancelled.
    func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, Error>) in
                let (action, release) = core.withLock { core -> (BodyChunkLifecycle.NextAction, (@Sendable (Int) -> Void)?) in
                    let action = core.lifecycle.next()
                    if action == .wait { core.consumers.append(continuation) }
                    return (action, core.release)
                }
                guard case .deliver(let delivery, let released) = action else { return }
                Self.resume(continuation, with: delivery)
                if released > 0 { release?(released) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The consumer gave up: waiting bytes are dropped and a running transfer stopped.
    func cancel() {
        run(core.withLock { core in core.take(core.lifecycle.cancel()) })
    }

    /// Bytes waiting for the consumer now, and the most that ever waited.
    var bufferedBytes: (now: Int, peak: Int) {
        core.withLock { ($0.lifecycle.bufferedBytes, $0.lifecycle.peakBufferedBytes) }
    }

    // MARK: - Carrying out

    /// An end's actions with what they need, taken under the lock.
    fileprivate struct Work {
        var actions: BodyChunkLifecycle.EndActions
        var headWaiter: (@Sendable (Result<URLResponse, NSError>) -> Void)?
        var consumers: [CheckedContinuation<Data?, Error>] = []
        var release: (@Sendable (Int) -> Void)?
        var cancelTransfer: (@Sendable () -> Void)?
    }

    private func run(_ work: Work) {
        for (consumer, delivery) in zip(work.consumers, work.actions.consumers) { Self.resume(consumer, with: delivery) }
        if let head = work.actions.head { work.headWaiter?(head) }
        if work.actions.released > 0 { work.release?(work.actions.released) }
        if work.actions.cancelTransfer { work.cancelTransfer?() }
    }

    private static func resume(_ continuation: CheckedContinuation<Data?, Error>, with delivery: BodyChunkLifecycle.Delivery) {
        switch delivery {
        case .chunk(let data): continuation.resume(returning: data)
        case .end: continuation.resume(returning: nil)
        case .failure(let error): continuation.resume(throwing: error)
        case .cancelled: continuation.resume(throwing: CancellationError())
        }
    }
}

extension BodyChunkBuffer.Core {
    /// The head's waiter for `answer`; with nobody waiting yet, `answer` is kept for them.
    mutating func takeHeadWaiter(_ answer: Result<URLResponse, NSError>) -> (@Sendable (Result<URLResponse, NSError>) -> Void)? {
        guard let waiter = headWaiter else {
            earlyHead = answer
            return nil
        }
        headWaiter = nil
        return waiter
    }

    /// Pairs `actions` with the continuation and callbacks they need.
    fileprivate mutating func take(_ actions: BodyChunkLifecycle.EndActions) -> BodyChunkBuffer.Work {
        var work = BodyChunkBuffer.Work(actions: actions, release: release,
                                        cancelTransfer: actions.cancelTransfer ? cancelTransfer : nil)
        if let head = actions.head { work.headWaiter = takeHeadWaiter(head) }
        if !actions.consumers.isEmpty {
            work.consumers = consumers
            consumers = []
        }
        if actions.cancelTransfer { cancelTransfer = nil }
        return work
    }
}
