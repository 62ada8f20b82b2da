import Foundation

// AFNetworking 2.x spellings. Each is deprecated with `renamed:`, so code moved
// over from Objective-C compiles with warnings whose fix-its give the new name.
// This file holds the type and constant names; the `Compatibility+<area>.swift`
// files beside it hold the method, property and enum-case spellings of 2.x code
// written before Swift 3's naming rules (`manager.GET(…)`, `sharedManager()`,
// `setReachabilityStatusChangeBlock`, `.ReachableViaWiFi`, …) and the literal
// transliterations of 2.7's class factories, each forwarding to the current API.
// Only spellings that differ from the current API are there.

@available(*, deprecated, renamed: "HTTPRequestOperationManager")
public typealias AFHTTPRequestOperationManager = HTTPRequestOperationManager

@available(*, deprecated, renamed: "NetworkReachabilityManager")
public typealias AFNetworkReachabilityManager = NetworkReachabilityManager

@available(*, deprecated, renamed: "NetworkReachabilityStatus")
public typealias AFNetworkReachabilityStatus = NetworkReachabilityStatus

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

@available(*, deprecated, renamed: "HTTPRequestSerializer")
public typealias AFHTTPRequestSerializer = HTTPRequestSerializer

@available(*, deprecated, renamed: "JSONRequestSerializer")
public typealias AFJSONRequestSerializer = JSONRequestSerializer

@available(*, deprecated, renamed: "PropertyListRequestSerializer")
public typealias AFPropertyListRequestSerializer = PropertyListRequestSerializer

@available(*, deprecated, renamed: "URLRequestSerialization")
public typealias AFURLRequestSerialization = URLRequestSerialization

@available(*, deprecated, renamed: "MultipartFormData")
public typealias AFMultipartFormData = MultipartFormData

@available(*, deprecated, renamed: "HTTPRequestQueryStringSerializationStyle")
public typealias AFHTTPRequestQueryStringSerializationStyle = HTTPRequestQueryStringSerializationStyle

@available(*, deprecated, renamed: "JSONResponseSerializer")
public typealias AFJSONResponseSerializer = JSONResponseSerializer

@available(*, deprecated, renamed: "XMLParserResponseSerializer")
public typealias AFXMLParserResponseSerializer = XMLParserResponseSerializer

@available(*, deprecated, renamed: "XMLDocumentResponseSerializer")
public typealias AFXMLDocumentResponseSerializer = XMLDocumentResponseSerializer

@available(*, deprecated, renamed: "PropertyListResponseSerializer")
public typealias AFPropertyListResponseSerializer = PropertyListResponseSerializer

@available(*, deprecated, renamed: "ImageResponseSerializer")
public typealias AFImageResponseSerializer = ImageResponseSerializer

@available(*, deprecated, renamed: "CompoundResponseSerializer")
public typealias AFCompoundResponseSerializer = CompoundResponseSerializer

@available(*, deprecated, renamed: "Notification.Name.AFNetworkingOperationDidStart")
public let AFNetworkingOperationDidStartNotification = Notification.Name.AFNetworkingOperationDidStart

@available(*, deprecated, renamed: "Notification.Name.AFNetworkingOperationDidFinish")
public let AFNetworkingOperationDidFinishNotification = Notification.Name.AFNetworkingOperationDidFinish

@available(*, deprecated, renamed: "Notification.Name.AFNetworkingReachabilityDidChange")
public let AFNetworkingReachabilityDidChangeNotification = Notification.Name.AFNetworkingReachabilityDidChange

// MARK: - Session layer

@available(*, deprecated, renamed: "URLSessionManager")
public typealias AFURLSessionManager = URLSessionManager

@available(*, deprecated, renamed: "HTTPSessionManager")
public typealias AFHTTPSessionManager = HTTPSessionManager

@available(*, deprecated, renamed: "NetworkActivityIndicatorManager")
public typealias AFNetworkActivityIndicatorManager = NetworkActivityIndicatorManager

extension Notification.Name {
    /// 2.7's earlier name of `AFNetworkingTaskDidResume` (same string).
    @available(*, deprecated, renamed: "AFNetworkingTaskDidResume")
    public static let AFNetworkingTaskDidStart = Notification.Name.AFNetworkingTaskDidResume
    /// 2.7's earlier name of `AFNetworkingTaskDidComplete` (same string).
    @available(*, deprecated, renamed: "AFNetworkingTaskDidComplete")
    public static let AFNetworkingTaskDidFinish = Notification.Name.AFNetworkingTaskDidComplete
}

@available(*, deprecated, renamed: "AFNetworkingTaskDidCompleteSerializedResponseKey")
public let AFNetworkingTaskDidFinishSerializedResponseKey = AFNetworkingTaskDidCompleteSerializedResponseKey
@available(*, deprecated, renamed: "AFNetworkingTaskDidCompleteResponseSerializerKey")
public let AFNetworkingTaskDidFinishResponseSerializerKey = AFNetworkingTaskDidCompleteResponseSerializerKey
@available(*, deprecated, renamed: "AFNetworkingTaskDidCompleteResponseDataKey")
public let AFNetworkingTaskDidFinishResponseDataKey = AFNetworkingTaskDidCompleteResponseDataKey
@available(*, deprecated, renamed: "AFNetworkingTaskDidCompleteErrorKey")
public let AFNetworkingTaskDidFinishErrorKey = AFNetworkingTaskDidCompleteErrorKey
@available(*, deprecated, renamed: "AFNetworkingTaskDidCompleteAssetPathKey")
public let AFNetworkingTaskDidFinishAssetPathKey = AFNetworkingTaskDidCompleteAssetPathKey
