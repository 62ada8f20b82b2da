@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Partial files nobody will resume: a process killed mid-download cannot
/// delete its own, and resume data handed out may never be used. The first
/// download file a process makes (or resumes) removes this package's files
/// in the temporary directory that nobody wrote to for `abandonedAge`.
extension DownloadFile {
    /// 24 hours: far longer than any download still running writes nothing
    /// (timeoutIntervalForRequest stops a silent one), long enough that
    /// resume data kept over a working day still finds its file.
    static let abandonedAge: TimeInterval = 24 * 60 * 60

    private static let swept = LockedState(false)

    /// Sweeps once per process; `sparing` is a partial file about to be resumed.
    static func sweepAbandonedOnce(sparing: String? = nil) {
        let first = swept.withLock { swept in
            defer { swept = true }
            return !swept
        }
        guard first else { return }
        sweepAbandoned(olderThan: abandonedAge, sparing: sparing)
    }

    /// Removes this package's plain files in `directory` (ours by name and
    /// owner) last modified more than `age` ago; returns what it removed.
    @discardableResult
    static func sweepAbandoned(olderThan age: TimeInterval, sparing: String? = nil, now: Date = Date()) -> [URL] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        let cutoff = now.timeIntervalSince1970 - age
        var removed: [URL] = []
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let url = directory.appendingPathComponent(name)
            guard url.path != sparing else { continue }
            var info = stat()
            // lstat: a link with our name is never followed, and never ours.
            guard lstat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid(),
                  Double(info.st_mtim.tv_sec) < cutoff else { continue }
            if unlink(url.path) == 0 { removed.append(url) }
        }
        return removed
    }
}
