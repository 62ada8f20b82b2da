@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import Synchronization

extension URLConnectionOperation {
    /// Groups operations into a batch: returns them plus one final operation
    /// that depends on all of them. Enqueue the whole array, less any
    /// operation that has already finished (a queue refuses those; the batch
    /// counts them at once).
    ///
    /// `progressBlock` runs on each operation's completion queue (nil: the
    /// main queue) once the operation has finished, after the operation's
    /// own completion block, with 1…N finished; `completionBlock` runs on the
    /// main queue after every operation's completion work (success/failure,
    /// completion block and progress) has returned. It always comes, also
    /// when the batch is cancelled (unlike 2.x, whose final block operation
    /// then never ran): each operation's `isCancelled` and `error` say what
    /// was cancelled. Set an operation's own `completionBlock` before
    /// batching it: the batch takes it over, to run it before the progress
    /// report (one set later runs on its own, as an unbatched one does).
    @preconcurrency
    public static func batch(ofRequestOperations operations: [URLConnectionOperation],
                             progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)?,
                             completionBlock: (@Sendable ([URLConnectionOperation]) -> Void)?) -> [Operation] {
        batch(ofRequestOperations: operations, progressBlock: progressBlock, completionQueue: nil, completionBlock: completionBlock)
    }

    /// As `batch(ofRequestOperations:progressBlock:completionBlock:)`, with
    /// `completionBlock` run on `completionQueue` (nil: the main queue), so a
    /// program that does not serve the main queue still learns that the batch
    /// has finished (give its operations a `completionQueue` too: their
    /// progress reports go there).
    @preconcurrency
    public static func batch(ofRequestOperations operations: [URLConnectionOperation],
                             progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)?,
                             completionQueue: DispatchQueue?,
                             completionBlock: (@Sendable ([URLConnectionOperation]) -> Void)?) -> [Operation] {
        makeBatch(of: operations, progressBlock: progressBlock, reportsOffTheMainQueue: false,
                  completionQueue: completionQueue, completionBlock: completionBlock)
    }

    /// Both forms' batch. Each operation's part — its own completion block,
    /// then the progress report — follows its finishing (`whenFinished`),
    /// which an operation that has already finished reports at once: a
    /// completion block installed on that one would never run, and the batch
    /// would wait for ever. The part runs on the operation's completion queue,
    /// as in 2.7, inside the batch's group; `reportsOffTheMainQueue`: a report
    /// that would go to the main queue goes to a serial queue of the batch's
    /// instead (the operation's own block still runs where it says).
    static func makeBatch(of operations: [URLConnectionOperation],
                          progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)?,
                          reportsOffTheMainQueue: Bool, completionQueue: DispatchQueue?,
                          completionBlock: (@Sendable ([URLConnectionOperation]) -> Void)?) -> [Operation] {
        let queue = completionQueue ?? .main
        guard !operations.isEmpty else {
            return [BatchCompletionOperation { queue.async { completionBlock?([]) } }]
        }
        let group = DispatchGroup()
        let counter = BatchCounter(total: operations.count)
        // Serial, so the reports still come one at a time, in order, as on the main queue.
        let reports = reportsOffTheMainQueue ? DispatchQueue(label: "com.alamofire.networking.batch.progress") : nil
        let batchOperation = BatchCompletionOperation {
            group.notify(queue: queue) { completionBlock?(operations) }
        }
        for operation in operations {
            operation.completionGroup = group
            // Taken now rather than when the operation finishes: Foundation
            // runs the block on a schedule of its own, which could put it
            // after the report it must precede.
            let own = operation.takeCompletionBlock()
            group.enter()
            operation.whenFinished { [unowned operation] in
                let report: @Sendable () -> Void = {
                    let finished = counter.increment()
                    progressBlock?(finished, counter.total)
                    group.leave()
                }
                let ownQueue = operation.effectiveCompletionQueue
                let elsewhere = MainQueueWork.isMain(ownQueue) ? reports : nil
                guard let own else { return MainQueueWork.async(on: elsewhere ?? ownQueue, group: group, report) }
                MainQueueWork.async(on: ownQueue, group: group) {
                    own()
                    // Still inside the group: the batch cannot complete in between.
                    if let elsewhere { MainQueueWork.async(on: elsewhere, group: group, report) } else { report() }
                }
            }
            batchOperation.addDependency(operation)
        }
        return operations + [batchOperation]
    }
}

/// Counts finished operations of a batch from whichever queue reports.
private final class BatchCounter: Sendable {
    let total: Int
    private let finished = LockedState(0)

    init(total: Int) { self.total = total }

    func increment() -> Int {
        finished.withLock { count in
            count += 1
            return count
        }
    }
}

/// A batch's final operation: asks for the completion once every operation's
/// completion work has returned — also when cancelled, when Foundation would
/// skip a `BlockOperation`'s block (the group still waits for every operation).
final class BatchCompletionOperation: Operation, @unchecked Sendable {
    // @unchecked: `body` is immutable, `asked` atomic; Operation's own state is Foundation's.
    private let body: @Sendable () -> Void
    private let asked = Atomic<Bool>(false)

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
        super.init()
    }

    override func start() {
        // Cancelled, it finishes at once while the operations it depends on
        // may still run and point at it (see `DependencyLifetime`). Not
        // cancelled here, the queue started it because they had all finished.
        if isCancelled { DependencyLifetime.hold(untilDependenciesFinish: self) }
        super.start()
        // Foundation skipped `main()` if a cancel came first (even one racing this start).
        askOnce()
    }

    override func main() { askOnce() }

    private func askOnce() {
        guard !asked.exchange(true, ordering: .acquiringAndReleasing) else { return }
        body()
    }
}
