import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body as it arrives: an `AsyncSequence` of `Data` chunks, as
/// `URLSession.AsyncBytes` is of bytes, from `URLSessionManager.bytes(for:)`,
/// the managers' `bytes(_:parameters:headers:)` or an operation's
/// `makeResponseBytes()`.
///
/// - Back-pressure: at most about 1 MiB waits for the reader. When that much
///   is unread, the transfer is paused (curl stops reading the socket, so the
///   server's sends stall too); reading lets it continue. Time spent paused
///   is not idle time: a slow reader does not make the request time out
///   (a resource timeout, if one is set, still counts).
/// - Errors: a transport failure after the head (a dropped connection, a body
///   shorter than its `Content-Length`, a timeout) is thrown by `next()` once
///   the chunks before it were read. An HTTP error status is not an error
///   here: check the response's `statusCode`; its body is the sequence.
/// - Cancellation: cancelling the reading task makes `next()` throw
///   `CancellationError` and stops the transfer; so does dropping every copy
///   of the sequence (and its iterators) before the end.
/// - One pass: the chunks go to whichever iterator asks first; iterate it
///   from one task at a time.
public struct ResponseBytes: AsyncSequence, Sendable {
    /// A chunk of the body, as it came off the connection (never empty).
    public typealias Element = Data

    /// Cancels the transfer when the last copy of the sequence and of its
    /// iterators is gone before the end (nobody will read what follows).
    final class Owner: Sendable {
        let buffer: BodyChunkBuffer

        init(_ buffer: BodyChunkBuffer) { self.buffer = buffer }

        deinit { buffer.cancel() }
    }

    let owner: Owner

    init(buffer: BodyChunkBuffer) {
        owner = Owner(buffer)
    }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let owner: Owner

        /// The next chunk; nil at the end of the body. Throws the transfer's
        /// error, or `CancellationError` when the calling task was cancelled.
        public mutating func next() async throws -> Data? {
            try await owner.buffer.next()
        }
    }

    /// An iterator over the body (one pass: see the type's notes).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(owner: owner)
    }

    /// Calls `answer` once with the final response head or the failure before it.
    func whenHeadArrives(_ answer: @escaping @Sendable (Result<URLResponse, NSError>) -> Void) {
        owner.buffer.whenHeadArrives(answer)
    }

    /// Bytes waiting for the reader now and the most that ever waited (tests check the bound).
    var bufferedBytes: (now: Int, peak: Int) { owner.buffer.bufferedBytes }
}

/// Ties a made `ResponseBytes` to the request that feeds it.
enum ResponseBytesLink {
    /// The output stream that feeds `bytes`, for a request that `cancel` stops.
    static func make(cancel: @escaping @Sendable () -> Void) -> (ResponseBytes, ChunkBufferOutputStream) {
        let buffer = BodyChunkBuffer()
        buffer.onCancel(cancel)
        return (ResponseBytes(buffer: buffer), ChunkBufferOutputStream(buffer: buffer))
    }
}
