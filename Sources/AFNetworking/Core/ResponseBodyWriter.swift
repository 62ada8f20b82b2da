@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a response body to an `OutputStream` on a queue of its own, so the
/// caller's stream (user code, file I/O) never runs on the network thread.
///
/// Everything for one request goes through here in order: the bytes of each
/// hop, "start over" marks, bookkeeping (a resumable download's sidecar) and
/// the final close. Items wait in one list that a single job drains (one
/// dispatch per burst, not per piece). Memory stays bounded: once
/// `highWater` bytes wait, the network thread pauses the transfer
/// (`BodyDisposition.pause`), and the writer lifts the pause when it has
/// drained below `lowWater`.
final class ResponseBodyWriter: @unchecked Sendable {
    // @unchecked: `shared` is behind a lock; `stream`, `opened` and `failure`
    // are touched only by the draining job (dispatchPrecondition below).

    static let highWater = 1 << 20
    static let lowWater = 256 << 10
    private static let workQueue = DispatchQueue(label: "com.alamofire.networking.response-body", qos: .userInitiated,
                                                 attributes: .concurrent)

    private enum Item {
        case bytes(Data, generation: Int)
        case restart
        case perform(@Sendable () -> Void)
        case close(tail: Data?, done: @Sendable (NSError?, Data?) -> Void)
    }

    private struct Shared {
        var items: [Item] = []
        /// A drain job is scheduled or running.
        var draining = false
        /// Bytes enqueued and not yet written.
        var pendingBytes = 0
        /// The transfer paused because the writer was full.
        var blocked: Transfer?
        /// Bumped by `discardPending()`: bytes enqueued earlier are dropped.
        var generation = 0
        /// The most bytes ever waiting at once (tests check the bound).
        var peakPendingBytes = 0
    }

    private let queue = DispatchQueue(label: "com.alamofire.networking.response-writer", target: ResponseBodyWriter.workQueue)
    private let shared = LockedState(Shared())
    /// Told once when a write fails (any later bytes are dropped).
    private let onFailure: @Sendable (NSError) -> Void
    /// Told to let a transfer paused by a full writer receive again.
    private let engine: any TransferEngine

    // Drain-job only.
    private var stream: OutputStream
    private var opened = false
    /// Where the body begins in a file stream: its offset when opened.
    private var fileStart: off_t = 0
    private var failure: NSError?
    /// A `ResponseBytes` output: the body goes to this buffer as chunks, and
    /// a byte stays pending (counted against `highWater`) until the consumer
    /// takes it, so a consumer that stops reading pauses the transfer.
    let chunks: BodyChunkBuffer?
    /// Whether bytes were handed to `chunks` (it cannot start over after that).
    private var handedChunks = false

    init(stream: OutputStream, engine: any TransferEngine, onFailure: @escaping @Sendable (NSError) -> Void) {
        self.stream = stream
        self.engine = engine
        self.onFailure = onFailure
        chunks = (stream as? ChunkBufferOutputStream)?.buffer
        chunks?.connect { [weak self] released in self?.written(released) }
    }

    // MARK: - Network thread

    /// Whether another piece may be enqueued; if not, `transfer` is resumed
    /// once the writer has drained.
    func admit(_ transfer: Transfer) -> Bool {
        shared.withLock { shared in
            guard shared.pendingBytes >= ResponseBodyWriter.highWater else { return true }
            shared.blocked = transfer
            return false
        }
    }

    /// The final response's head, for a `ResponseBytes` output, in order with the body.
    func announceHead(_ response: ReceivedResponse) {
        guard let chunks else { return }
        // Built on the writer's queue: the network thread makes no Foundation objects.
        perform {
            if let head = response.httpURLResponse { chunks.headArrived(head) }
        }
    }

    /// Queues a piece of body for writing.
    func enqueue(_ bytes: UnsafeRawBufferPointer) {
        let data = Data(bytes)
        submit { shared in
            shared.pendingBytes += data.count
            shared.peakPendingBytes = max(shared.peakPendingBytes, shared.pendingBytes)
            return .bytes(data, generation: shared.generation)
        }
    }

    // MARK: - Any thread

    /// The most bytes that ever waited to be written.
    var peakPendingBytes: Int { shared.withLock { $0.peakPendingBytes } }

    /// The entity starts over: a file stream is truncated to nothing, a
    /// memory stream replaced by an empty one.
    func restart() {
        submit { _ in .restart }
    }

    /// Runs `work` on the writer's queue after everything queued before it.
    func perform(_ work: @escaping @Sendable () -> Void) {
        submit { _ in .perform(work) }
    }

    /// Bytes queued so far are dropped instead of written (cancellation).
    func discardPending() {
        shared.withLock { $0.generation += 1 }
    }

    /// After everything queued so far: writes `tail` (a cached body, a
    /// declined redirect's body), closes the stream and hands `done` the
    /// failure, if writing or opening failed, and the data of a memory stream.
    func close(writing tail: Data?, then done: @escaping @Sendable (NSError?, Data?) -> Void) {
        submit { _ in .close(tail: tail, done: done) }
    }

    /// Appends an item (made under the lock) and schedules a drain unless one
    /// is already on its way.
    private func submit(_ make: (inout Shared) -> Item) {
        let schedule = shared.withLock { shared -> Bool in
            shared.items.append(make(&shared))
            defer { shared.draining = true }
            return !shared.draining
        }
        if schedule { queue.async { self.drain() } }
    }

    // MARK: - Drain job

    private func drain() {
        dispatchPrecondition(condition: .onQueue(queue))
        while true {
            let (batch, generation) = shared.withLock { shared -> ([Item], Int) in
                let batch = shared.items
                shared.items.removeAll(keepingCapacity: true)
                if batch.isEmpty { shared.draining = false }
                return (batch, shared.generation)
            }
            guard !batch.isEmpty else { return }
            for item in batch {
                switch item {
                case .bytes(let data, let itemGeneration):
                    if let chunks, itemGeneration == generation && failure == nil {
                        // Released (and accounted) when the consumer takes it.
                        handedChunks = handedChunks || !data.isEmpty
                        chunks.append(data)
                        continue
                    }
                    if itemGeneration == generation && failure == nil {
                        data.withUnsafeBytes { writeAll($0) }
                    }
                    written(data.count)
                case .restart:
                    startOver()
                case .perform(let work):
                    work()
                case .close(let tail, let done) where chunks != nil:
                    if let tail, !tail.isEmpty, failure == nil, let chunks {
                        // Pending until the consumer takes it, like any other byte.
                        shared.withLock { $0.pendingBytes += tail.count }
                        chunks.append(tail)
                    }
                    done(failure, nil)
                case .close(let tail, let done):
                    if let tail, !tail.isEmpty { tail.withUnsafeBytes { writeAll($0) } }
                    openIfNeeded()
                    stream.close()
                    done(failure, stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data)
                }
            }
        }
    }

    /// Accounts written (or dropped) bytes, resuming a paused transfer once
    /// the backlog is low again. Also called from any thread by a
    /// `ResponseBytes` buffer when its reader takes (or drops) chunks.
    private func written(_ count: Int) {
        let resume = shared.withLock { shared -> Transfer? in
            shared.pendingBytes -= count
            guard shared.pendingBytes < ResponseBodyWriter.lowWater, let blocked = shared.blocked else { return nil }
            shared.blocked = nil
            return blocked
        }
        if let resume { engine.resumeReceiving(resume) }
    }

    private func openIfNeeded() {
        guard !opened else { return }
        opened = true
        stream.open()
        // A file stream's body begins where the stream stood when opened.
        if let offset = (stream.property(forKey: .fileCurrentOffsetKey) as? NSNumber)?.int64Value { fileStart = off_t(offset) }
        if stream.streamStatus == .error {
            recordFailure(stream.streamError.map { $0 as NSError }
                ?? ResponseBodyWriter.writeError(description: "The output stream could not be opened."))
        }
    }

    private func writeAll(_ buffer: UnsafeRawBufferPointer) {
        openIfNeeded()
        guard failure == nil, let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        var written = 0
        while written < buffer.count {
            let count = stream.write(base + written, maxLength: buffer.count - written)
            guard count > 0 else {
                recordFailure(stream.streamError.map { $0 as NSError }
                    ?? ResponseBodyWriter.writeError(description: "The output stream refused the response body."))
                return
            }
            written += count
        }
    }

    private func startOver() {
        if chunks != nil {
            // Bytes the consumer may have read cannot be taken back.
            if handedChunks {
                recordFailure(ResponseBodyWriter.writeError(
                    description: "The response body started over after part of it was handed to ResponseBytes."))
            }
            return
        }
        openIfNeeded()
        guard failure == nil else { return }
        if let partial = stream as? PartialFileOutputStream {
            partial.startOver()
        } else if stream.property(forKey: .fileCurrentOffsetKey) != nil {
            // A file stream goes back to where this output began and loses
            // what followed: a shorter new entity must not leave the old
            // one's tail behind.
            guard let descriptor = FileStreamDescriptor.find(stream), ftruncate(descriptor, fileStart) == 0,
                  stream.setProperty(NSNumber(value: fileStart), forKey: .fileCurrentOffsetKey) else {
                recordFailure(ResponseBodyWriter.writeError(
                    description: "The output file stream could not be emptied for the response body starting over."))
                return
            }
        } else if stream.property(forKey: .dataWrittenToMemoryStreamKey) != nil {
            // A memory stream cannot be emptied: a fresh one takes its place.
            stream.close()
            let fresh = OutputStream(toMemory: ())
            fresh.open()
            stream = fresh
        } else {
            // A stream that cannot go back (a file opened for appending, a
            // stream of the caller's own): appending the new entity after the
            // old bytes would corrupt it silently.
            recordFailure(ResponseBodyWriter.writeError(
                description: "The response body started over, and the output stream cannot go back to its start."))
        }
    }

    private func recordFailure(_ error: NSError) {
        guard failure == nil else { return }
        failure = error
        onFailure(error)
    }

    static func writeError(description: String) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotWriteToFile, userInfo: [NSLocalizedDescriptionKey: description])
    }
}
