import Foundation

/// stdout and stderr, written straight to their file descriptors (never
/// through `print`'s buffer, so the body, headers and messages keep their
/// order) and line by line under one lock, so lines written from different
/// queues never interleave.
enum Console {
    private static let lock = NSLock()

    /// Whether stderr is a terminal (progress lines are redrawn in place only then).
    static let stderrIsTerminal = isatty(STDERR_FILENO) == 1

    /// Writes `data` to stdout as is.
    static func out(_ data: Data) {
        lock.lock(); defer { lock.unlock() }
        FileHandle.standardOutput.write(data)
    }

    /// Writes `text` and a newline to stdout.
    static func outLine(_ text: String) {
        out(Data((text + "\n").utf8))
    }

    /// Writes `text` to stderr as is (progress lines redraw with "\r").
    static func err(_ text: String) {
        lock.lock(); defer { lock.unlock() }
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// `-s/--silent`: error messages and progress are not written.
    static var isSilent: Bool {
        get { silent.value }
        set { silent.update { $0 = newValue } }
    }
    private static let silent = LockedBox(false)

    /// Writes `afn: <message>` and a newline to stderr (not with `-s`).
    static func error(_ message: String) {
        guard !isSilent else { return }
        err("afn: \(message)\n")
    }

    /// Writes a progress line to stderr as is (not with `-s`).
    static func progress(_ text: String) {
        guard !isSilent else { return }
        err(text)
    }
}

/// A value shared between blocks on other queues and the main thread.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        lock.lock()
        defer { lock.unlock() }
        return stored
    }

    @discardableResult
    func update<Result>(_ change: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return change(&stored)
    }
}
