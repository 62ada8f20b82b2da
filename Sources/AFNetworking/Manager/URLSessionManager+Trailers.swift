import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionManager {
    /// The trailer fields (RFC 9110 §6.5) that followed the body of `task`'s
    /// response, once the task has completed (in its completion handler,
    /// the task-did-complete block and afterwards). Empty before that, for a
    /// cached answer, a response without trailers, or a task of another
    /// manager. Repeated names are joined by ", ". Beyond 2.7 / 3.x:
    /// `URLSessionTask` has no place for trailers.
    public func responseTrailerFields(for task: URLSessionTask) -> [String: String] {
        ownFrontend(of: task)?.requestDriver.trailerFields ?? [:]
    }
}
