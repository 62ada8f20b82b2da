import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// In Core, not HTTP/Caching: the one cache rule that reads the transfer
// machine's output (HTTP uses no Core type; see LayeringTests).
extension CacheRules {
    /// Whether a request whose output is `output` may be answered from the
    /// cache: only while the output is empty. An answer from the cache is
    /// written whole and skips the head handling that starts an output over
    /// or continues it, so a resumed request that still has earlier bytes in
    /// its output (a stream not yet emptied after a resume without `Range`,
    /// a body kept across a pause) goes to the server, whose head does that.
    static func mayAnswer(into output: TransferStateMachine.Output) -> Bool {
        output.entityBytes == 0 && !output.streamHoldsStaleBytes
    }
}
