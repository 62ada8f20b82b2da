import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The error domain of errors raised while building a request (`com.alamofire.error.serialization.request`).
public let AFURLRequestSerializationErrorDomain = "com.alamofire.error.serialization.request"

/// The error domain of errors raised while validating or decoding a response (`com.alamofire.error.serialization.response`).
public let AFURLResponseSerializationErrorDomain = "com.alamofire.error.serialization.response"

/// `userInfo` key holding the `URLRequest` that could not be serialized.
public let AFNetworkingOperationFailingURLRequestErrorKey = "com.alamofire.serialization.request.error.response"

/// `userInfo` key holding the `HTTPURLResponse` that failed validation or decoding.
public let AFNetworkingOperationFailingURLResponseErrorKey = "com.alamofire.serialization.response.error.response"

/// `userInfo` key holding the body `Data` of the response that failed validation or decoding.
public let AFNetworkingOperationFailingURLResponseDataErrorKey = "com.alamofire.serialization.response.error.data"

/// Attaches `underlying` to `error` under `NSUnderlyingErrorKey`, the way 2.7 chains a
/// decoding failure onto an earlier validation failure. An error that already has an
/// underlying error is left alone so the first cause is never overwritten.
func chainError(_ error: NSError?, underlying: NSError?) -> NSError? {
    guard let error = error else { return underlying }
    guard let underlying = underlying, error.userInfo[NSUnderlyingErrorKey] == nil else { return error }
    var userInfo = error.userInfo
    userInfo[NSUnderlyingErrorKey] = underlying
    return NSError(domain: error.domain, code: error.code, userInfo: userInfo)
}

/// True when `error` or any error in its `NSUnderlyingErrorKey` chain has `code` in `domain`.
/// The walk is bounded so a cyclic chain built by a caller cannot hang us.
func errorChainContains(_ error: NSError?, code: Int, domain: String) -> Bool {
    var current = error
    var remaining = 64
    while let e = current, remaining > 0 {
        if e.domain == domain && e.code == code { return true }
        current = e.userInfo[NSUnderlyingErrorKey] as? NSError
        remaining -= 1
    }
    return false
}

/// Builds an error in the request-serialization domain. The text is also the
/// failure reason: 2.7 gave these errors only `NSLocalizedFailureReasonErrorKey`,
/// and code moved from it reads `localizedFailureReason`.
func requestSerializationError(code: Int, description: String, request: URLRequest? = nil,
                               underlying: Error? = nil) -> NSError {
    var userInfo: [String: Any] = [NSLocalizedDescriptionKey: description, NSLocalizedFailureReasonErrorKey: description]
    if let request = request { userInfo[AFNetworkingOperationFailingURLRequestErrorKey] = request }
    if let underlying = underlying { userInfo[NSUnderlyingErrorKey] = underlying as NSError }
    return NSError(domain: AFURLRequestSerializationErrorDomain, code: code, userInfo: userInfo)
}

/// Builds a "cannot decode" error in the response-serialization domain that keeps the
/// response and body so callers can inspect what the server actually sent.
func responseDecodingError(description: String, reason: String? = nil, response: URLResponse?,
                           data: Data?, underlying: Error? = nil) -> NSError {
    var userInfo: [String: Any] = [NSLocalizedDescriptionKey: description]
    if let reason = reason { userInfo[NSLocalizedFailureReasonErrorKey] = reason }
    if let response = response {
        userInfo[AFNetworkingOperationFailingURLResponseErrorKey] = response
        if let url = response.url { userInfo[NSURLErrorFailingURLErrorKey] = url }
    }
    if let data = data { userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] = data }
    if let underlying = underlying { userInfo[NSUnderlyingErrorKey] = underlying as NSError }
    return NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorCannotDecodeContentData,
                   userInfo: userInfo)
}
