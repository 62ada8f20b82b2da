import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `-o PATH` of `get`, `post` and `put`: the body's destination, opened only
/// when the first byte of an accepted response arrives, as curl does.
///
/// The path is opened for writing and truncated at that first byte (not written
/// to a temporary file renamed over it): a rename would replace a symlink with a
/// regular file instead of writing through it to its target, and would replace
/// a FIFO, a device node or another special file with a regular file. Opening in
/// place writes through symlinks and into special files, and leaves an existing
/// file exactly as it was when the request fails before any byte arrives or
/// `-f/--fail` rejects the status (those bytes are never written). The cost: a
/// transfer that breaks mid-body leaves the partial body in the file, as curl
/// does (exit 18 tells so).
///
/// Used by one `ResponseBodyWriter` drain job at a time; the tool reads its
/// state only after the operation finished (which orders it after the close).
final class OutputFile: OutputStream {
    let path: String
    /// Whether the response whose bytes arrive may be written (false: `-f` rejected it).
    private let accepts: @Sendable () -> Bool
    private var descriptor: Int32 = -1
    private var status: Stream.Status = .notOpen
    private var failure: NSError?
    private var offset: Int64 = 0
    /// The path was opened once (the body's first byte came).
    private var everOpened = false

    init(path: String, accepts: @escaping @Sendable () -> Bool) {
        self.path = path
        self.accepts = accepts
        super.init(toMemory: ())
    }

    /// Required by OutputStream; a stream made this way has no path and fails every write.
    required init(toMemory: ()) {
        path = ""
        accepts = { false }
        super.init(toMemory: ())
        status = .error
    }

    deinit { if descriptor >= 0 { Glibc.close(descriptor) } }

    // The writer opens its stream before the first byte; the file itself waits for that byte.
    override func open() { if status == .notOpen { status = .open } }

    override func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
        if status != .error { status = .closed }
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: Error? { failure }
    override var hasSpaceAvailable: Bool { status == .open }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open else { return -1 }
        // A response `-f` rejects is dropped whole: the file is never opened for it.
        guard accepts() else { return length }
        if descriptor < 0, !openFile() { return -1 }
        var written = 0
        while written < length {
            let count = Glibc.write(descriptor, buffer + written, length - written)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return fail(errno, "cannot write \(path)") }
            written += count
        }
        offset += Int64(written)
        return written
    }

    override func property(forKey key: Stream.PropertyKey) -> AnyObject? {
        key == .fileCurrentOffsetKey ? NSNumber(value: offset) : nil
    }

    /// The entity starts over (a retry, a restarted hop): a regular file is
    /// emptied again; bytes already sent into a pipe or device cannot be taken back.
    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool {
        guard key == .fileCurrentOffsetKey, (property as? NSNumber)?.int64Value == 0 else { return false }
        offset = 0
        guard descriptor >= 0 else { return true }
        var info = stat()
        if fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG {
            _ = ftruncate(descriptor, 0)
            _ = lseek(descriptor, 0, SEEK_SET)
        }
        return true
    }

    /// After a successful exchange whose body was empty: the output still
    /// becomes that empty body (created, or an existing file truncated).
    func createIfNeverOpened() throws {
        guard !everOpened, failure == nil else { return }
        guard openFile() else { throw failure ?? Self.error(EIO, "cannot write \(path)") }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Opens the path for writing, following symlinks, creating a missing file
    /// and truncating a regular one; never replacing what is there.
    private func openFile() -> Bool {
        // A file-size limit (ulimit -f) must be a write error (exit 23), not SIGXFSZ killing the tool.
        signal(SIGXFSZ, SIG_IGN)
        let opened = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0o666)
        guard opened >= 0 else {
            _ = fail(errno, "cannot open \(path) for writing")
            return false
        }
        descriptor = opened
        everOpened = true
        return true
    }

    private func fail(_ code: Int32, _ message: String) -> Int {
        failure = Self.error(code, message)
        status = .error
        return -1
    }

    /// NSURLErrorCannotWriteToFile, which `ExitStatus` maps to 23, naming the path and the system's reason.
    private static func error(_ code: Int32, _ message: String) -> NSError {
        let reason = String(cString: strerror(code))
        return NSError(domain: NSURLErrorDomain, code: NSURLErrorCannotWriteToFile, userInfo: [
            NSLocalizedDescriptionKey: "\(message): \(reason)",
            NSUnderlyingErrorKey: NSError(domain: NSPOSIXErrorDomain, code: Int(code)),
        ])
    }
}
