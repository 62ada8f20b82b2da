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
        guard driver.phase == .ready, !isFinished else {
            stream.buffer.finish(response: nil, error: NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown, userInfo: [
                NSLocalizedDescriptionKey: "makeResponseBytes() was called after the operation started.",
            ]))
            return bytes
        }
        outputStream = stream
        return bytes
    }
}
