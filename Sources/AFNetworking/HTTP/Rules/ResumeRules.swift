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

    /// The offset of a `Range: bytes=N-` request, as `pause()` writes it.
    static func offset(of request: URLRequest) -> Int64? {
        guard let range = request.value(forHTTPHeaderField: "Range"), range.hasPrefix("bytes="), range.hasSuffix("-") else { return nil }
        return Int64(range.dropFirst(6).dropLast())
    }

    static func decide(statusCode: Int, contentRange: String?, offset: Int64) -> Decision {
        switch statusCode {
        case 206:
            guard let contentRange, let start = firstByte(of: contentRange) else {
                return .fail("a 206 answer without a usable Content-Range")
            }
            return start == offset ? .append : .fail("the server resumed at byte \(start), not at \(offset)")
        case 200:
            return .restart
        case 416:
            if let contentRange, let total = completeLength(of: contentRange), total == offset { return .alreadyComplete }
            return .fail("the server cannot serve bytes from \(offset) on")
        default:
            return .notApplicable
        }
    }

    /// "bytes 100-199/200" → 100.
    private static func firstByte(of contentRange: String) -> Int64? {
        guard let spec = contentRange.split(separator: " ").last, let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash])
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
