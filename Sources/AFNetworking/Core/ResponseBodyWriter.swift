import AFNetworkingTransport
import Foundation

/// Writes a response body to an `OutputStream` on its own serial queue, so the
/// caller's stream (user code, file I/O) never runs on the network thread.
///
/// Everything for one request goes through here in order: the bytes of each
/// hop, "start over" marks, bookkeeping (a resumable download's sidecar) and
/// the final close. Memory stays bounded: once `highWater` bytes wait, the
/// network thread pauses the transfer (`BodyDisposition.pause`), and the
/// writer lifts the pause when it has drained below `lowWater`.
final class ResponseBodyWriter: @unchecked Sendable {
    // @unchecked: `shared` is behind a lock; `stream` and `failure` are
    // touched only on `queue` (checked with dispatchPrecondition).

    static let highWater = 1 << 20
    static let lowWater = 256 << 10
    private static let workQueue = DispatchQueue(label: "com.alamofire.networking.response-body", qos: .userInitiated,
                                                 attributes: .concurrent)

    private let queue = DispatchQueue(label: "com.alamofire.networking.response-writer", target: ResponseBodyWriter.workQueue)
    private let shared = LockedState(Shared())
    /// Told once when a write fails (any later bytes are dropped).
    private let onFailure: @Sendable (NSError) -> Void

    private struct Shared {
        /// Bytes enqueued and not yet written.
        var pendingBytes = 0
        /// The transfer paused because the writer was full.
        var blocked: Transfer?
        /// Bumped by `discardPending()`: bytes enqueued earlier are dropped.
        var generation = 0
        /// The most bytes ever waiting at once (tests check the bound).
        var peakPendingBytes = 0
    }

    // Queue-confined.
    private(set) var stream: OutputStream
    private var opened = false
    private var failure: NSError?

    init(stream: OutputStream, onFailure: @escaping @Sendable (NSError) -> Void) {
        self.stream = stream
        self.onFailure = onFailure
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

    /// Queues a piece of body for writing.
    func enqueue(_ bytes: UnsafeRawBufferPointer) {
        let data = Data(bytes)
        let generation = shared.withLock { shared -> Int in
            shared.pendingBytes += data.count
            shared.peakPendingBytes = max(shared.peakPendingBytes, shared.pendingBytes)
            return shared.generation
        }
        queue.async { self.write(data, generation: generation) }
    }

    // MARK: - Any thread

    /// The most bytes that ever waited to be written.
    var peakPendingBytes: Int { shared.withLock { $0.peakPendingBytes } }

    /// The entity starts over: a file stream is truncated to nothing, a
    /// memory stream replaced by an empty one.
    func restart() {
        queue.async { self.startOver() }
    }

    /// Runs `work` on the writer's queue after everything queued before it.
    func perform(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Bytes queued so far are dropped instead of written (cancellation).
    func discardPending() {
        shared.withLock { $0.generation += 1 }
    }

    /// After everything queued so far: writes `tail` (a cached body, a
    /// declined redirect's body), closes the stream and hands `done` the
    /// failure, if writing or opening failed, and the data of a memory stream.
    func close(writing tail: Data?, then done: @escaping @Sendable (NSError?, Data?) -> Void) {
        queue.async {
            if let tail, !tail.isEmpty {
                tail.withUnsafeBytes { self.writeAll($0) }
            }
            self.openIfNeeded()
            self.stream.close()
            let memory = self.stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data
            done(self.failure, memory)
        }
    }

    // MARK: - Queue

    private func openIfNeeded() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !opened else { return }
        opened = true
        stream.open()
        if stream.streamStatus == .error {
            recordFailure(stream.streamError.map { $0 as NSError }
                ?? ResponseBodyWriter.writeError(description: "The output stream could not be opened."))
        }
    }

    private func write(_ data: Data, generation: Int) {
        let current = shared.withLock { $0.generation == generation }
        if current && failure == nil {
            data.withUnsafeBytes { writeAll($0) }
        }
        let resume = shared.withLock { shared -> Transfer? in
            shared.pendingBytes -= data.count
            guard shared.pendingBytes < ResponseBodyWriter.lowWater, let blocked = shared.blocked else { return nil }
            shared.blocked = nil
            return blocked
        }
        if let resume { NetworkEngine.shared.resumeReceiving(resume) }
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
        openIfNeeded()
        guard failure == nil else { return }
        if let partial = stream as? PartialFileOutputStream {
            partial.startOver()
        } else if stream.property(forKey: .fileCurrentOffsetKey) != nil {
            // A file stream goes back to its start.
            _ = stream.setProperty(NSNumber(value: 0), forKey: .fileCurrentOffsetKey)
        } else if stream.property(forKey: .dataWrittenToMemoryStreamKey) != nil {
            // A memory stream cannot be emptied: a fresh one takes its place.
            stream.close()
            let fresh = OutputStream(toMemory: ())
            fresh.open()
            stream = fresh
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
