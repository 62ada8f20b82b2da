import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

// The method, property and enum-case spellings of AFNetworking 2.x code written
// before Swift 3's naming rules (`manager.GET(…)`, `sharedManager()`,
// `setReachabilityStatusChangeBlock`, `.ReachableViaWiFi`, …), and the literal
// transliterations of 2.7's class factories. Each is deprecated with `renamed:`
// and forwards to the current API, so moved code compiles with a warning whose
// fix-it gives the new spelling instead of failing with "no member".
// Compatibility.swift does the same for type and constant names.
// Only spellings that differ from the current API are here.

// MARK: - HTTPRequestOperationManager

extension HTTPRequestOperationManager {
    /// 2.7's `+manager`: a new manager without a base URL (`init(baseURL: nil)`).
    @available(*, deprecated, renamed: "init()")
    public class func manager() -> Self {
        self.init(baseURL: nil)
    }

    /// 2.7's `-HTTPRequestOperationWithRequest:success:failure:`.
    @available(*, deprecated, renamed: "httpRequestOperation(with:success:failure:)")
    @preconcurrency
    public func HTTPRequestOperationWithRequest(_ request: URLRequest,
                                                success: HTTPRequestOperation.SuccessBlock?,
                                                failure: HTTPRequestOperation.FailureBlock?) -> HTTPRequestOperation {
        httpRequestOperation(with: request, success: success, failure: failure)
    }

    /// 2.7's `-GET:parameters:success:failure:`.
    @available(*, deprecated, renamed: "get(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func GET(_ URLString: String, parameters: Any?,
                    success: HTTPRequestOperation.SuccessBlock?,
                    failure: FailureBlock?) -> HTTPRequestOperation? {
        get(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-HEAD:parameters:success:failure:`.
    @available(*, deprecated, renamed: "head(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func HEAD(_ URLString: String, parameters: Any?,
                     success: (@Sendable (HTTPRequestOperation) -> Void)?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        head(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func POST(_ URLString: String, parameters: Any?,
                     success: HTTPRequestOperation.SuccessBlock?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        post(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:constructingBodyWithBlock:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:constructingBodyWith:success:failure:)")
    @discardableResult @preconcurrency
    public func POST(_ URLString: String, parameters: Any?,
                     constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?,
                     success: HTTPRequestOperation.SuccessBlock?,
                     failure: FailureBlock?) -> HTTPRequestOperation? {
        post(URLString, parameters: parameters, constructingBodyWith: block, success: success, failure: failure)
    }

    /// 2.7's `-PUT:parameters:success:failure:`.
    @available(*, deprecated, renamed: "put(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func PUT(_ URLString: String, parameters: Any?,
                    success: HTTPRequestOperation.SuccessBlock?,
                    failure: FailureBlock?) -> HTTPRequestOperation? {
        put(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-PATCH:parameters:success:failure:`.
    @available(*, deprecated, renamed: "patch(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func PATCH(_ URLString: String, parameters: Any?,
                      success: HTTPRequestOperation.SuccessBlock?,
                      failure: FailureBlock?) -> HTTPRequestOperation? {
        patch(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-DELETE:parameters:success:failure:`.
    @available(*, deprecated, renamed: "delete(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func DELETE(_ URLString: String, parameters: Any?,
                       success: HTTPRequestOperation.SuccessBlock?,
                       failure: FailureBlock?) -> HTTPRequestOperation? {
        delete(URLString, parameters: parameters, success: success, failure: failure)
    }
}

// MARK: - HTTPSessionManager

extension HTTPSessionManager {
    /// 2.7's `+manager`: a new manager without a base URL, for the default configuration.
    @available(*, deprecated, renamed: "init()")
    public class func manager() -> Self {
        self.init(sessionConfiguration: nil)
    }

    /// 2.7's `-GET:parameters:success:failure:`.
    @available(*, deprecated, renamed: "get(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func GET(_ URLString: String, parameters: Any?,
                    success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                    failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        get(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-HEAD:parameters:success:failure:`.
    @available(*, deprecated, renamed: "head(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func HEAD(_ URLString: String, parameters: Any?,
                     success: (@Sendable (URLSessionDataTask) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        head(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func POST(_ URLString: String, parameters: Any?,
                     success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        post(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-POST:parameters:constructingBodyWithBlock:success:failure:`.
    @available(*, deprecated, renamed: "post(_:parameters:constructingBodyWith:success:failure:)")
    @discardableResult @preconcurrency
    public func POST(_ URLString: String, parameters: Any?,
                     constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?,
                     success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                     failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        post(URLString, parameters: parameters, constructingBodyWith: block, success: success, failure: failure)
    }

    /// 2.7's `-PUT:parameters:success:failure:`.
    @available(*, deprecated, renamed: "put(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func PUT(_ URLString: String, parameters: Any?,
                    success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                    failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        put(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-PATCH:parameters:success:failure:`.
    @available(*, deprecated, renamed: "patch(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func PATCH(_ URLString: String, parameters: Any?,
                      success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                      failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        patch(URLString, parameters: parameters, success: success, failure: failure)
    }

    /// 2.7's `-DELETE:parameters:success:failure:`.
    @available(*, deprecated, renamed: "delete(_:parameters:success:failure:)")
    @discardableResult @preconcurrency
    public func DELETE(_ URLString: String, parameters: Any?,
                       success: (@Sendable (URLSessionDataTask, Any?) -> Void)?,
                       failure: (@Sendable (URLSessionDataTask?, Error) -> Void)?) -> URLSessionDataTask? {
        delete(URLString, parameters: parameters, success: success, failure: failure)
    }
}

// MARK: - URLSessionManager

extension URLSessionManager {
    /// 2.7's `-dataTaskWithRequest:completionHandler:`.
    @available(*, deprecated, renamed: "dataTask(with:completionHandler:)")
    @preconcurrency
    public func dataTaskWithRequest(_ request: URLRequest,
                                    completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionDataTask {
        dataTask(with: request, completionHandler: completionHandler)
    }

    /// 2.7's `-uploadTaskWithRequest:fromFile:progress:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "uploadTask(with:fromFile:progress:completionHandler:)")
    @preconcurrency
    public func uploadTaskWithRequest(_ request: URLRequest, fromFile fileURL: URL,
                                      progress: (@Sendable (Progress) -> Void)?,
                                      completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        uploadTask(with: request, fromFile: fileURL, progress: progress, completionHandler: completionHandler)
    }

    /// 2.7's `-uploadTaskWithRequest:fromData:progress:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "uploadTask(with:from:progress:completionHandler:)")
    @preconcurrency
    public func uploadTaskWithRequest(_ request: URLRequest, fromData bodyData: Data?,
                                      progress: (@Sendable (Progress) -> Void)?,
                                      completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        uploadTask(with: request, from: bodyData, progress: progress, completionHandler: completionHandler)
    }

    /// 2.7's `-uploadTaskWithStreamedRequest:progress:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "uploadTask(withStreamedRequest:progress:completionHandler:)")
    @preconcurrency
    public func uploadTaskWithStreamedRequest(_ request: URLRequest,
                                              progress: (@Sendable (Progress) -> Void)?,
                                              completionHandler: (@Sendable (URLResponse, Any?, Error?) -> Void)?) -> URLSessionUploadTask {
        uploadTask(withStreamedRequest: request, progress: progress, completionHandler: completionHandler)
    }

    /// 2.7's `-downloadTaskWithRequest:progress:destination:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "downloadTask(with:progress:destination:completionHandler:)")
    @preconcurrency
    public func downloadTaskWithRequest(_ request: URLRequest,
                                        progress: (@Sendable (Progress) -> Void)?,
                                        destination: (@Sendable (URL, URLResponse) -> URL)?,
                                        completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        downloadTask(with: request, progress: progress, destination: destination, completionHandler: completionHandler)
    }

    /// 2.7's `-downloadTaskWithResumeData:progress:destination:completionHandler:` (progress as a block, as in 3.x).
    @available(*, deprecated, renamed: "downloadTask(withResumeData:progress:destination:completionHandler:)")
    @preconcurrency
    public func downloadTaskWithResumeData(_ resumeData: Data,
                                           progress: (@Sendable (Progress) -> Void)?,
                                           destination: (@Sendable (URL, URLResponse) -> URL)?,
                                           completionHandler: (@Sendable (URLResponse, URL?, Error?) -> Void)?) -> URLSessionDownloadTask {
        downloadTask(withResumeData: resumeData, progress: progress, destination: destination, completionHandler: completionHandler)
    }

    /// 2.7's `-uploadProgressForTask:`.
    @available(*, deprecated, renamed: "uploadProgress(for:)")
    public func uploadProgressForTask(_ task: URLSessionTask) -> Progress? {
        uploadProgress(for: task)
    }

    /// 2.7's `-downloadProgressForTask:`.
    @available(*, deprecated, renamed: "downloadProgress(for:)")
    public func downloadProgressForTask(_ task: URLSessionTask) -> Progress? {
        downloadProgress(for: task)
    }
}

// MARK: - Operations

extension URLConnectionOperation {
    /// 2.7's `+batchOfRequestOperations:progressBlock:completionBlock:`.
    @available(*, deprecated, renamed: "batch(ofRequestOperations:progressBlock:completionBlock:)")
    @preconcurrency
    public static func batchOfRequestOperations(_ operations: [URLConnectionOperation],
                                                progressBlock: (@Sendable (_ numberOfFinishedOperations: Int, _ totalNumberOfOperations: Int) -> Void)?,
                                                completionBlock: (@Sendable ([URLConnectionOperation]) -> Void)?) -> [Operation] {
        batch(ofRequestOperations: operations, progressBlock: progressBlock, completionBlock: completionBlock)
    }
}

// MARK: - Reachability

extension NetworkReachabilityManager {
    /// 2.7's `+sharedManager`.
    @available(*, deprecated, renamed: "shared()")
    public static func sharedManager() -> NetworkReachabilityManager {
        shared()
    }

    /// 2.7's `+managerForDomain:`.
    @available(*, deprecated, renamed: "manager(forDomain:)")
    public static func managerForDomain(_ domain: String) -> NetworkReachabilityManager {
        manager(forDomain: domain)
    }

    /// 2.7's `+managerForAddress:` (a `sockaddr_in` or `sockaddr_in6`).
    @available(*, deprecated, renamed: "manager(forAddress:)")
    public static func managerForAddress(_ address: UnsafeRawPointer) -> NetworkReachabilityManager {
        manager(forAddress: address)
    }

    /// 2.7's `-setReachabilityStatusChangeBlock:`.
    @available(*, deprecated, renamed: "setReachabilityStatusChange(_:)")
    @preconcurrency
    public func setReachabilityStatusChangeBlock(_ block: (@Sendable (NetworkReachabilityStatus) -> Void)?) {
        setReachabilityStatusChange(block)
    }

    /// 2.7's `reachable` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isReachable")
    public var reachable: Bool { isReachable }

    /// 2.7's `reachableViaWWAN` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isReachableViaWWAN")
    public var reachableViaWWAN: Bool { isReachableViaWWAN }

    /// 2.7's `reachableViaWiFi` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isReachableViaWiFi")
    public var reachableViaWiFi: Bool { isReachableViaWiFi }
}

extension NetworkReachabilityStatus {
    /// Swift 2's spelling of `AFNetworkReachabilityStatusUnknown`.
    @available(*, deprecated, renamed: "unknown")
    public static var Unknown: NetworkReachabilityStatus { .unknown }

    /// Swift 2's spelling of `AFNetworkReachabilityStatusNotReachable`.
    @available(*, deprecated, renamed: "notReachable")
    public static var NotReachable: NetworkReachabilityStatus { .notReachable }

    /// Swift 2's spelling of `AFNetworkReachabilityStatusReachableViaWWAN`.
    @available(*, deprecated, renamed: "reachableViaWWAN")
    public static var ReachableViaWWAN: NetworkReachabilityStatus { .reachableViaWWAN }

    /// Swift 2's spelling of `AFNetworkReachabilityStatusReachableViaWiFi`.
    @available(*, deprecated, renamed: "reachableViaWiFi")
    public static var ReachableViaWiFi: NetworkReachabilityStatus { .reachableViaWiFi }
}

/// 2.7's `AFStringFromNetworkReachabilityStatus`.
@available(*, deprecated, renamed: "getter:NetworkReachabilityStatus.localizedString(self:)")
public func AFStringFromNetworkReachabilityStatus(_ status: NetworkReachabilityStatus) -> String {
    status.localizedString
}

// MARK: - Security

extension SecurityPolicy {
    /// 2.7's `+defaultPolicy`.
    @available(*, deprecated, renamed: "default()")
    public static func defaultPolicy() -> SecurityPolicy {
        SecurityPolicy.default()
    }

    /// 2.7's `+policyWithPinningMode:` (pinned certificates: the `.cer` files of `Bundle.main`).
    @available(*, deprecated, renamed: "init(pinningMode:)")
    public static func policyWithPinningMode(_ pinningMode: SSLPinningMode) -> SecurityPolicy {
        SecurityPolicy(pinningMode: pinningMode)
    }
}

extension SSLPinningMode {
    /// Swift 2's spelling of `AFSSLPinningModeNone`.
    @available(*, deprecated, renamed: "none")
    public static var None: SSLPinningMode { .none }

    /// Swift 2's spelling of `AFSSLPinningModePublicKey`.
    @available(*, deprecated, renamed: "publicKey")
    public static var PublicKey: SSLPinningMode { .publicKey }

    /// Swift 2's spelling of `AFSSLPinningModeCertificate`.
    @available(*, deprecated, renamed: "certificate")
    public static var Certificate: SSLPinningMode { .certificate }
}

// MARK: - Request serialization

extension URLRequestSerialization {
    /// 2.7's `-requestBySerializingRequest:withParameters:error:` with its
    /// error out-parameter (as Swift 2 imported it): nil and `error` set on failure.
    @available(*, deprecated, renamed: "requestBySerializingRequest(_:withParameters:)")
    public func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?,
                                            error: UnsafeMutablePointer<NSError?>?) -> URLRequest? {
        do {
            return try requestBySerializingRequest(request, withParameters: parameters)
        } catch let thrown {
            error?.pointee = thrown as NSError
            return nil
        }
    }
}

extension HTTPRequestQueryStringSerializationStyle {
    /// Swift 2's spelling of `AFHTTPRequestQueryStringDefaultStyle`.
    @available(*, deprecated, renamed: "defaultStyle")
    public static var DefaultStyle: HTTPRequestQueryStringSerializationStyle { .defaultStyle }
}

extension HTTPRequestSerializer {
    /// 2.7's `HTTPShouldHandleCookies` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpShouldHandleCookies")
    public var HTTPShouldHandleCookies: Bool {
        get { httpShouldHandleCookies }
        set { httpShouldHandleCookies = newValue }
    }

    /// 2.7's `HTTPShouldUsePipelining` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpShouldUsePipelining")
    public var HTTPShouldUsePipelining: Bool {
        get { httpShouldUsePipelining }
        set { httpShouldUsePipelining = newValue }
    }

    /// 2.7's `HTTPRequestHeaders` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpRequestHeaders")
    public var HTTPRequestHeaders: [String: String] { httpRequestHeaders }

    /// 2.7's `HTTPMethodsEncodingParametersInURI` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "httpMethodsEncodingParametersInURI")
    public var HTTPMethodsEncodingParametersInURI: Set<String> {
        get { httpMethodsEncodingParametersInURI }
        set { httpMethodsEncodingParametersInURI = newValue }
    }

    /// 2.7's `-valueForHTTPHeaderField:`.
    @available(*, deprecated, renamed: "value(forHTTPHeaderField:)")
    public func valueForHTTPHeaderField(_ field: String) -> String? {
        value(forHTTPHeaderField: field)
    }

    /// 2.7's `-setQueryStringSerializationWithStyle:`.
    @available(*, deprecated, renamed: "setQueryStringSerializationWith(_:)")
    public func setQueryStringSerializationWithStyle(_ style: HTTPRequestQueryStringSerializationStyle) {
        setQueryStringSerializationWith(style)
    }

    /// 2.7's `-setQueryStringSerializationWithBlock:` (the block throws instead of filling an `NSError **`).
    @available(*, deprecated, renamed: "setQueryStringSerializationWith(_:)")
    @preconcurrency
    public func setQueryStringSerializationWithBlock(_ block: (@Sendable (URLRequest, Any) throws -> String)?) {
        setQueryStringSerializationWith(block)
    }

    /// 2.7's `-requestWithMethod:URLString:parameters:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "request(withMethod:urlString:parameters:)")
    public func requestWithMethod(_ method: String, URLString: String, parameters: Any?) throws -> URLRequest {
        try request(withMethod: method, urlString: URLString, parameters: parameters)
    }

    /// 2.7's `-multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)")
    @preconcurrency
    public func multipartFormRequestWithMethod(_ method: String, URLString: String, parameters: [String: Any]?,
                                               constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?) throws -> URLRequest {
        try multipartFormRequest(withMethod: method, urlString: URLString, parameters: parameters, constructingBodyWith: block)
    }

    /// 2.7's `-requestWithMultipartFormRequest:writingStreamContentsToFile:completionHandler:`.
    @available(*, deprecated, renamed: "request(withMultipartForm:writingStreamContentsToFile:completionHandler:)")
    @preconcurrency
    public func requestWithMultipartFormRequest(_ request: URLRequest, writingStreamContentsToFile fileURL: URL,
                                                completionHandler handler: (@Sendable (Error?) -> Void)?) -> URLRequest {
        self.request(withMultipartForm: request, writingStreamContentsToFile: fileURL, completionHandler: handler)
    }
}

extension JSONRequestSerializer {
    /// 2.7's `+serializerWithWritingOptions:`.
    @available(*, deprecated, renamed: "init(writingOptions:)")
    public static func serializerWithWritingOptions(_ writingOptions: JSONSerialization.WritingOptions) -> JSONRequestSerializer {
        JSONRequestSerializer(writingOptions: writingOptions)
    }
}

extension PropertyListRequestSerializer {
    /// 2.7's `+serializerWithFormat:writeOptions:`.
    @available(*, deprecated, renamed: "init(format:writeOptions:)")
    public static func serializerWithFormat(_ format: PropertyListSerialization.PropertyListFormat,
                                            writeOptions: PropertyListSerialization.WriteOptions) -> PropertyListRequestSerializer {
        PropertyListRequestSerializer(format: format, writeOptions: writeOptions)
    }
}

extension MultipartFormData {
    /// 2.7's `-appendPartWithFileURL:name:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "appendPart(withFileURL:name:)")
    public func appendPartWithFileURL(_ fileURL: URL, name: String) throws {
        try appendPart(withFileURL: fileURL, name: name)
    }

    /// 2.7's `-appendPartWithFileURL:name:fileName:mimeType:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "appendPart(withFileURL:name:fileName:mimeType:)")
    public func appendPartWithFileURL(_ fileURL: URL, name: String, fileName: String, mimeType: String) throws {
        try appendPart(withFileURL: fileURL, name: name, fileName: fileName, mimeType: mimeType)
    }

    /// 2.7's `-appendPartWithInputStream:name:fileName:length:mimeType:`.
    @available(*, deprecated, renamed: "appendPart(with:name:fileName:length:mimeType:)")
    public func appendPartWithInputStream(_ inputStream: InputStream?, name: String, fileName: String,
                                          length: Int64, mimeType: String) {
        appendPart(with: inputStream, name: name, fileName: fileName, length: length, mimeType: mimeType)
    }

    /// 2.7's `-appendPartWithFileData:name:fileName:mimeType:`.
    @available(*, deprecated, renamed: "appendPart(withFileData:name:fileName:mimeType:)")
    public func appendPartWithFileData(_ data: Data, name: String, fileName: String, mimeType: String) {
        appendPart(withFileData: data, name: name, fileName: fileName, mimeType: mimeType)
    }

    /// 2.7's `-appendPartWithFormData:name:`.
    @available(*, deprecated, renamed: "appendPart(withForm:name:)")
    public func appendPartWithFormData(_ data: Data, name: String) {
        appendPart(withForm: data, name: name)
    }

    /// 2.7's `-appendPartWithHeaders:body:`.
    @available(*, deprecated, renamed: "appendPart(withHeaders:body:)")
    public func appendPartWithHeaders(_ headers: [String: String]?, body: Data) {
        appendPart(withHeaders: headers, body: body)
    }

    /// 2.7's `-throttleBandwidthWithPacketSize:delay:`.
    @available(*, deprecated, renamed: "throttleBandwidth(withPacketSize:delay:)")
    public func throttleBandwidthWithPacketSize(_ numberOfBytes: Int, delay: TimeInterval) {
        throttleBandwidth(withPacketSize: numberOfBytes, delay: delay)
    }
}

// MARK: - Response serialization

extension URLResponseSerialization {
    /// 2.7's `-responseObjectForResponse:data:error:` with its error
    /// out-parameter (2.7 declared it `NS_SWIFT_NOTHROW`): nil and `error` set on failure.
    @available(*, deprecated, renamed: "responseObject(for:data:)")
    public func responseObjectForResponse(_ response: URLResponse?, data: Data?,
                                          error: UnsafeMutablePointer<NSError?>?) -> Any? {
        do {
            return try responseObject(for: response, data: data)
        } catch let thrown {
            error?.pointee = thrown as NSError
            return nil
        }
    }
}

extension HTTPResponseSerializer {
    /// 2.7's `-validateResponse:data:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "validate(_:data:)")
    public func validateResponse(_ response: HTTPURLResponse?, data: Data?) throws {
        try validate(response, data: data)
    }
}

extension JSONResponseSerializer {
    /// 2.7's `+serializerWithReadingOptions:`.
    @available(*, deprecated, renamed: "init(readingOptions:)")
    public static func serializerWithReadingOptions(_ readingOptions: JSONSerialization.ReadingOptions) -> JSONResponseSerializer {
        JSONResponseSerializer(readingOptions: readingOptions)
    }
}

extension XMLDocumentResponseSerializer {
    /// 2.7's `+serializerWithXMLDocumentOptions:`.
    @available(*, deprecated, renamed: "init(xmlDocumentOptions:)")
    public static func serializerWithXMLDocumentOptions(_ mask: XMLNode.Options) -> XMLDocumentResponseSerializer {
        XMLDocumentResponseSerializer(xmlDocumentOptions: mask)
    }
}

extension PropertyListResponseSerializer {
    /// 2.7's `+serializerWithFormat:readOptions:`.
    @available(*, deprecated, renamed: "init(format:readOptions:)")
    public static func serializerWithFormat(_ format: PropertyListSerialization.PropertyListFormat,
                                            readOptions: PropertyListSerialization.ReadOptions) -> PropertyListResponseSerializer {
        PropertyListResponseSerializer(format: format, readOptions: readOptions)
    }
}

extension CompoundResponseSerializer {
    /// 2.7's `+compoundSerializerWithResponseSerializers:`.
    @available(*, deprecated, renamed: "init(responseSerializers:)")
    public static func compoundSerializerWithResponseSerializers(_ responseSerializers: [HTTPResponseSerializer]) -> CompoundResponseSerializer {
        CompoundResponseSerializer(responseSerializers: responseSerializers)
    }
}

// MARK: - NetworkActivityIndicatorManager

extension NetworkActivityIndicatorManager {
    /// 2.7's `+sharedManager`.
    @available(*, deprecated, renamed: "shared()")
    public static func sharedManager() -> NetworkActivityIndicatorManager {
        shared()
    }

    /// 2.7's `enabled` property as Swift 2 spelled it.
    @available(*, deprecated, renamed: "isEnabled")
    public var enabled: Bool {
        get { isEnabled }
        set { isEnabled = newValue }
    }
}
