import Foundation

extension Notification.Name {
    /// Posted on the main queue when an operation starts (or resumes) its transfer; `object` is the operation.
    public static let AFNetworkingOperationDidStart = Notification.Name("com.alamofire.networking.operation.start")
    /// Posted on the main queue when an operation finishes or pauses; `object` is the operation.
    public static let AFNetworkingOperationDidFinish = Notification.Name("com.alamofire.networking.operation.finish")
}
