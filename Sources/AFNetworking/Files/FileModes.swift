import Foundation

/// The permissions of the files downloads write. A partial or temporary file
/// is private (0600): it may sit in a shared temporary directory, and is not
/// the caller's yet. A finished file at the caller's destination gets what
/// `open(2)` with 0666 gives any new file — 0666 less the process's umask —
/// the way curl's `-o` and every other tool create files.
enum FileModes {
    static let partial: mode_t = 0o600

    /// 0666 less the umask, read without changing it (`umask(2)` can only be
    /// read by setting it, which races every other thread creating files):
    /// Linux shows it in /proc/self/status; 0644 (umask 022) if that cannot be read.
    static var finished: mode_t {
        mode_t(0o666) & ~currentUmask
    }

    static var currentUmask: mode_t {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
              let value = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8) else { return 0o022 }
        return value & 0o777
    }

    /// Gives the finished file at `path` the mode a new file there would get
    /// (only a plain file: a FIFO or device the caller named keeps its own).
    static func makeFinished(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return }
        _ = chmod(path, finished)
    }
}
