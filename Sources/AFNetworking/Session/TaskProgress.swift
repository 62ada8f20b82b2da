import Foundation

/// A task's upload and download `Progress` (AFNetworking 3) and the progress
/// blocks its factory was given. Values change only on the manager's
/// `operationQueue`, where the blocks are called after each change.
final class TaskProgress: @unchecked Sendable {
    // @unchecked: immutable references; the Progress objects' values are only
    // changed on the manager's operation queue.

    enum Direction { case upload, download }

    let upload: Progress
    let download: Progress
    private let uploadBlock: (@Sendable (Progress) -> Void)?
    private let downloadBlock: (@Sendable (Progress) -> Void)?

    /// Makes both objects. The one the factory reports (`reported`) is made
    /// first, so that — as in 2.7 — it becomes a child of `Progress.current()`
    /// if the caller made one current; the other never has a parent.
    init(reported: Direction, uploadBlock: (@Sendable (Progress) -> Void)?, downloadBlock: (@Sendable (Progress) -> Void)?) {
        let first = Progress(totalUnitCount: -1)
        let second = Progress(parent: nil, userInfo: nil)
        second.totalUnitCount = -1
        (upload, download) = reported == .upload ? (first, second) : (second, first)
        self.uploadBlock = uploadBlock
        self.downloadBlock = downloadBlock
        for progress in [upload, download] {
            progress.isCancellable = true
            progress.isPausable = true
        }
    }

    /// `cancel()`, `pause()` and `resume()` on either object act on the task.
    func connect(to driver: SessionTaskDriver) {
        for progress in [upload, download] {
            progress.cancellationHandler = { [weak driver] in driver?.cancel() }
            progress.pausingHandler = { [weak driver] in driver?.suspend() }
            progress.resumingHandler = { [weak driver] in driver?.resume() }
        }
    }

    /// New counts for one direction; the block runs if anything changed.
    func update(_ direction: Direction, completed: Int64, expected: Int64) {
        let progress = direction == .upload ? upload : download
        let total = expected >= 0 ? expected : -1
        guard progress.totalUnitCount != total || progress.completedUnitCount != completed else { return }
        progress.totalUnitCount = total
        progress.completedUnitCount = completed
        block(for: direction)?(progress)
    }

    /// A successful transfer: each direction that moved bytes ends at exactly
    /// 1.0 (its total becomes the bytes moved when the length was unknown or
    /// wrong), reported once.
    func finish() {
        for direction in [Direction.upload, .download] {
            let progress = direction == .upload ? upload : download
            let completed = progress.completedUnitCount
            guard completed > 0, progress.totalUnitCount != completed else { continue }
            progress.totalUnitCount = completed
            block(for: direction)?(progress)
        }
    }

    private func block(for direction: Direction) -> (@Sendable (Progress) -> Void)? {
        direction == .upload ? uploadBlock : downloadBlock
    }
}
