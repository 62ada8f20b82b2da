@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Partial files nobody will resume: a process killed mid-download cannot
/// delete its own, and resume data handed out may never be used. The first
/// download file a process makes (or resumes), and then one at most every
/// `SweepSchedule.interval`, removes this package's files in the temporary
/// directory that nobody wrote to for `abandonedAge` — so a server that runs
/// for weeks does not keep every partial file abandoned since it started.
extension DownloadFile {
    /// 24 hours: far longer than any download still running writes nothing
    /// (timeoutIntervalForRequest stops a silent one), long enough that
    /// resume data kept over a working day still finds its file.
    static let abandonedAge: TimeInterval = 24 * 60 * 60

    private static let schedule = LockedState(SweepSchedule())

    /// Sweeps when one is due; `sparing` is a partial file about to be resumed.
    static func sweepAbandonedIfDue(sparing: String? = nil, now: Date = Date()) {
        guard schedule.withLock({ $0.claim(at: now) }) else { return }
        sweepAbandoned(olderThan: abandonedAge, sparing: sparing, now: now)
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

/// When the sweep of abandoned partial files runs: at the first download file
/// of the process, then when `interval` has passed since the last sweep.
struct SweepSchedule {
    /// An hour: a directory listing of the temporary directory per hour of
    /// downloads costs nothing, and a file is left at most this long past
    /// its `abandonedAge`.
    static let interval: TimeInterval = 60 * 60

    private(set) var lastSweep: Date?

    /// Whether a sweep is due at `now`; if so, it counts as made then.
    mutating func claim(at now: Date) -> Bool {
        if let lastSweep, now.timeIntervalSince(lastSweep) < Self.interval { return false }
        lastSweep = now
        return true
    }
}
