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
    /// 2.7's `+manager`: a new manager of this class without a base URL.
    /// Made through `init?(coder:)` from an empty archive (a subclass whose
    /// decoding refuses that cannot be made this way: use `init(baseURL:)`).
    @available(*, deprecated, renamed: "init()")
    public class func manager() -> Self {
        guard let manager = fresh(baseURL: nil) else {
            preconditionFailure("\(self).init(coder:) refused an empty archive: make it with init(baseURL:)")
        }
        return manager
    }

    // 2.7's -HTTPRequestOperationWithRequest:success:failure: and the verbs
    // (GET, HEAD, POST, PUT, PATCH, DELETE) are declared `open` in the class
    // body (Manager/HTTPRequestOperationManager.swift), so that a subclass can
    // override them: Swift cannot override a member declared in an extension.
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
