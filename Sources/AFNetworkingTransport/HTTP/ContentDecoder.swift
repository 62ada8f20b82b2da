import CAFCompression
import Foundation

/// Undoes a response's content codings (RFC 9110 §8.4), and its transfer
/// codings but chunked (RFC 9112 §7; `BodyDecoding` says which), in bounded
/// steps.
///
/// libcurl can decode too, but it expands a whole network read at once and,
/// when the owner pauses, keeps all of that expansion in memory: a 64 KiB read
/// of a gzip bomb becomes 64 MiB held inside curl. Here each step yields at
/// most `pieceSize` bytes, and a pause leaves the rest inside the decoders'
/// own state, so memory stays bounded whatever the compression ratio.
///
/// Network thread only (owned by one `Transfer`).
final class ContentDecoder {
    /// The codings this library decodes, as sent in `Accept-Encoding`.
    static let acceptEncoding = "gzip, deflate, br, zstd"
    /// The most decoded bytes one step hands on.
    static let pieceSize = 64 * 1024
    /// More stacked codings than this is no real server's answer (curl refuses over 5 too).
    static let maximumCodings = 5

    /// One C decoder per coding, in decoding order (the last applied first).
    private let stages: [OpaquePointer]
    /// Between stage i and i+1: what stage i produced and i+1 has not taken yet.
    private var buffers: [UnsafeMutableRawBufferPointer]
    private var bufferStart: [Int]
    private var bufferEnd: [Int]
    /// Decoded bytes the owner has not taken yet (it paused), handed over first.
    private let piece: UnsafeMutableRawBufferPointer
    private var pieceStart = 0
    private var pieceEnd = 0
    /// Bytes of the delivery curl is about to repeat that the first stage
    /// already consumed (curl hands a paused delivery over again, whole).
    private var consumedOfRepeat = 0

    /// What a `Content-Encoding` field value asks for.
    enum Plan: Equatable {
        /// Nothing to undo (absent, empty or `identity`).
        case identity
        /// These codings, in the order the server applied them.
        case decode([cafdec_kind])
        /// A coding this library does not know (or too many): the body is
        /// delivered as received, as browsers do, with the field telling
        /// the caller what it holds.
        case passThrough
    }

    /// Reads a `Content-Encoding` field value (a comma-separated list, case-insensitive).
    static func plan(forContentEncoding value: String?) -> Plan {
        guard let value else { return .identity }
        var kinds: [cafdec_kind] = []
        for token in value.split(separator: ",") {
            let name = token.trimmingCharacters(in: .whitespaces).lowercased()
            if name.isEmpty || name == "identity" { continue }
            guard let known = kind(named: name) else { return .passThrough }
            kinds.append(known)
        }
        if kinds.isEmpty { return .identity }
        return kinds.count > maximumCodings ? .passThrough : .decode(kinds)
    }

    /// The decoder for a coding name (lowercase), as a content coding or a
    /// transfer coding (curl accepts the same names in both); nil when this
    /// library does not know it.
    static func kind(named name: String) -> cafdec_kind? {
        switch name {
        case "gzip", "x-gzip": return CAFDEC_GZIP
        case "deflate": return CAFDEC_DEFLATE
        case "br": return CAFDEC_BROTLI
        case "zstd": return CAFDEC_ZSTD
        default: return nil
        }
    }

    /// Decoders for `codings` (in the order the server applied them); nil when memory is short.
    init?(codings: [cafdec_kind]) {
        var made: [OpaquePointer] = []
        for kind in codings.reversed() {
            guard let decoder = cafdec_new(kind) else {
                made.forEach { cafdec_free($0) }
                return nil
            }
            made.append(decoder)
        }
        stages = made
        let between = max(made.count - 1, 0)
        buffers = (0..<between).map { _ in UnsafeMutableRawBufferPointer.allocate(byteCount: Self.pieceSize, alignment: 1) }
        bufferStart = Array(repeating: 0, count: between)
        bufferEnd = Array(repeating: 0, count: between)
        piece = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.pieceSize, alignment: 1)
    }

    deinit {
        stages.forEach { cafdec_free($0) }
        buffers.forEach { $0.deallocate() }
        piece.deallocate()
    }

    /// The data is not valid in its coding.
    struct Damaged: Error {}

    /// Whether the body so far ends where its coding says it ends (true for
    /// no body at all: a HEAD, a 304). A body cut short inside a compressed
    /// stream is not a complete body, however it was delimited.
    var isComplete: Bool {
        !started || (stages.allSatisfy { cafdec_finished($0) != 0 } && pieceStart == pieceEnd
            && zip(bufferStart, bufferEnd).allSatisfy { $0 == $1 })
    }
    private var started = false

    /// What became of one delivery from curl.
    enum Outcome: Equatable {
        /// Every byte decoded and every decoded byte taken.
        case consumed
        /// The owner declined a piece: curl must keep the delivery and hand
        /// it over again (the consumed part is skipped then).
        case paused
    }

    /// Decodes `input` (one delivery from curl) and hands each decoded piece
    /// to `take`, which returns whether it took it.
    func decode(_ input: UnsafeRawBufferPointer, take: (UnsafeRawBufferPointer) -> Bool) throws(Damaged) -> Outcome {
        precondition(consumedOfRepeat <= input.count, "curl repeats a paused delivery from its start")
        if !input.isEmpty { started = true }
        var offset = consumedOfRepeat
        while true {
            if pieceStart < pieceEnd {
                let pending = UnsafeRawBufferPointer(rebasing: piece[pieceStart..<pieceEnd])
                guard take(pending) else {
                    consumedOfRepeat = offset
                    return .paused
                }
                pieceStart = 0
                pieceEnd = 0
            }
            let produced = try fill(stage: stages.count - 1, into: piece, input: input, offset: &offset)
            if produced == 0 {
                consumedOfRepeat = 0
                return .consumed
            }
            pieceEnd = produced
        }
    }

    /// Fills `out` from stage `index`, pulling from the stage before it (or
    /// from `input` for the first). Returns 0 when everything given so far
    /// has been decoded.
    private func fill(stage index: Int, into out: UnsafeMutableRawBufferPointer,
                      input: UnsafeRawBufferPointer, offset: inout Int) throws(Damaged) -> Int {
        while true {
            let source: UnsafeRawBufferPointer
            if index == 0 {
                source = UnsafeRawBufferPointer(rebasing: input[offset...])
            } else {
                source = UnsafeRawBufferPointer(rebasing: buffers[index - 1][bufferStart[index - 1]..<bufferEnd[index - 1]])
            }
            var used = 0
            var produced = 0
            let status = cafdec_step(stages[index], source.baseAddress?.assumingMemoryBound(to: UInt8.self), source.count, &used,
                                     out.baseAddress?.assumingMemoryBound(to: UInt8.self), out.count, &produced)
            guard status == 0 else { throw Damaged() }
            if index == 0 { offset += used } else { bufferStart[index - 1] += used }
            if produced > 0 { return produced }
            if used > 0 { continue }
            // Nothing moved although there was something to decode: stuck.
            if source.count > 0 { throw Damaged() }
            // Nothing moved: this stage needs more of its source.
            if index == 0 { return 0 }
            let refilled = try fill(stage: index - 1, into: buffers[index - 1], input: input, offset: &offset)
            if refilled == 0 { return 0 }
            bufferStart[index - 1] = 0
            bufferEnd[index - 1] = refilled
        }
    }
}
