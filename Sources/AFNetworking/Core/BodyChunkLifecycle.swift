import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The lifecycle of a streamed response body (`ResponseBytes`), as a value:
/// no I/O, no lock, no continuation. `BodyChunkBuffer` keeps it behind its
/// lock, feeds it the producer's events (head, chunk, end) and the
/// consumer's (next, cancel), and carries out the returned actions after
/// unlocking. Kept apart so every (state, event) pair is tested without a socket.
///
/// Chunks wait here until the consumer takes them; each byte that leaves —
/// handed over or dropped — is reported as `released`, which is what lets the
/// response writer unpause the transfer (the writer counts a byte as pending
/// until it is released, so a consumer that stops reading stops curl).
struct BodyChunkLifecycle {
    /// How the producer side ended.
    enum End: Equatable {
        case complete
        case failed(NSError)
    }

    enum Phase: Equatable {
        /// The transfer may still deliver chunks.
        case open
        /// The transfer ended; chunks still waiting are handed out first.
        case ended(End)
        /// The consumer saw the end (or the failure): every later `next` is nil.
        case drained
        /// The consumer gave up (its task was cancelled, or it dropped the sequence).
        case cancelled
    }

    /// What the consumer's `next()` gets.
    enum Delivery: Equatable {
        case chunk(Data)
        case end
        case failure(NSError)
        case cancelled
    }

    /// What a call of `next()` must do.
    enum NextAction: Equatable {
        /// Answer at once; `released` bytes left the buffer.
        case deliver(Delivery, released: Int)
        /// Suspend: a later event resumes the consumer.
        case wait
    }

    /// What arriving bytes must do.
    enum ReceiveAction: Equatable {
        /// Kept for a later `next()`.
        case buffered
        /// The consumer was waiting: resume it with these bytes (released as they are handed over).
        case resumeConsumer(Data, released: Int)
        /// Nobody will read them: release them at once.
        case discard(released: Int)
    }

    /// What the end of the transfer or the consumer's cancel must do.
    struct EndActions: Equatable {
        /// Resume the head's waiter with this (nil: it was answered before, or nothing waits).
        var head: Result<URLResponse, NSError>?
        /// Resume the suspended consumers with these, oldest first.
        var consumers: [Delivery] = []
        /// Bytes dropped from the buffer.
        var released = 0
        /// Stop the transfer (the consumer cancelled while it was running).
        var cancelTransfer = false
    }

    private(set) var phase = Phase.open
    /// Whether the head was handed to its waiter (once, by whichever event comes first).
    private(set) var headAnswered = false
    /// Consumers suspended in `next()` (several iterators of one sequence
    /// may wait at once: each chunk goes to the one that asked first).
    private(set) var waitingConsumers = 0
    var consumerWaiting: Bool { waitingConsumers > 0 }
    private var chunks: [Data] = []
    /// Index of the oldest chunk in `chunks` (taken ones are compacted away in bulk).
    private var first = 0
    private(set) var bufferedBytes = 0
    /// The most bytes that waited at once (tests check the bound).
    private(set) var peakBufferedBytes = 0

    // MARK: - Producer (the response writer's queue)

    /// The final head arrived; true when it must be handed to the waiter now.
    mutating func headArrived() -> Bool {
        guard phase == .open, !headAnswered else { return false }
        headAnswered = true
        return true
    }

    /// A piece of body.
    mutating func received(_ chunk: Data) -> ReceiveAction {
        guard phase == .open else { return .discard(released: chunk.count) }
        guard !chunk.isEmpty else { return .buffered }
        if waitingConsumers > 0 {
            waitingConsumers -= 1
            return .resumeConsumer(chunk, released: chunk.count)
        }
        chunks.append(chunk)
        bufferedBytes += chunk.count
        peakBufferedBytes = max(peakBufferedBytes, bufferedBytes)
        return .buffered
    }

    /// The transfer ended (`error` nil: the whole body arrived). `response`
    /// answers a head nobody answered yet (one from the cache, or a redirect
    /// that was not followed, never reported as a head).
    mutating func finished(response: URLResponse?, error: NSError?) -> EndActions {
        guard phase == .open else { return EndActions() }
        let end = error.map(End.failed) ?? .complete
        phase = .ended(end)
        var actions = EndActions()
        if !headAnswered {
            headAnswered = true
            if let error {
                actions.head = .failure(error)
            } else if let response {
                actions.head = .success(response)
            } else {
                actions.head = .failure(NSError(domain: NSURLErrorDomain, code: NSURLErrorBadServerResponse))
            }
        }
        if waitingConsumers > 0 {
            // The end (an error included) to the oldest; the others find the sequence over.
            actions.consumers = [takeEnd()] + Array(repeating: .end, count: waitingConsumers - 1)
            waitingConsumers = 0
        }
        return actions
    }

    // MARK: - Consumer

    /// The consumer asks for the next chunk.
    mutating func next() -> NextAction {
        switch phase {
        case .cancelled:
            // Reported once; after it the sequence is over, as after an error.
            phase = .drained
            return .deliver(.cancelled, released: 0)
        case .drained:
            return .deliver(.end, released: 0)
        case .open, .ended:
            if first < chunks.count {
                let chunk = chunks[first]
                first += 1
                bufferedBytes -= chunk.count
                if first == chunks.count || first >= 64 {
                    chunks.removeFirst(first)
                    first = 0
                }
                return .deliver(.chunk(chunk), released: chunk.count)
            }
            if phase == .open {
                waitingConsumers += 1
                return .wait
            }
            return .deliver(takeEnd(), released: 0)
        }
    }

    /// The consumer gave up: what waits is dropped, a running transfer stopped.
    mutating func cancel() -> EndActions {
        var actions = EndActions()
        switch phase {
        case .cancelled, .drained:
            return actions
        case .open:
            actions.cancelTransfer = true
            if !headAnswered {
                headAnswered = true
                actions.head = .failure(NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled))
            }
        case .ended:
            break
        }
        phase = .cancelled
        actions.released = bufferedBytes
        chunks = []
        first = 0
        bufferedBytes = 0
        if waitingConsumers > 0 {
            actions.consumers = Array(repeating: .cancelled, count: waitingConsumers)
            waitingConsumers = 0
            phase = .drained   // reported: a later next() finds the sequence over
        }
        return actions
    }

    /// The end, once: after it every `next()` is nil.
    private mutating func takeEnd() -> Delivery {
        guard case .ended(let end) = phase else { return .end }
        phase = .drained
        switch end {
        case .complete: return .end
        case .failed(let error): return .failure(error)
        }
    }
}
