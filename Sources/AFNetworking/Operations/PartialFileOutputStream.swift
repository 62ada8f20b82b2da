import Foundation

/// An output stream over a file descriptor that knows its offset and can start
/// over (truncate to zero) when a resumed download gets a full 200 answer.
final class PartialFileOutputStream: OutputStream {
    private let descriptor: Int32
    private var offset: Int64
    private var status: Stream.Status = .notOpen
    private var failure: Error?

    /// Takes ownership of `descriptor`, positioned at its end (`offset`).
    init(descriptor: Int32, offset: Int64) {
        self.descriptor = descriptor
        self.offset = offset
        super.init(toMemory: ())
    }

    /// Required by OutputStream; a stream made this way has no file and fails every write.
    required init(toMemory: ()) {
        descriptor = -1
        offset = 0
        super.init(toMemory: ())
        status = .error
    }

    deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

    override func open() { if status == .notOpen && descriptor >= 0 { status = .open } }
    override func close() { status = .closed }
    override var streamStatus: Stream.Status { status }
    override var streamError: Error? { failure }
    override var hasSpaceAvailable: Bool { status == .open }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open else { return -1 }
        let written = pwrite(descriptor, buffer, length, off_t(offset))
        guard written >= 0 else {
            failure = NSError(domain: NSPOSIXErrorDomain, code: Int(errno))
            status = .error
            return -1
        }
        offset += Int64(written)
        return written
    }

    override func property(forKey key: Stream.PropertyKey) -> AnyObject? {
        key == .fileCurrentOffsetKey ? NSNumber(value: offset) : nil
    }

    /// Drops what was written: the entity is being sent again from its start.
    func startOver() {
        if ftruncate(descriptor, 0) == 0 { offset = 0 }
    }

    func flushToDisk() { _ = fsync(descriptor) }
}
