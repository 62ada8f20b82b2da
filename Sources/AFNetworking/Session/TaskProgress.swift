@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// A task's upload and download `Progress` (AFNetworking 3) and the progress
/// blocks its factory was given. Counts change only on the manager's
/// `operationQueue`, where the blocks are called after each change — unless
/// nobody can see them (no object, no block: `recordUnobserved`).
///
/// The `Progress` objects are made when first needed — read (`task.progress`,
/// the manager's `uploadProgress(for:)`), handed to a block, or adopted by a
/// progress the caller made current when the task was made (as in 2.7) —
/// and start from the counts so far. A task nobody observes makes none:
/// two `Progress` objects and their handlers were a large part of a small
/// request's cost.
final class TaskProgress: Sendable {
    enum Direction { case upload, download }

    /// One direction's counts, and its object once made.
    private struct Side {
        var completed: Int64 = 0
        var total: Int64 = -1
        var object: Progress?
        /// The caller's block for this direction; nil once the task completed.
        var block: (@Sendable (Progress) -> Void)?
    }

    private struct State {
        var upload = Side()
        var download = Side()
        /// The task that `cancel()`, `pause()` and `resume()` on either object act on.
        weak var frontend: SessionTaskFrontend?

        subscript(direction: Direction) -> Side {
            get { direction == .upload ? upload : download }
            set { if direction == .upload { upload = newValue } else { download = newValue } }
        }
    }

    private let state: LockedState<State>

    /// `reported`: the direction the factory reports. When the caller made a
    /// progress current, that direction's object is made now so it becomes
    /// its child, as in 2.7; the other never has a parent.
    init(reported: Direction, uploadBlock: (@Sendable (Progress) -> Void)?, downloadBlock: (@Sendable (Progress) -> Void)?) {
        var initial = State()
        initial.upload.block = uploadBlock
        initial.download.block = downloadBlock
        state = LockedState(initial)
        if Progress.current() != nil {
            let adopted = TaskProgress.make(Side(), adoptedByCurrent: true, frontend: nil)
            state.withLock { $0[reported].object = adopted }
        }
    }

    var upload: Progress { object(.upload) }
    var download: Progress { object(.download) }

    /// Bytes counted so far in `direction` (without making its object).
    func completed(_ direction: Direction) -> Int64 {
        state.withLock { $0[direction].completed }
    }

    /// The handlers of the objects made from now on (and of one made already) reach `frontend`.
    func connect(to frontend: SessionTaskFrontend) {
        let made = state.withLock { state -> [Progress] in
            state.frontend = frontend
            return [state.upload.object, state.download.object].compactMap { $0 }
        }
        for progress in made { TaskProgress.connect(progress, to: frontend) }
    }

    /// New counts for one direction; the block runs if anything changed.
    func update(_ direction: Direction, completed: Int64, expected: Int64) {
        let total = expected >= 0 ? expected : -1
        let changed = state.withLock { state -> Bool in
            guard state[direction].total != total || state[direction].completed != completed else { return false }
            state[direction].total = total
            state[direction].completed = completed
            return true
        }
        guard changed else { return }
        publish(direction)
    }

    /// Whether nobody can see the counts change: no object made, no block.
    /// (An object made later starts from the counts so far.)
    var isUnobserved: Bool {
        state.withLock { $0.upload.block == nil && $0.download.block == nil && $0.upload.object == nil && $0.download.object == nil }
    }

    /// The task completed: the caller's blocks are let go (they may capture
    /// whoever keeps the task, as `self.task = …` does).
    func releaseBlocks() {
        state.withLock { state in
            state.upload.block = nil
            state.download.block = nil
        }
    }

    /// Stores new counts for `direction` where they change, without the
    /// operation queue, when nobody can see them; false (nothing stored) when
    /// an object or a block exists: then counts change on the queue.
    func recordUnobserved(_ direction: Direction, completed: Int64, expected: Int64) -> Bool {
        return state.withLock { state -> Bool in
            guard state[direction].object == nil, state[direction].block == nil else { return false }
            state[direction].total = expected >= 0 ? expected : -1
            state[direction].completed = completed
            return true
        }
    }

    /// A successful transfer: each direction that moved bytes ends at exactly
    /// 1.0 (its total becomes the bytes moved when the length was unknown or
    /// wrong), reported once.
    func finish() {
        for direction in [Direction.upload, .download] {
            let changed = state.withLock { state -> Bool in
                let completed = state[direction].completed
                guard completed > 0, state[direction].total != completed else { return false }
                state[direction].total = completed
                return true
            }
            if changed { publish(direction) }
        }
    }

    // MARK: - The objects

    /// The counts reach the object, if there is one (or a block needs one),
    /// then the block runs.
    private func publish(_ direction: Direction) {
        let (existing, side) = state.withLock { ($0[direction].object, $0[direction]) }
        let block = side.block
        guard let progress = existing ?? (block == nil ? nil : object(direction)) else { return }
        if existing != nil {
            progress.totalUnitCount = side.total
            progress.completedUnitCount = side.completed
        }
        block?(progress)
    }

    /// The object of `direction`, made now if it was not, with the counts so far.
    private func object(_ direction: Direction) -> Progress {
        if let made = state.withLock({ $0[direction].object }) { return made }
        let (side, frontend) = state.withLock { ($0[direction], $0.frontend) }
        let fresh = TaskProgress.make(side, adoptedByCurrent: false, frontend: frontend)
        // Two threads may make one at once: the first kept wins.
        return state.withLock { state -> Progress in
            if let made = state[direction].object { return made }
            state[direction].object = fresh
            // Counts that changed while it was made. Set under the lock, so a
            // racing `update` cannot be overwritten by older counts; a
            // corelibs `Progress` has no KVO, so its setters run no caller code.
            fresh.totalUnitCount = state[direction].total
            fresh.completedUnitCount = state[direction].completed
            return fresh
        }
    }

    private static func make(_ side: Side, adoptedByCurrent: Bool, frontend: SessionTaskFrontend?) -> Progress {
        let progress = adoptedByCurrent ? Progress(totalUnitCount: side.total) : Progress(parent: nil, userInfo: nil)
        progress.totalUnitCount = side.total
        progress.completedUnitCount = side.completed
        progress.isCancellable = true
        progress.isPausable = true
        if let frontend { connect(progress, to: frontend) }
        return progress
    }

    private static func connect(_ progress: Progress, to frontend: SessionTaskFrontend) {
        progress.cancellationHandler = { [weak frontend] in frontend?.cancel() }
        progress.pausingHandler = { [weak frontend] in frontend?.suspend() }
        progress.resumingHandler = { [weak frontend] in frontend?.resume() }
    }
}
