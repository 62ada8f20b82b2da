import Foundation

extension Notification.Name {
    /// Posted on the main queue when a session manager's task goes from
    /// suspended to running (`resume()`); `object` is the task.
    public static let AFNetworkingTaskDidResume = Notification.Name("com.alamofire.networking.task.resume")
    /// Posted on the main queue when a running task is suspended; `object` is the task.
    public static let AFNetworkingTaskDidSuspend = Notification.Name("com.alamofire.networking.task.suspend")
    /// Posted on the main queue after a task's completion handler returned (also
    /// for tasks without one); `object` is the task, `userInfo` holds the
    /// `AFNetworkingTaskDidComplete…Key` entries.
    public static let AFNetworkingTaskDidComplete = Notification.Name("com.alamofire.networking.task.complete")
    /// Posted from the manager's `operationQueue` once an invalidated session
    /// has no task left; `object` is the session.
    public static let AFURLSessionDidInvalidate = Notification.Name("com.alamofire.networking.session.invalidate")
    /// Posted from `operationQueue` when a finished download could not be moved
    /// to its destination; `object` is the task, `userInfo` the move error's.
    public static let AFURLSessionDownloadTaskDidFailToMoveFile =
        Notification.Name("com.alamofire.networking.session.download.file-manager-error")
    /// Posted from `operationQueue` when a finished download was moved to its
    /// destination (AFNetworking 4); `object` is the task.
    public static let AFURLSessionDownloadTaskDidMoveFileSuccessfully =
        Notification.Name("com.alamofire.networking.session.download.file-manager-succeed")
}

/// `AFNetworkingTaskDidComplete`: the object the response serializer made, when not nil.
public let AFNetworkingTaskDidCompleteSerializedResponseKey = "com.alamofire.networking.task.complete.serializedresponse"
/// `AFNetworkingTaskDidComplete`: the manager's response serializer (always present).
public let AFNetworkingTaskDidCompleteResponseSerializerKey = "com.alamofire.networking.task.complete.responseserializer"
/// `AFNetworkingTaskDidComplete`: the body (`Data`, possibly empty) of a task
/// whose body was not moved to a file. (The string is 2.7's, `complete.finish`.)
public let AFNetworkingTaskDidCompleteResponseDataKey = "com.alamofire.networking.complete.finish.responsedata"
/// `AFNetworkingTaskDidComplete`: the transport or serialization error, when there is one.
public let AFNetworkingTaskDidCompleteErrorKey = "com.alamofire.networking.task.complete.error"
/// `AFNetworkingTaskDidComplete`: the `URL` a download was moved to.
public let AFNetworkingTaskDidCompleteAssetPathKey = "com.alamofire.networking.task.complete.assetpath"
