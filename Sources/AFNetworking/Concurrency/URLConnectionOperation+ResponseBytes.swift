@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

extension URLConnectionOperation {
    /// The response body as an `AsyncSequence` of chunks, read while the
    /// operation runs, instead of collected in `responseData`.
    ///
    /// Call it before the operation starts: it replaces `outputStream`, and
    /// the operation then keeps none of the body (`responseData` stays nil,
    /// a response serializer sees no data). Called after the start, the
    /// sequence throws `NSURLErrorUnknown` at once; so does it when
    /// `outputStream` is replaced before the start. At most about 1 MiB waits unread: beyond that the
    /// transfer pauses until the sequence is read. Cancelling the reading
    /// task, or dropping the sequence before its end, cancels the operation;
    /// cancelling the operation ends the sequence with `NSURLErrorCancelled`.
    /// The completion blocks run as usual once the body has been handed over.
    public func makeResponseBytes() -> ResponseBytes {
        let (bytes, stream) = ResponseBytesLink.make { [weak self] in self?.cancel() }
        // Decided in one step with start() taking the output (a queue may be
        // starting the operation right now): installed before, or refused.
        let installed = settings.withLock { settings -> (Bool, OutputStream?) in
            guard !settings.outputTaken, !settings.finished else { return (false, nil) }
            defer { settings.outputStream = stream }
            return (true, settings.outputStream)
        }
        guard installed.0 else {
            stream.buffer.finish(response: nil, error: NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [
                NSLocalizedDescriptionKey: "makeResponseBytes() was called after the operation started.",
            ]))
            return bytes
        }
        // A stream it replaces (a memory stream an `outputStream` read made) is done with.
        if let replaced = installed.1, replaced !== stream { replaced.close() }
        return bytes
    }
}
