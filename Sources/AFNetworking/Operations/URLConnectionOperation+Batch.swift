@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import Synchronization

extension URLConnectionOperation {
    /// Groups operations into a batch: returns them plus one final operation
    /// that depends on all of them. Enqueue the whole array.
    ///
    /// `progressBlock` runs after each operation's own completion, with 1…N
    /// finished; `completionBlock` runs on the main queue after every
    /// operation's completion work (success/failure, completion block and
    /// progress) has returned. It always comes, also when the batch is
    /// cancelled (unlike 2.x, whose final block operation then never ran):
    /// each operation's `isCancelled` and `error` say what was cancelled.
    @preconcurrency
    public static func batch(ofRequestOperations operations: [URLConnectionOperation],
                             progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)?,
                             completionBlock: (@Sendable ([URLConnectionOperation]) -> Void)?) -> [Operation] {
        batch(ofRequestOperations: operations, progressBlock: progressBlock, completionQueue: nil, completionBlock: completionBlock)
    }

    /// As `batch(ofRequestOperations:progressBlock:completionBlock:)`, with
    /// `completionBlock` run on `completionQueue` (nil: the main queue), so a
    /// program that does not serve the main queue still learns that the batch
    /// has finished.
    @preconcurrency
    public static func batch(ofRequestOperations operations: [URLConnectionOperation],
                             progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)?,
                             completionQueue: DispatchQueue?,
                             completionBlock: (@Sendable ([URLConnectionOperation]) -> Void)?) -> [Operation] {
        let queue = completionQueue ?? .main
        guard !operations.isEmpty else {
            return [BatchCompletionOperation { queue.async { completionBlock?([]) } }]
        }
        let group = DispatchGroup()
        let counter = BatchCounter(total: operations.count)
        let batchOperation = BatchCompletionOperation {
            group.notify(queue: queue) { completionBlock?(operations) }
        }
        for operation in operations {
            operation.completionGroup = group
            let original = operation.completionBlock
            group.enter()
            // Installed through the 2.7-compatible setter, so it runs on the
            // operation's completion queue inside the batch's group.
            operation.completionBlock = {
                original?()
                let finished = counter.increment()
                progressBlock?(finished, counter.total)
                group.leave()
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
