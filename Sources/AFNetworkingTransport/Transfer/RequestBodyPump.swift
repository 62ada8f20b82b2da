import Foundation

/// A request body stream whose bytes a serial queue reads a bounded amount
/// ahead of curl, so neither the caller's `InputStream` (user code, possibly
/// blocking, possibly file I/O) nor a throttle ever runs on the network thread.
///
/// curl's read callback takes from the buffer; when it is empty the transfer
/// pauses its sending side (`CURL_READFUNC_PAUSE`) and `onReadable` asks the
/// engine to continue once the next chunk is in. A stream that ends before
/// its declared length fails the transfer at once instead of leaving the
/// server waiting for bytes that will never come; one that runs past it fails
/// before its last declared byte is sent, and nothing past that length ever
/// reaches curl.
package final class RequestBodyPump: @unchecked Sendable {
    // @unchecked: the mutable state is in `state` (LockedState); the stream is
    // touched only on `queue`.

    /// What curl's read callback gets.
    enum ReadResult {
        case bytes(Int)
        case end
        /// Nothing buffered yet: pause sending until `onReadable`.
        case wait
        case fail(AbortReason)
    }

    /// -1 when the body is sent chunked.
    let declaredLength: Int64
    private let onReadable: @Sendable () -> Void
    private let queue = DispatchQueue(label: "com.alamofire.networking.request-body", target: RequestBodyPump.workQueue)
    private let state: LockedState<State>

    /// Reads ahead at most this much (two reads' worth).
    static let bufferLimit = 512 * 1024
    /// One read from the stream.
    static let readSize = 256 * 1024
    private static let workQueue = DispatchQueue(label: "com.alamofire.networking.body-io", qos: .userInitiated, attributes: .concurrent)

    private struct State {
        var stream: InputStream
        /// Whether the stream still needs `open()` (before the first read).
        var needsOpen = true
        /// A rewind asked for a fresh copy of the stream.
        var needsRebuild = false
        var chunks: [Data] = []
        /// Offset into `chunks[0]` of the next byte for curl.
        var offset = 0
        var buffered = 0
        /// Bytes handed to curl since the body (re)started.
        var produced: Int64 = 0
        var atEnd = false
        var failure: AbortReason?
        /// A read is scheduled or running.
        var reading = false
        /// curl found the buffer empty and is paused until `onReadable`.
        var curlWaiting = false
        /// Bumped by a rewind or close; a read that started earlier is discarded.
        var generation = 0
        var closed = false
    }

    package init(stream: InputStream, declaredLength: Int64, onReadable: @escaping @Sendable () -> Void) {
        self.declaredLength = declaredLength
        self.onReadable = onReadable
        self.state = LockedState(State(stream: stream))
    }

    /// Begins reading ahead (the engine calls this when the transfer joins curl).
    func start() {
        let schedule = state.withLock { state -> Bool in
            guard !state.reading, !state.closed else { return false }
            state.reading = true
            return true
        }
        if schedule { queue.async { self.fill() } }
    }

    /// curl's read callback. Network thread.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        let (result, schedule) = state.withLock { state -> (ReadResult, Bool) in
            if let failure = state.failure { return (.fail(failure), false) }
            if state.buffered == 0 {
                if state.atEnd {
                    if declaredLength >= 0 && state.produced < declaredLength {
                        return (.fail(.bodyStreamFailed(RequestBodyPump.shortBodyError(sent: state.produced, declared: declaredLength))), false)
                    }
                    return (.end, false)
                }
                state.curlWaiting = true
                let schedule = !state.reading
                state.reading = true
                return (.wait, schedule)
            }
            // A declared length is a promise to the server: never a byte past
            // it (the excess would read as the next request on the
            // connection), and the last byte only once the stream is known to
            // end there, so a body that grew fails instead of being cut short
            // after the server has taken it as complete.
            var limit = buffer.count
            if declaredLength >= 0 {
                let remaining = declaredLength - state.produced
                if Int64(state.buffered) > remaining {
                    let failure = AbortReason.bodyStreamFailed(RequestBodyPump.longBodyError(declared: declaredLength))
                    state.failure = failure
                    return (.fail(failure), false)
                }
                if !state.atEnd && Int64(state.buffered) == remaining {
                    limit = Int(min(Int64(limit), remaining - 1))
                    if limit == 0 {
                        state.curlWaiting = true
                        let schedule = !state.reading
                        state.reading = true
                        return (.wait, schedule)
                    }
                }
            }
            var copied = 0
            while copied < limit, let first = state.chunks.first {
                let count = min(limit - copied, first.count - state.offset)
                first.withUnsafeBytes { source in
                    let from = UnsafeRawBufferPointer(rebasing: source[state.offset..<(state.offset + count)])
                    UnsafeMutableRawBufferPointer(rebasing: buffer[copied..<(copied + count)]).copyMemory(from: from)
                }
                copied += count
                state.offset += count
                if state.offset == first.count {
                    state.chunks.removeFirst()
                    state.offset = 0
                }
            }
            state.buffered -= copied
            state.produced += Int64(copied)
            let schedule = !state.reading && !state.atEnd && state.failure == nil && state.buffered < RequestBodyPump.readSize
            if schedule { state.reading = true }
            return (.bytes(copied), schedule)
        }
        if schedule { queue.async { self.fill() } }
        return result
    }

    /// Starts the body over for curl. Possible before anything was handed to
    /// curl, or by reading a fresh copy of a stream that can be copied (the
    /// multipart body stream can). Network thread; the copy is made on `queue`.
    func rewind() -> Bool {
        let outcome: Bool? = state.withLock { state in
            if state.produced == 0 { return false }
            guard state.stream is NSCopying else { return nil }
            state.generation += 1
            state.chunks.removeAll()
            state.offset = 0
            state.buffered = 0
            state.produced = 0
            state.atEnd = false
            state.failure = nil
            state.needsRebuild = true
            // A read in progress sees the new generation and schedules the next.
            let schedule = !state.reading
            state.reading = true
            return schedule
        }
        guard let schedule = outcome else { return false }
        if schedule { queue.async { self.fill() } }
        return true
    }

    /// The transfer is over: the stream is closed on `queue`.
    func close() {
        let first = state.withLock { state -> Bool in
            guard !state.closed else { return false }
            state.closed = true
            state.generation += 1
            state.chunks.removeAll()
            state.buffered = 0
            return true
        }
        guard first else { return }
        queue.async { self.state.withLock { $0.stream }.close() }
    }

    // MARK: - Reading (on `queue`)

    private func fill() {
        let snapshot = state.withLock { state -> (stream: InputStream, rebuild: Bool, open: Bool, generation: Int)? in
            guard !state.closed else {
                state.reading = false
                return nil
            }
            let job = (state.stream, state.needsRebuild, state.needsOpen || state.needsRebuild, state.generation)
            state.needsRebuild = false
            state.needsOpen = false
            return job
        }
        guard let (original, rebuild, needsOpen, generation) = snapshot else { return }
        var stream = original
        if rebuild {
            // The consumed stream is replaced by a fresh copy of itself.
            stream.close()
            guard let copyable = stream as? NSCopying, let fresh = copyable.copy(with: nil) as? InputStream else {
                fail(.bodyStreamFailed(nil))
                return
            }
            stream = fresh
            let current = state.withLock { state -> Bool in
                guard state.generation == generation, !state.closed else { return false }
                state.stream = fresh
                return true
            }
            guard current else { return restartOrStop() }
        }
        if needsOpen {
            stream.open()
            if stream.streamStatus == .error {
                fail(.bodyStreamFailed(stream.streamError.map { $0 as NSError }))
                return
            }
        }
        let throttle = (stream as? ThrottledBodyStream)?.throttle
        let limit = min(RequestBodyPump.readSize, max(1, throttle?.packetSize ?? RequestBodyPump.readSize))
        // Not Data(count:), which zero-fills every chunk before it is read into.
        guard let memory = malloc(limit) else {
            fail(.bodyStreamFailed(nil))
            return
        }
        let count = stream.read(memory.assumingMemoryBound(to: UInt8.self), maxLength: limit)
        let chunk = count > 0 ? Data(bytesNoCopy: memory, count: count, deallocator: .free) : nil
        if chunk == nil { free(memory) }
        let step = state.withLock { state -> (wake: Bool, again: Bool)? in
            guard state.generation == generation, !state.closed else { return nil }
            if let chunk {
                state.chunks.append(chunk)
                state.buffered += count
            } else if count == 0 {
                state.atEnd = true
            } else {
                state.failure = .bodyStreamFailed(stream.streamError.map { $0 as NSError })
            }
            let wake = state.curlWaiting
            state.curlWaiting = false
            let again = !state.atEnd && state.failure == nil && state.buffered < RequestBodyPump.bufferLimit
            state.reading = again
            return (wake, again)
        }
        guard let step else { return restartOrStop() }
        if step.wake { onReadable() }
        guard step.again else { return }
        if let throttle, throttle.delay > 0 {
            // A throttle is a timer, never a sleep.
            queue.asyncAfter(deadline: .now() + throttle.delay) { self.fill() }
        } else {
            queue.async { self.fill() }
        }
    }

    /// A read found the body rewound or closed meanwhile: read again for the
    /// new generation, or stop.
    private func restartOrStop() {
        let again = state.withLock { state -> Bool in
            state.reading = !state.closed
            return state.reading
        }
        if again { queue.async { self.fill() } }
    }

    private func fail(_ reason: AbortReason) {
        let wake = state.withLock { state -> Bool in
            state.failure = state.failure ?? reason
            state.reading = false
            let wake = state.curlWaiting
            state.curlWaiting = false
            return wake
        }
        if wake { onReadable() }
    }

    static func longBodyError(declared: Int64) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorRequestBodyStreamExhausted, userInfo: [
            NSLocalizedDescriptionKey: "The request body stream holds more than the \(declared) bytes its Content-Length announced (it changed after the request was made); the request was not completed.",
        ])
    }

    static func shortBodyError(sent: Int64, declared: Int64) -> NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorRequestBodyStreamExhausted, userInfo: [
            NSLocalizedDescriptionKey: "The request body stream ended after \(sent) of the \(declared) bytes its Content-Length announced.",
        ])
    }
}

/// A body stream that asks to be read slowly: at most `packetSize` bytes per
/// read, `delay` seconds apart (AFNetworking's multipart bandwidth throttle).
package protocol ThrottledBodyStream: AnyObject {
    var throttle: (packetSize: Int, delay: TimeInterval)? { get }
}
