import Foundation

extension URLConnectionOperation {
    /// Runs `operations` as a batch on `queue` and returns them once every
    /// one has finished and its completion work (success/failure, completion
    /// block, `progressBlock`) has returned — beyond 2.x, which had only the
    /// block form. Cancelling the calling `Task` cancels the operations; the
    /// call still returns them, each saying through `isCancelled` and `error`
    /// what it did.
    ///
    /// An operation that has already finished counts at once and is not
    /// enqueued again; one that is running, or already in a queue, must not
    /// be passed (a queue refuses it). Nothing here waits on the main queue,
    /// so it works in programs that never serve it: `progressBlock` runs on
    /// each operation's completion queue, or — when that is the main queue —
    /// on a serial queue of the batch's. (An operation's own blocks still run
    /// where it says: give it a `completionQueue` if it has any and the main
    /// queue is not served.)
    @preconcurrency
    public static func batch(ofRequestOperations operations: [URLConnectionOperation], on queue: OperationQueue,
                             progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)? = nil)
        async -> [URLConnectionOperation] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[URLConnectionOperation], Never>) in
                let batch = makeBatch(of: operations, progressBlock: progressBlock, reportsOffTheMainQueue: true,
                                      completionQueue: .global(), completionBlock: { continuation.resume(returning: $0) })
                queue.addOperations(batch.filter { !$0.isFinished }, waitUntilFinished: false)
            }
        } onCancel: {
            for operation in operations { operation.cancel() }
        }
    }
}
