import Dispatch
import AFNetworkingTransport

/// The end of a request as its caller sees it, one path for operations and
/// session tasks alike: the response is serialized off the network thread
/// and off the main thread — on the caller's completion queue when that is
/// not the main queue (saving a hop), else on the shared processing queue —
/// inside the completion group; what the caller gets is then delivered on
/// the completion queue, the request is marked finished, and the front-end
/// does what follows its end.
///
/// Order, always: `produce` → `deliver` → `finished` → `after` → the group
/// is left. So a dependent operation starts only after the caller's blocks
/// returned, and a task's completion notification follows its handler.
struct CompletionPipeline: Sendable {
    /// What `produce` hands back, made where the response was serialized.
    struct Delivery: Sendable {
        /// The caller's part (blocks, a completion handler), on the completion
        /// queue. nil: nothing for the caller, so no hop either — the rest
        /// runs where `produce` did.
        var deliver: (@Sendable () -> Void)?
        /// The front-end's part after `finished` (release waiters, post a
        /// notification), where `deliver` ran.
        var after: @Sendable () -> Void = {}
    }

    /// The caller's completion queue.
    let queue: DispatchQueue
    /// Entered when the work is scheduled and left once `after` returned:
    /// `notify` on it means "everything delivered so far has run".
    let group: DispatchGroup
    /// Delivers where the response was serialized even when `queue` is the
    /// main queue: a handler that only resumes an awaiting Swift task must
    /// not wait for a main queue nobody may serve.
    var inPlace = false
    /// Ends the request (the driver's `.completionFinished`).
    let finished: @Sendable () -> Void

    /// Where `produce` runs.
    var workQueue: DispatchQueue {
        MainQueueWork.isMain(queue) ? CompletionDefaults.processingQueue : queue
    }

    /// Whether delivery waits for the main queue (else it runs in place).
    var hopsToMain: Bool { !inPlace && MainQueueWork.isMain(queue) }

    /// Runs the request's end. `beforeHop` runs on the work queue only when a
    /// delivery is about to wait for the main queue: whoever needs the
    /// outcome but not the caller's blocks (an awaiting task) is released
    /// there instead of waiting for a main queue that may not be served.
    func run(beforeHop: @escaping @Sendable () -> Void = {}, produce: @escaping @Sendable () -> Delivery) {
        let hops = hopsToMain
        let (queue, group, finished) = (self.queue, self.group, self.finished)
        group.enter()
        // From the network thread, requests finishing in one pass share a dispatch.
        PassHandoffs.async(on: workQueue) {
            let delivery = produce()
            guard let deliver = delivery.deliver, hops else {
                delivery.deliver?()
                finished()
                delivery.after()
                group.leave()
                return
            }
            beforeHop()
            // Through MainQueueWork: a waitUntilFinished() on the main queue runs it.
            MainQueueWork.async(on: queue, group: group) {
                deliver()
                finished()
                delivery.after()
                group.leave()
            }
        }
    }
}
