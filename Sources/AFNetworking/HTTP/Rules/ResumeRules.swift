@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the answer to a resumed (ranged) request means for the bytes already
/// in the output. 2.7 appended whatever came; here a `200` starts the body
/// over, a `206` must continue exactly at the offset, and a `416` for a body
/// already complete completes.
enum ResumeRules {
    enum Decision: Equatable {
        /// A 206 from the offset: append.
        case append
        /// A 200 (the entity changed, or Range was ignored): discard and start over.
        case restart
        /// A 416 and the output already holds the whole entity: done, keep the earlier response.
        case alreadyComplete
        /// Anything inconsistent: fail with this reason.
        case fail(String)
        /// Not a resumed request, or not an answer about the range (say, a 404).
        case notApplicable
    }

    /// Whether a later request may continue `response`'s body from the bytes
    /// already written: not when it carries a content coding (gzip, br …).
    /// The output holds the decoded bytes, while a `Range` counts bytes of the
    /// coded representation (RFC 9110 §14.1.1), whose decoder state is gone:
    /// such a download starts over instead of resuming at the wrong byte.
    static func canContinue(_ response: ReceivedResponse) -> Bool {
        canContinue(contentEncoding: response.value(forField: "content-encoding"))
    }

    /// As `canContinue(_:)`, from the response's `Content-Encoding` value.
    static func canContinue(contentEncoding: String?) -> Bool {
        guard let coding = contentEncoding else { return true }
        return coding.split(separator: ",").allSatisfy { $0.trimmingCharacters(in: .whitespaces).lowercased() == "identity" }
    }

    /// The validator a resume sends in `If-Range`: the entity tag unless it
    /// is weak (RFC 9110 §13.1.5 allows only a strong one there: a weak tag
    /// never matches, and every resume would start over), else the date.
    static func ifRangeValidator(etag: String?, lastModified: String?) -> String? {
        if let etag, !etag.trimmingCharacters(in: .whitespaces).hasPrefix("W/") { return etag }
        return lastModified
    }

    /// The offset of a `Range: bytes=N-` request, as `pause()` writes it.
    static func offset(of request: URLRequest) -> Int64? {
        guard let range = request.value(forHTTPHeaderField: "Range"), range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        return Int64(range.dropFirst(6).dropLast())
    }

    /// What `response` to a `Range: bytes=<offset>-` request means.
    /// `ifRange`: the validator the request sent in `If-Range`; `etag` and
    /// `lastModified`: the response's. A 206 continues the output only when
    /// it is the same representation (a server or proxy that ignores
    /// `If-Range` answers from a changed one) and covers the rest of it
    /// exactly: from the offset to the last byte of the length it names.
    static func decide(statusCode: Int, contentRange: String?, offset: Int64, ifRange: String? = nil,
                       etag: String? = nil, lastModified: String? = nil) -> Decision {
        switch statusCode {
        case 206:
            guard let contentRange, let range = byteRange(of: contentRange) else {
                return .fail("a 206 answer without a usable Content-Range")
            }
            guard range.first == offset else { return .fail("the server resumed at byte \(range.first), not at \(offset)") }
            if let total = range.total, range.last != total - 1 {
                return .fail("the server sent bytes \(range.first)-\(range.last) of \(total), not the rest of them")
            }
            if let change = representationChange(ifRange: ifRange, etag: etag, lastModified: lastModified) { return .fail(change) }
            return .append
        case 200:
            return .restart
        case 416:
            if let contentRange, let total = completeLength(of: contentRange), total == offset,
               representationChange(ifRange: ifRange, etag: etag, lastModified: lastModified) == nil {
                return .alreadyComplete
            }
            return .fail("the server cannot serve bytes from \(offset) on")
        default:
            return .notApplicable
        }
    }

    /// Why the answer is of another representation than `ifRange` named, or nil.
    static func representationChange(ifRange: String?, etag: String?, lastModified: String?) -> String? {
        guard let ifRange = ifRange?.trimmingCharacters(in: .whitespaces), !ifRange.isEmpty else { return nil }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            guard let etag = etag?.trimmingCharacters(in: .whitespaces), etag != ifRange else { return nil }
            return "the resource changed (its entity tag is \(etag), the bytes already written are \(ifRange))"
        }
        guard let lastModified = lastModified?.trimmingCharacters(in: .whitespaces), lastModified != ifRange else { return nil }
        return "the resource changed (last modified \(lastModified), the bytes already written are of \(ifRange))"
    }

    /// "bytes 100-199/200" → (100, 199, 200); "bytes 100-199/*" → total nil.
    /// Nil for another unit, a malformed range, or one past its total.
    private static func byteRange(of contentRange: String) -> (first: Int64, last: Int64, total: Int64?)? {
        let parts = contentRange.trimmingCharacters(in: .whitespaces).split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
        let spec = parts[1].trimmingCharacters(in: .whitespaces)
        guard let dash = spec.firstIndex(of: "-"), let slash = spec.firstIndex(of: "/"), dash < slash,
              let first = Int64(spec[..<dash]), let last = Int64(spec[spec.index(after: dash)..<slash]), first <= last,
              last < .max else { return nil }   // a last byte with no room for one more is no range
        let totalText = spec[spec.index(after: slash)...]
        if totalText == "*" { return (first, last, nil) }
        guard let total = Int64(totalText), last < total else { return nil }
        return (first, last, total)
    }

    /// Where the entity ends after a 206 that continues it: the last byte
    /// its `Content-Range` names, plus one (nil without a usable range).
    static func rangeEnd(of response: ReceivedResponse) -> Int64? {
        response.value(forField: "content-range").flatMap(byteRange(of:)).map { $0.last + 1 }
    }

    /// The full length of the entity a 206 answers with (Content-Range's total).
    static func completeLength(of response: ReceivedResponse) -> Int64? {
        response.value(forField: "content-range").flatMap(completeLength(of:))
    }

    /// "bytes */200" or "bytes 0-199/200" → 200.
    private static func completeLength(of contentRange: String) -> Int64? {
        guard let slash = contentRange.lastIndex(of: "/") else { return nil }
        return Int64(contentRange[contentRange.index(after: slash)...])
    }
}
