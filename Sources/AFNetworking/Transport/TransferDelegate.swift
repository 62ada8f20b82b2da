import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The small interface through which the transport reports to whoever asked
/// for a transfer (an operation). Every method is called on the network thread,
/// in this order: at most one `didReceiveResponse`, any number of body and
/// progress calls, then exactly one `didComplete`.
protocol TransferDelegate: AnyObject {
    /// The head of the final response (after curl followed any redirects).
    func transfer(_ transfer: Transfer, didReceiveResponse response: ReceivedResponse)
    /// A piece of the decoded body. Returning an error aborts the transfer and
    /// that error becomes its result (an output stream that cannot be written).
    func transfer(_ transfer: Transfer, didReceiveBodyBytes bytes: UnsafeRawBufferPointer) -> Error?
    /// Upload progress: bytes handed to the connection since the last call.
    func transfer(_ transfer: Transfer, didSendBodyBytes bytesSent: Int, totalBytesSent: Int64, totalBytesExpected: Int64)
    /// The end: `error` is nil for a complete HTTP exchange of any status code.
    func transfer(_ transfer: Transfer, didCompleteWithResponse response: ReceivedResponse?, error: NSError?)
}
