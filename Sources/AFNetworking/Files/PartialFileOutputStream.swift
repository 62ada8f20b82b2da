import Foundation

/// An output stream over a download's partial file that knows its offset and
/// can start over (truncate to zero) when a resumed download gets a full 200
/// answer.
///
/// The file is opened by `open()` — which the response writer calls at the
/// body's first byte — and closed by `close()` at the end, so a download
/// holds a descriptor only while it writes: thousands of unstarted or
/// finished downloads hold none. `open()` re-checks that the path still names
/// the file that was prepared (same device and inode), and with `exclusive`
/// takes an exclusive `flock`, so a second writer of the same file fails
/// clearly instead of interleaving with, or truncating, the first.
final class PartialFileOutputStream: OutputStream {
    /// Which file was prepared: `open()` refuses any other under the path.
    struct Identity: Equatable {
        let device: UInt64
        let inode: UInt64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    private let path: String
    private let identity: Identity?
    private let exclusive: Bool
    private let syncsOnClose: Bool
    private var descriptor: Int32 = -1
    private var offset: Int64
    private var status: Stream.Status = .notOpen
    private var failure: Error?

    /// A stream for `path`, writing from `offset`. `identity`: the file that
    /// was prepared (nil: whatever is there). `syncsOnClose`: fsync before
    /// closing (a restart-proof download's file must be on disk before it is
    /// moved into place).
    init(path: String, offset: Int64, identity: Identity?, exclusive: Bool, syncsOnClose: Bool = false) {
        self.path = path
        self.offset = offset
        self.identity = identity
        self.exclusive = exclusive
        self.syncsOnClose = syncsOnClose
        super.init(toMemory: ())
    }

    /// Required by OutputStream; a stream made this way has no file and fails every write.
    required init(toMemory: ()) {
        path = ""
        offset = 0
        identity = nil
        exclusive = false
        syncsOnClose = false
        super.init(toMemory: ())
        status = .error
    }

    deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

    override func open() {
        guard status == .notOpen else { return }
        let opened = Glibc.open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { return fail(Self.error(errno, "Cannot open the download file \(path).")) }
        descriptor = opened
        var info = stat()
        guard fstat(opened, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, identity.map({ $0 == Identity(info) }) ?? true else {
            return fail(Self.error(0, "The download file \(path) was replaced by another file."))
        }
        if exclusive && flock(opened, LOCK_EX | LOCK_NB) != 0 {
            return fail(Self.error(errno, "Another download is writing to \(path)."))
        }
        status = .open
    }

    override func close() {
        if descriptor >= 0 {
            if syncsOnClose && status == .open { _ = fsync(descriptor) }
            // Closing the descriptor also releases the flock.
            Glibc.close(descriptor)
            descriptor = -1
        }
        if status != .error { status = .closed }
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: Error? { failure }
    override var hasSpaceAvailable: Bool { status == .open }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open else { return -1 }
        let written = pwrite(descriptor, buffer, length, off_t(offset))
        guard written >= 0 else {
            fail(NSError(domain: NSPOSIXErrorDomain, code: Int(errno)))
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
        if status == .open, ftruncate(descriptor, 0) == 0 { offset = 0 }
    }

    private func fail(_ error: NSError) {
        failure = error
        status = .error
        if descriptor >= 0 {
            Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// A clear error for the file: NSURLErrorCannotOpenFile with the path and
    /// the POSIX cause (0: none).
    static func error(_ code: Int32, _ description: String) -> NSError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if code != 0 { info[NSUnderlyingErrorKey] = NSError(domain: NSPOSIXErrorDomain, code: Int(code)) }
        return NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotOpenFile, userInfo: info)
    }
}
