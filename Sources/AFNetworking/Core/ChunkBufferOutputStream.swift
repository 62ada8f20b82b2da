import Foundation

/// Marks an output as a `ResponseBytes` stream: the response writer that is
/// given this stream hands the body to `buffer` as chunks (see
/// `ResponseBodyWriter`) instead of writing it. It is an `OutputStream` so it
/// travels where every other output does — an operation's `outputStream`, a
/// task's installed output — without a second path through the driver.
final class ChunkBufferOutputStream: OutputStream {
    let buffer: BodyChunkBuffer

    init(buffer: BodyChunkBuffer) {
        self.buffer = buffer
        super.init(toMemory: ())
    }

    /// Required by OutputStream; a stream made this way feeds a buffer nobody reads.
    required init(toMemory: ()) {
        buffer = BodyChunkBuffer()
        super.init(toMemory: ())
    }

    /// Closed by `URLConnectionOperation.outputStream`'s setter when another
    /// stream replaces this one: before the start that means the body will
    /// never come here, so the reader is told instead of waiting forever.
    /// (The response writer never closes this stream.)
    override func close() {
        buffer.outputWasReplaced()
    }

    /// The body reaches the buffer through the writer only (which accounts
    /// for every byte until the consumer takes it): a direct write is refused.
    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int { -1 }
}
