import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cuts a body that arrives in chunks into lines, as Foundation's
/// `AsyncLineSequence` does: a line ends at LF, CR, CR LF, NEL (U+0085),
/// LINE SEPARATOR (U+2028) or PARAGRAPH SEPARATOR (U+2029), and never
/// includes its break. A break may straddle chunks (the CR of a CR LF ending
/// one chunk, the first bytes of a NEL, LS or PS ending it): it is still one
/// break. Lines are decoded as UTF-8, invalid bytes becoming U+FFFD.
///
/// A value with no I/O: `ResponseLines` feeds it chunks and asks for lines,
/// and its tests try every way of cutting a text without a socket.
///
/// Bytes are scanned in place. A line is copied only when it spans chunks
/// (its start waits in `carried` until its end arrives) and decoded once, at
/// its end — never a `String` per byte.
struct LineSplitter {
    /// A line longer than this (bytes of UTF-8, without its break) is refused.
    let maximumLength: Int

    /// The chunk being scanned, and the offset in it of the first byte not yet in a line.
    private var chunk = Data()
    private var offset = 0
    /// The start of the unfinished line, from earlier chunks.
    private var carried: [UInt8] = []
    /// The last chunk ended with a CR: an LF that starts the next one is part of that break.
    private var skipsLineFeed = false

    init(maximumLength: Int) {
        self.maximumLength = maximumLength
    }

    /// Takes the next chunk, once `nextLine()` returned nil (the previous one is used up).
    mutating func append(_ data: Data) {
        assert(offset == chunk.count, "append(_:) before the previous chunk was used up")
        chunk = data
        offset = 0
        if skipsLineFeed, let first = data.first {
            skipsLineFeed = false
            if first == 0x0A { offset = 1 }
        }
    }

    /// The next line that ended in what was appended; nil when the rest of
    /// the chunk needs more bytes (it is kept for the next one). Throws
    /// `lineTooLong` for a line longer than `maximumLength`; the splitter is
    /// not used after that.
    mutating func nextLine() throws -> String? {
        let start = offset
        let carried = self.carried
        guard let found = chunk.withUnsafeBytes({ Self.firstBreak(in: $0, from: start, carried: carried) }) else {
            let rest = chunk.count - start
            // Up to two of these bytes may yet prove to be the start of a
            // break (a NEL, LS or PS cut by the chunk's end), which is not
            // part of the line: only a line longer by more fails now.
            guard carried.count + rest - 2 <= maximumLength else { throw lineTooLong }
            self.carried.append(contentsOf: bytes(start..<chunk.count))
            chunk = Data()
            offset = 0
            return nil
        }
        offset = found.next
        skipsLineFeed = found.skipsLineFeed
        guard carried.count - found.carriedToDrop + (found.lineEnd - start) <= maximumLength else { throw lineTooLong }
        if carried.isEmpty {
            return String(decoding: bytes(start..<found.lineEnd), as: UTF8.self)
        }
        self.carried.removeLast(found.carriedToDrop)
        self.carried.append(contentsOf: bytes(start..<found.lineEnd))
        let line = String(decoding: self.carried, as: UTF8.self)
        // The storage of a long line is not kept for the rest of the body.
        self.carried.removeAll(keepingCapacity: self.carried.capacity <= 64 * 1024)
        return line
    }

    /// The end of the body (after `nextLine()` returned nil): its last line
    /// when that had no break, nil when nothing is left (an empty body, or
    /// one that ended with a break).
    mutating func finish() throws -> String? {
        guard !carried.isEmpty else { return nil }
        guard carried.count <= maximumLength else { throw lineTooLong }
        let line = String(decoding: carried, as: UTF8.self)
        carried = []
        return line
    }

    /// What a line longer than `maximumLength` ends the sequence with.
    var lineTooLong: NSError {
        NSError(domain: NSURLErrorDomain, code: NSURLErrorDataLengthExceedsMaximum, userInfo: [
            NSLocalizedDescriptionKey: "A line of the response body is longer than \(maximumLength) bytes, the most ResponseLines accepts.",
        ])
    }

    /// The chunk's bytes at `range` (offsets from its start: a chunk may be a slice).
    private func bytes(_ range: Range<Int>) -> Data {
        chunk[(chunk.startIndex + range.lowerBound)..<(chunk.startIndex + range.upperBound)]
    }

    // MARK: - Finding a break

    /// Where a break is, in offsets of the chunk.
    struct Break {
        /// The line's bytes in the chunk end here (they are `start..<lineEnd`).
        var lineEnd: Int
        /// Bytes at the end of `carried` that were the first bytes of the break.
        var carriedToDrop: Int
        /// The first byte after the break.
        var next: Int
        /// The break is a CR that ends the chunk (an LF may start the next one).
        var skipsLineFeed: Bool
    }

    /// The first break at or after `start` in `bytes`, whose line began with `carried`.
    static func firstBreak(in bytes: UnsafeRawBufferPointer, from start: Int, carried: [UInt8]) -> Break? {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x0A:
                return Break(lineEnd: index, carriedToDrop: 0, next: index + 1, skipsLineFeed: false)
            case 0x0D:
                guard index + 1 < bytes.count else {
                    return Break(lineEnd: index, carriedToDrop: 0, next: index + 1, skipsLineFeed: true)
                }
                return Break(lineEnd: index, carriedToDrop: 0, next: bytes[index + 1] == 0x0A ? index + 2 : index + 1, skipsLineFeed: false)
            case 0x85, 0xA8, 0xA9:
                // The last byte of NEL (C2 85), LS (E2 80 A8) or PS (E2 80 A9)
                // when the line's bytes just before it are the rest. C2 and E2
                // are lead bytes, never continuations, so whatever precedes
                // them, these bytes decode as that character.
                let leadLength = byte == 0x85 ? 1 : 2
                let previous = lineByte(1, before: index, in: bytes, from: start, carried: carried)
                let isBreak = leadLength == 1
                    ? previous == 0xC2
                    : previous == 0x80 && lineByte(2, before: index, in: bytes, from: start, carried: carried) == 0xE2
                if isBreak { return lineBreak(ending: index, leadLength: leadLength, start: start) }
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The line's byte `distance` places before `index` (in the chunk from
    /// `start`, then in `carried`); nil before the line's first byte.
    private static func lineByte(_ distance: Int, before index: Int, in bytes: UnsafeRawBufferPointer, from start: Int,
                                 carried: [UInt8]) -> UInt8? {
        let position = index - distance
        if position >= start { return bytes[position] }
        let fromEnd = start - position
        return fromEnd <= carried.count ? carried[carried.count - fromEnd] : nil
    }

    /// The break of a multi-byte character whose last byte is at `index`,
    /// its first `leadLength` bytes before it, maybe in `carried`.
    private static func lineBreak(ending index: Int, leadLength: Int, start: Int) -> Break {
        let lineEnd = index - leadLength
        guard lineEnd < start else { return Break(lineEnd: lineEnd, carriedToDrop: 0, next: index + 1, skipsLineFeed: false) }
        return Break(lineEnd: start, carriedToDrop: start - lineEnd, next: index + 1, skipsLineFeed: false)
    }
}
