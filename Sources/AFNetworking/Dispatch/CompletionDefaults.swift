import Foundation

/// Where completion work goes when the caller named no queue or group.
enum CompletionDefaults {
    /// The group every operation's completion work joins unless it has its own.
    static let group = DispatchGroup()
    /// Off the network thread and off the main thread: where responses are
    /// serialized and batch bookkeeping runs.
    static let processingQueue = DispatchQueue(label: "com.alamofire.networking.http-request.processing", attributes: .concurrent)
}
