import Foundation

extension URLConnectionOperation {
    /// Runs `operations` as a batch on `queue` and returns them once every
    /// one has finished and its completion work (success/failure, completion
    /// block, `progressBlock`) has returned — beyond 2.x, which had only the
    /// block form. Cancelling the calling `Task` cancels the operations; the
    /// call still returns them, each saying through `isCancelled` and `error`
    /// what it did.
    ///
    /// The operations must not have been started or batched before: an
    /// operation already finished never runs the batch's completion work.
    /// Nothing here waits on the main queue, so it works in programs that never
    /// serve it.
    @preconcurrency
    public static func batch(ofRequestOperations operations: [URLConnectionOperation], on queue: OperationQueue,
                             progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)? = nil)
        async -> [URLConnectionOperation] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[URLConnectionOperation], Never>) in
                let batch = batch(ofRequestOperations: operations, progressBlock: progressBlock,
                                  completionQueue: .global(), completionBlock: { continuation.resume(returning: $0) })
                queue.addOperations(batch, waitUntilFinished: false)
            }
        } onCancel: {
            for operation in operations { operation.cancel() }
        }
    }
}
