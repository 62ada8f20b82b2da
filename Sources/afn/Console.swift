@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// stdout and stderr, written straight to their file descriptors (never
/// through `print`'s buffer, so the body, headers and messages keep their
/// order) and line by line under one lock, so lines written from different
/// queues never interleave.
///
/// A write that fails — the reader of a pipe left (EPIPE: afn ignores
/// SIGPIPE, see `AFN.main`), a full disk — is remembered, not fatal:
/// `outputFailure` makes the exit status 23, as curl's.
enum Console {
    /// Held across each write: here the write itself is what must not
    /// interleave, so (unlike the library's locks) it is done under the lock.
    /// Its value: the errno of the first write to stdout that failed.
    private static let lock = LockedState<Int32?>(nil)

    /// Whether stderr is a terminal (progress lines are redrawn in place only then).
    static let stderrIsTerminal = isatty(STDERR_FILENO) == 1

    /// The errno of the first write to stdout that failed; nothing is written after it.
    static var outputFailure: Int32? { lock.value }

    /// Writes `data` to stdout as is.
    static func out(_ data: Data) {
        lock.withLock { failure in
            guard failure == nil else { return }
            failure = Console.write(data, to: STDOUT_FILENO)
        }
    }

    /// Writes `text` and a newline to stdout.
    static func outLine(_ text: String) {
        out(Data((text + "\n").utf8))
    }

    /// Writes `text` to stderr as is (progress lines redraw with "\r"); a
    /// failure has nowhere to be told and is ignored.
    static func err(_ text: String) {
        lock.withLock { _ in _ = Console.write(Data(text.utf8), to: STDERR_FILENO) }
    }

    /// Writes all of `data` to `descriptor`; the errno of a failed write, or nil.
    private static func write(_ data: Data, to descriptor: Int32) -> Int32? {
        data.withUnsafeBytes { buffer -> Int32? in
            guard let base = buffer.baseAddress else { return nil }
            var written = 0
            while written < buffer.count {
                let count = Glibc.write(descriptor, base + written, buffer.count - written)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return count < 0 ? errno : EIO }
                written += count
            }
            return nil
        }
    }

    /// `-s/--silent`: error messages and progress are not written.
    static var isSilent: Bool {
        get { silent.value }
        set { silent.set(\.self, to: newValue) }
    }
    private static let silent = LockedState(false)

    /// `-S/--show-error`: error messages are written even with `-s`.
    static var showsErrors: Bool {
        get { showErrors.value }
        set { showErrors.set(\.self, to: newValue) }
    }
    private static let showErrors = LockedState(false)

    /// Writes `afn: <message>` and a newline to stderr (not with `-s`, unless `-S`).
    static func error(_ message: String) {
        guard !isSilent || showsErrors else { return }
        err("afn: \(message)\n")
    }

    /// Writes a progress line to stderr as is (not with `-s`).
    static func progress(_ text: String) {
        guard !isSilent else { return }
        err(text)
    }
}
