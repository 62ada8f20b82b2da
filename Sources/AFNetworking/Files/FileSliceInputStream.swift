import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The first `length` bytes of a file, as an `InputStream`: an upload task's
/// file as it was when the hop started. `URLSession` sends a file as it is
/// when the transfer starts; bytes appended later (a log still being written)
/// are not part of the body, and a file that shrank ends early (the request
/// then fails for its short body, as any body shorter than its length does).
/// Read by the engine's body pump, never on the network thread.
final class FileSliceInputStream: PullInputStream {
    private let path: String
    private var remaining: Int64
    private var descriptor: Int32 = -1

    init(path: String, length: Int64) {
        self.path = path
        remaining = length
        super.init()
    }

    deinit { if descriptor >= 0 { _ = Glibc.close(descriptor) } }

    override func open() {
        guard status == .notOpen else { return }
        descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            fail(errno)
        } else {
            status = remaining > 0 ? .open : .atEnd
        }
    }

    override func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
        status = .closed
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        guard status == .open else { return status == .error ? -1 : 0 }
        let wanted = Int(min(Int64(max(len, 0)), remaining))
        guard wanted > 0 else { return 0 }
        var count: Int
        repeat { count = Glibc.read(descriptor, buffer, wanted) } while count < 0 && errno == EINTR
        if count < 0 {
            fail(errno)
            return -1
        }
        remaining -= Int64(count)
        // The slice is complete, or the file ended before it (shrank).
        if remaining == 0 || count == 0 { status = .atEnd }
        return count
    }

    private func fail(_ code: Int32) {
        error = NSError(domain: NSPOSIXErrorDomain, code: Int(code), userInfo: [NSFilePathErrorKey: path])
        status = .error
    }
}
