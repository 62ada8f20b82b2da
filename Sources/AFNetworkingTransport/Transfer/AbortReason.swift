import Foundation

/// Why the library (not the network or the server) ended a transfer. The
/// first reason given wins: a transfer aborted as cancelled stays cancelled
/// even if a timeout fires while the abort is on its way.
package enum AbortReason: Sendable {
    /// The owner no longer wants the transfer (cancel, pause, a superseded hop).
    case cancelled
    /// No progress for the idle timeout.
    case timedOut
    /// The owner refused the response (its output failed, a resumed answer
    /// did not fit …): this error is the transfer's result.
    case failed(NSError)
    /// The request body stream failed or ended before its declared length.
    case bodyStreamFailed(NSError?)
    /// The server's response broke the protocol (RFC 9112) in a way curl lets through.
    case badServerResponse(String)
    /// The certificate evaluator rejected the server inside the TLS handshake.
    case certificateRejected(any PeerRejection)
}
