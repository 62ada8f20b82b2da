import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLConnectionOperation {
    /// What libcurl measured for the final hop, once the outcome is known —
    /// in the success and failure blocks already (nil before, and for an
    /// answer served from the cache).
    public var metrics: TransferMetrics? { driver.finishedMetrics }
}
