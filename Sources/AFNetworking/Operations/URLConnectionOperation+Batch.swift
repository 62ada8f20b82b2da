@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

extension URLConnectionOperation {
    /// Groups operations into a batch: returns them plus one final operation
    /// that depends on all of them. Enqueue the whole array.
    ///
    /// `progressBlock` runs after each operation's own completion, with 1…N
    /// finished; `completionBlock` runs on the main queue after every
    /// operation's completion work (success/failure, completion block and
    /// progress) has returned.
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
            return [BlockOperation { queue.async { completionBlock?([]) } }]
        }
        let group = DispatchGroup()
        let counter = BatchCounter(total: operations.count)
        let batchOperation = BlockOperation {
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
