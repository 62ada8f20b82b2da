@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// stdout and stderr, written straight to their file descriptors (never
/// through `print`'s buffer, so the body, headers and messages keep their
/// order) and line by line under one lock, so lines written from different
/// queues never interleave.
enum Console {
    /// Held across each write: here the write itself is what must not
    /// interleave, so (unlike the library's locks) it is done under the lock.
    private static let lock = LockedState(())

    /// Whether stderr is a terminal (progress lines are redrawn in place only then).
    static let stderrIsTerminal = isatty(STDERR_FILENO) == 1

    /// Writes `data` to stdout as is.
    static func out(_ data: Data) {
        lock.withLock { _ in FileHandle.standardOutput.write(data) }
    }

    /// Writes `text` and a newline to stdout.
    static func outLine(_ text: String) {
        out(Data((text + "\n").utf8))
    }

    /// Writes `text` to stderr as is (progress lines redraw with "\r").
    static func err(_ text: String) {
        lock.withLock { _ in FileHandle.standardError.write(Data(text.utf8)) }
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
