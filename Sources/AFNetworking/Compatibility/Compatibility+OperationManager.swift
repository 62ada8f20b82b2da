import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

// AFNetworking 2.x spellings of the operation manager's and the operations'
// methods, deprecated with `renamed:` and forwarding to the current API.

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
