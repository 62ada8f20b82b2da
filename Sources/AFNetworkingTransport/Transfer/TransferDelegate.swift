import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the owner wants done with a piece of the response body.
package enum BodyDisposition: Sendable {
    /// Taken: carry on.
    case accepted
    /// Not taken now: the owner's buffer is full. curl keeps the bytes and the
    /// transfer stops reading from the socket until the owner calls
    /// `NetworkEngine.resumeReceiving(_:)`.
    case pause
    /// Refused: the transfer ends with this error.
    case abort(NSError)
}

/// How a transfer reports to whoever asked for it. Every method is called on
/// the network thread, which must never wait: implementations only update
/// state and hand anything slow (user blocks, streams, files, cookie storage)
/// to another queue. Order per transfer: heads and body pieces as they
/// arrive, upload progress in between, then exactly one `didComplete`.
package protocol TransferDelegate: AnyObject, Sendable {
    /// A complete response head (status line and every field). Interim 1xx
    /// heads are not reported; a transfer that authenticates inside curl
    /// (Digest) reports the challenge's head, then the final one. Returning an
    /// error aborts the transfer with it.
    func transfer(_ transfer: Transfer, didReceiveHead response: ReceivedResponse) -> NSError?
    /// A piece of the decoded body of the last reported head.
    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> BodyDisposition
    /// Upload progress: bytes handed to the connection since the last call.
    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64)
    /// The end. `error` is nil for a complete HTTP exchange of any status code;
    /// `response` is the final head (with the redirect target resolved for a 3xx).
    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?)
}
