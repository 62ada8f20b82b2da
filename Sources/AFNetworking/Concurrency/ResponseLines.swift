import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ResponseBytes {
    /// The body as lines of text, as `URLSession.AsyncBytes.lines` gives
    /// them (see `ResponseLines` for the breaks, the decoding and the bound
    /// on a line's length). Reading the lines reads the sequence's chunks.
    public var lines: ResponseLines {
        ResponseLines(bytes: self)
    }
}

/// A response body as lines: an `AsyncSequence` of `String`, from
/// `ResponseBytes.lines`.
///
/// - Breaks: as Foundation's `AsyncLineSequence`, a line ends at LF, CR,
///   CR LF (one break, also when the CR ends one chunk and the LF starts the
///   next), NEL (U+0085), LINE SEPARATOR (U+2028) or PARAGRAPH SEPARATOR
///   (U+2029), and does not include its break. A line between two breaks is
///   yielded even when empty; a last line without a break is yielded; an
///   empty body yields nothing.
/// - Text: each line is decoded as UTF-8, whatever the response's charset,
///   with invalid bytes replaced by U+FFFD (as `String(decoding:as:)` does).
/// - Length: the body is the server's, so a line is bounded. A line longer
///   than `maximumLineLength` bytes (8 MiB) makes `next()` throw an `NSError`
///   in `NSURLErrorDomain` with code `NSURLErrorDataLengthExceedsMaximum`,
///   after the lines before it, and stops the transfer (an operation then
///   finishes with `NSURLErrorCancelled`). At most about that much of one
///   line is held in memory.
/// - Errors and cancellation: as for `ResponseBytes`. A transport failure is
///   thrown after the lines that ended before it (a line it cut short is not
///   yielded); cancelling the reading task throws `CancellationError` and
///   stops the transfer. After an error `next()` returns nil.
/// - One pass: the lines are read from the body's one sequence of chunks.
public struct ResponseLines: AsyncSequence, Sendable {
    /// A line, without its break.
    public typealias Element = String

    /// The longest line accepted, in bytes of UTF-8 without its break: 8 MiB.
    public static let maximumLineLength = 8 << 20

    let bytes: ResponseBytes
    /// `maximumLineLength`, or a smaller bound for tests.
    let maximumLength: Int

    init(bytes: ResponseBytes, maximumLength: Int = ResponseLines.maximumLineLength) {
        self.bytes = bytes
        self.maximumLength = maximumLength
    }

    /// Reads the lines in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: ResponseBytes.AsyncIterator
        var splitter: LineSplitter
        /// The end, an error or a cancellation was reported: every later `next()` is nil.
        var isDone = false

        /// The next line; nil after the last. Throws the transfer's error,
        /// `CancellationError` when the calling task was cancelled, or the
        /// length error for a line longer than `maximumLineLength`.
        public mutating func next() async throws -> String? {
            guard !isDone else { return nil }
            while true {
                if let line = try split({ try $0.nextLine() }) { return line }
                let chunk: Data?
                do {
                    chunk = try await base.next()
                } catch {
                    isDone = true
                    throw error
                }
                guard let chunk else {
                    isDone = true
                    return try split { try $0.finish() }
                }
                splitter.append(chunk)
            }
        }

        /// Runs one step of the splitter; a line too long ends the sequence.
        private mutating func split(_ step: (inout LineSplitter) throws -> String?) throws -> String? {
            do {
                return try step(&splitter)
            } catch {
                isDone = true
                // Nothing after it can be read as lines: the server is not
                // left sending into a paused transfer until the sequence is dropped.
                base.owner.buffer.cancel()
                throw error
            }
        }
    }

    /// An iterator over the lines (one pass: see the type's notes).
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: bytes.makeAsyncIterator(), splitter: LineSplitter(maximumLength: maximumLength))
    }
}
