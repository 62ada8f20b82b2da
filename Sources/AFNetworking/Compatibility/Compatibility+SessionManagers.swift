import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

// AFNetworking 2.x spellings of the session managers' methods, deprecated with
// `renamed:` and forwarding to the current API.

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
