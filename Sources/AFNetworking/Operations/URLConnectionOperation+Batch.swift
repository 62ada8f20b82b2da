import Foundation

extension URLConnectionOperation {
    /// Groups operations into a batch: returns them plus one final operation
    /// that depends on all of them. Enqueue the whole array.
    ///
    /// `progressBlock` runs after each operation's own completion, with 1…N
    /// finished; `completionBlock` runs on the main queue after every
    /// operation's completion work (success/failure, completion block and
    /// progress) has returned.
    public static func batch(ofRequestOperations operations: [URLConnectionOperation],
                             progressBlock: ((_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)?,
                             completionBlock: (([URLConnectionOperation]) -> Void)?) -> [Operation] {
        guard !operations.isEmpty else {
            return [BlockOperation { DispatchQueue.main.async { completionBlock?([]) } }]
        }
        let group = DispatchGroup()
        let counter = BatchCounter(total: operations.count)
        let batchOperation = BlockOperation {
            group.notify(queue: .main) { completionBlock?(operations) }
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
private final class BatchCounter: @unchecked Sendable {
    let total: Int
    private var finished = 0
    private let lock = NSLock()

    init(total: Int) { self.total = total }

    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        finished += 1
        return finished
    }
}
