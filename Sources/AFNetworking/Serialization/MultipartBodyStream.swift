@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// The body of a multipart request as an `InputStream` that produces its bytes on
/// demand: boundaries and headers from memory, file parts read from disk one chunk per
/// `read(_:maxLength:)`, so uploading a large file never holds more than one chunk.
final class MultipartBodyStream: PullInputStream, NSCopying {
    let boundary: String
    let parts: [MultipartBodyPart]
    /// Upper bound of bytes returned by one read (for throttling). Defaults to unlimited.
    var numberOfBytesInPacket = Int.max
    /// Time between reads (for throttling). Defaults to none. The stream itself
    /// never sleeps: the engine's body pump spaces its reads with a timer
    /// (`ThrottledBodyStream`), so a throttle costs no thread.
    var delay: TimeInterval = 0

    /// Largest number of body bytes requested from a file in one read; tests use it to
    /// show that files are streamed rather than loaded.
    private(set) var largestFileChunk = 0


    private enum Phase {
        case preamble(Data, offset: Int)
        case body
        case closing(Data, offset: Int)
        case finished
    }

    private var phase: Phase = .finished
    private var partIndex = 0
    private var bodyRemaining: Int64 = 0
    private var fileHandle: FileHandle?
    private var partStream: InputStream?

    init(boundary: String, parts: [MultipartBodyPart]) {
        self.boundary = boundary
        self.parts = parts
        super.init()
    }

    private var closingBoundary: Data { Data("\r\n--\(boundary)--\r\n".utf8) }

    /// The exact number of bytes the stream produces: the `Content-Length` of the request.
    var contentLength: Int64 {
        guard !parts.isEmpty else { return 0 }
        var total = Int64(closingBoundary.count)
        for (index, part) in parts.enumerated() {
            total += Int64(part.preamble(boundary: boundary, isFirst: index == 0).count) + part.bodyLength
        }
        return total
    }

    // MARK: Stream

    override func open() {
        guard status == .notOpen else { return }
        status = .open
        partIndex = 0
        phase = parts.isEmpty ? .finished : .preamble(parts[0].preamble(boundary: boundary, isFirst: true), offset: 0)
        if parts.isEmpty { status = .atEnd }
    }

    override func close() {
        finishPartSource()
        status = .closed
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open else { return status == .error ? -1 : 0 }
        let limit = min(max(len, 0), numberOfBytesInPacket)
        var written = 0
        while written < limit {
            switch phase {
            case let .preamble(data, offset):
                let count = copy(data, from: offset, into: buffer + written, max: limit - written)
                written += count
                if offset + count >= data.count {
                    if !startBody() { return -1 }
                } else {
                    phase = .preamble(data, offset: offset + count)
                }
            case .body:
                if bodyRemaining == 0 {
                    // Checked before the next boundary is produced: a part whose
                    // source holds more than it declared fails the body here, so
                    // the server never gets what looks like a complete body.
                    if !sourceEndsHere() { return -1 }
                    finishPartSource()
                    advanceToNextPart()
                    continue
                }
                let wanted = Int(min(Int64(limit - written), bodyRemaining))
                let count = readBody(into: buffer + written, max: wanted)
                if count < 0 { return -1 }
                written += count
                bodyRemaining -= Int64(count)
            case let .closing(data, offset):
                let count = copy(data, from: offset, into: buffer + written, max: limit - written)
                written += count
                phase = offset + count >= data.count ? .finished : .closing(data, offset: offset + count)
            case .finished:
                status = .atEnd
                return written
            }
        }
        return written
    }

    // MARK: Phases

    private func copy(_ data: Data, from offset: Int, into pointer: UnsafeMutablePointer<UInt8>, max: Int) -> Int {
        let count = min(max, data.count - offset)
        guard count > 0 else { return 0 }
        data.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return }
            pointer.update(from: base + offset, count: count)
        }
        return count
    }

    /// Opens the current part's source; false (with `streamError` set) when it cannot be read.
    private func startBody() -> Bool {
        let part = parts[partIndex]
        bodyRemaining = part.bodyLength
        phase = .body
        switch part.source {
        case .data:
            break
        case let .file(url):
            do {
                fileHandle = try FileHandle(forReadingFrom: url)
            } catch {
                fail(error)
                return false
            }
        case let .stream(stream):
            partStream = stream
            if stream?.streamStatus == .notOpen { stream?.open() }
        }
        return true
    }

    /// Reads up to `max` body bytes of the current part; -1 on failure or a short source.
    private func readBody(into pointer: UnsafeMutablePointer<UInt8>, max: Int) -> Int {
        let part = parts[partIndex]
        switch part.source {
        case let .data(data):
            let offset = Int(part.bodyLength - bodyRemaining)
            return copy(data, from: offset, into: pointer, max: max)
        case .file:
            largestFileChunk = Swift.max(largestFileChunk, max)
            guard let descriptor = fileHandle?.fileDescriptor else {
                fail(shortSourceError())
                return -1
            }
            // Straight into the caller's buffer: no Data in between.
            var count = 0
            repeat {
                count = Glibc.read(descriptor, pointer, max)
            } while count < 0 && errno == EINTR
            if count < 0 {
                fail(NSError(domain: NSPOSIXErrorDomain, code: Int(errno)))
                return -1
            }
            if count == 0 {
                fail(shortSourceError())
                return -1
            }
            return count
        case let .stream(stream):
            guard let stream = stream else {
                fail(shortSourceError())
                return -1
            }
            let count = stream.read(pointer, maxLength: max)
            if count < 0 {
                fail(stream.streamError ?? shortSourceError())
                return -1
            }
            if count == 0 {
                fail(shortSourceError())
                return -1
            }
            return count
        }
    }

    /// Whether the current part's source ends with its declared bytes; false
    /// (the stream failed) when it holds more — a file that grew after the
    /// part was appended, an input stream longer than its `length:` — or
    /// cannot be read. Sending the declared bytes alone would cut the part
    /// short without a word, and the server would take it as complete.
    private func sourceEndsHere() -> Bool {
        var probe: UInt8 = 0
        switch parts[partIndex].source {
        case .data:
            return true
        case .file:
            guard let descriptor = fileHandle?.fileDescriptor else {
                fail(shortSourceError())
                return false
            }
            var count = 0
            repeat {
                count = Glibc.read(descriptor, &probe, 1)
            } while count < 0 && errno == EINTR
            if count < 0 {
                fail(NSError(domain: NSPOSIXErrorDomain, code: Int(errno)))
                return false
            }
            if count > 0 {
                fail(longSourceError())
                return false
            }
            return true
        case let .stream(stream):
            // A missing stream with a declared length of 0 is an empty part.
            guard let stream = stream else { return true }
            let count = stream.read(&probe, maxLength: 1)
            if count < 0 || stream.streamStatus == .error {
                fail(stream.streamError ?? shortSourceError())
                return false
            }
            if count > 0 {
                fail(longSourceError())
                return false
            }
            return true
        }
    }

    private func advanceToNextPart() {
        partIndex += 1
        if partIndex < parts.count {
            phase = .preamble(parts[partIndex].preamble(boundary: boundary, isFirst: false), offset: 0)
        } else {
            phase = .closing(closingBoundary, offset: 0)
        }
    }

    private func finishPartSource() {
        try? fileHandle?.close()
        fileHandle = nil
        partStream?.close()
        partStream = nil
    }

    private func fail(_ error: Error) {
        finishPartSource()
        self.error = error
        status = .error
    }

    /// A part whose source ends before its declared length would make Content-Length a lie.
    private func shortSourceError() -> NSError {
        return requestSerializationError(code: NSURLErrorRequestBodyStreamExhausted,
                                         description: "A multipart part ended before its declared length")
    }

    /// A part whose source holds more than its declared length would be cut
    /// short: the code and meaning of the transport's "body longer than its
    /// Content-Length" (`NSURLErrorRequestBodyStreamExhausted`).
    private func longSourceError() -> NSError {
        let declared = parts[partIndex].bodyLength
        return requestSerializationError(code: NSURLErrorRequestBodyStreamExhausted,
                                         description: "A multipart part holds more than its declared \(declared) bytes (its file or stream changed after it was appended); the body was not completed")
    }

    // MARK: NSCopying

    /// A fresh, unopened stream over the same parts, for sending the body again.
    /// Data and file parts are re-read from the start; a caller-supplied input stream
    /// cannot be rewound and is shared, as in 2.7.
    func copy(with zone: NSZone? = nil) -> Any {
        let copy = MultipartBodyStream(boundary: boundary, parts: parts)
        copy.numberOfBytesInPacket = numberOfBytesInPacket
        copy.delay = delay
        return copy
    }
}

extension MultipartBodyStream: ThrottledBodyStream {
    /// The packet size and delay set by `throttleBandwidth(withPacketSize:delay:)`, if any.
    var throttle: (packetSize: Int, delay: TimeInterval)? {
        guard numberOfBytesInPacket != Int.max || delay > 0 else { return nil }
        return (numberOfBytesInPacket, delay)
    }
}
