import Foundation

// AFNetworking 2.x spellings. Each is deprecated with `renamed:`, so code moved
// over from Objective-C compiles with warnings whose fix-its give the new name.

@available(*, deprecated, renamed: "URLConnectionOperation")
public typealias AFURLConnectionOperation = URLConnectionOperation

@available(*, deprecated, renamed: "HTTPRequestOperation")
public typealias AFHTTPRequestOperation = HTTPRequestOperation

@available(*, deprecated, renamed: "SecurityPolicy")
public typealias AFSecurityPolicy = SecurityPolicy

@available(*, deprecated, renamed: "SSLPinningMode")
public typealias AFSSLPinningMode = SSLPinningMode

@available(*, deprecated, renamed: "URLResponseSerialization")
public typealias AFURLResponseSerialization = URLResponseSerialization

@available(*, deprecated, renamed: "HTTPResponseSerializer")
public typealias AFHTTPResponseSerializer = HTTPResponseSerializer

@available(*, deprecated, renamed: "Notification.Name.AFNetworkingOperationDidStart")
public let AFNetworkingOperationDidStartNotification = Notification.Name.AFNetworkingOperationDidStart

@available(*, deprecated, renamed: "Notification.Name.AFNetworkingOperationDidFinish")
public let AFNetworkingOperationDidFinishNotification = Notification.Name.AFNetworkingOperationDidFinish
