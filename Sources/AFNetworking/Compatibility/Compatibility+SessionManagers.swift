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

    // 2.7's verbs (GET, HEAD, POST, PUT, PATCH, DELETE) are declared `open` in
    // the class body (Manager/HTTPSessionManager.swift), so that a subclass can
    // override them: Swift cannot override a member declared in an extension.
}

// MARK: - URLSessionManager

extension URLSessionManager {
    // 2.7's task factories (dataTaskWithRequest, uploadTaskWithRequest,
    // uploadTaskWithStreamedRequest, downloadTaskWithRequest,
    // downloadTaskWithResumeData) are declared `open` in the class body
    // (Manager/URLSessionManager.swift), so that a subclass can override them.

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
