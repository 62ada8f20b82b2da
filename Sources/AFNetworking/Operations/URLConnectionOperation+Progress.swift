@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `progress`, as `URLSessionTask` has it (2.7's operations had only blocks).
extension URLConnectionOperation: ProgressReporting {
    /// The response body's progress, to show or to add to a parent with
    /// `addChild(_:withPendingUnitCount:)`.
    ///
    /// - Counts: `totalUnitCount` is the body's expected length (-1 while
    ///   unknown) and `completedUnitCount` the bytes received, absolute as
    ///   the download progress block's `totalBytesRead` (after a resume they
    ///   count from the entity's first byte). Completed reaches total only
    ///   when the operation finishes successfully: both are then the bytes
    ///   received (1 of 1 for an empty body), so a parent counts the
    ///   operation done once. A failed or cancelled operation keeps the counts
    ///   it reached; a cancelled one's progress is `isCancelled`. The request
    ///   body is not counted.
    /// - Control: `cancel()`, `pause()` and `resume()` on the progress, or on
    ///   a parent it was added to, cancel, pause and resume the operation.
    /// - Made on first read, so an operation nobody asks costs no `Progress`.
    ///   It never becomes a child of `Progress.current()` by itself (the
    ///   moment of the first read says nothing about what is current); add it
    ///   to a parent yourself.
    /// - Threads: the counts change on one serial queue of the library's,
    ///   shared by every operation's progress, in order — never on the
    ///   network thread, and some time after the bytes arrived (the final
    ///   counts shortly after the operation finished). swift-corelibs-
    ///   foundation's `Progress` has neither a lock nor KVO: poll it, knowing
    ///   that a read from another thread is not synchronized with an update.
    public var progress: Progress {
        progressReporter().progress
    }

    /// The operation's progress reporter, made and kept the first time it is asked for.
    func progressReporter() -> OperationProgress {
        if let made = settings.withLock({ $0.progressReporter }) { return made }
        // Made outside the lock (it reads the driver); if another thread won
        // the race, its reporter is kept and this one dropped unseen.
        let candidate = OperationProgress(driver: driver, operation: self)
        let (reporter, installed) = settings.withLock { settings -> (OperationProgress, Bool) in
            if let made = settings.progressReporter { return (made, false) }
            settings.progressReporter = candidate
            return (candidate, true)
        }
        // The final counts once the operation finishes (at once if it has):
        // the reporter may have been made after the last piece of body.
        if installed { whenFinished { reporter.operationFinished() } }
        return reporter
    }

    /// The progress if something read `progress` (tests: otherwise none is made).
    var progressIfMade: Progress? {
        settings.withLock { $0.progressReporter?.progress }
    }
}
