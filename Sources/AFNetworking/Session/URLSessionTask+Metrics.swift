import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTask {
    /// What libcurl measured for the final hop of a session manager's task,
    /// once its outcome is known — in its completion handler already (nil for
    /// other tasks, and for cached answers).
    public var transferMetrics: TransferMetrics? {
        (self as? ManagedSessionTask)?.frontend.requestDriver.finishedMetrics
    }
}
