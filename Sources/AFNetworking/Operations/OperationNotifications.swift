import Foundation

extension Notification.Name {
    /// Posted on the main queue when an operation starts (or resumes) its transfer; `object` is the operation.
    public static let AFNetworkingOperationDidStart = Notification.Name("com.alamofire.networking.operation.start")
    /// Posted on the main queue when an operation finishes or pauses; `object` is the operation.
    public static let AFNetworkingOperationDidFinish = Notification.Name("com.alamofire.networking.operation.finish")
}

/// Where completion work goes when the caller named no queue or group.
enum CompletionDefaults {
    /// The group every operation's completion work joins unless it has its own.
    static let group = DispatchGroup()
    /// Off the network thread and off the main thread: where responses are
    /// serialized and batch bookkeeping runs.
    static let processingQueue = DispatchQueue(label: "com.alamofire.networking.http-request.processing", attributes: .concurrent)

    /// Whether `queue` is the main queue. Not by identity: on Linux every
    /// read of `DispatchQueue.main` makes a new wrapper object, so `===`
    /// never holds and the main queue was taken for a queue of the caller's.
    /// A queue of the caller's that borrowed the main queue's label is taken
    /// for it, which only moves the parsing to the processing queue.
    static func isMain(_ queue: DispatchQueue) -> Bool {
        let main = DispatchQueue.main.label
        return !main.isEmpty && queue.label == main
    }
}
