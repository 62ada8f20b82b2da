@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Range requests and the cache (RFC 9110 §14, RFC 9111 §3.3, §3.4, §4):
/// a single byte range is cut from a stored complete entity; a 206 that
/// holds the whole representation is stored as that entity; partial
/// content is never stored or combined, and a 206 never answers a request
/// that did not ask for a range.
extension CacheRules {
    /// One range of a `Range: bytes=…` field (RFC 9110 §14.1.1).
    enum ByteRange: Equatable {
        /// `first-last` or `first-` (last nil).
        case from(Int64, through: Int64?)
        /// `-n`: the last n bytes.
        case suffix(Int64)

        /// The field's only range; nil for another unit, several ranges or
        /// anything malformed (such requests go to the server as they are).
        init?(field: String) {
            let value = field.trimmingCharacters(in: .whitespaces)
            guard let equals = value.firstIndex(of: "="),
                  value[..<equals].lowercased() == "bytes" else { return nil }
            let set = value[value.index(after: equals)...]
            guard !set.contains(","), let dash = set.firstIndex(of: "-") else { return nil }
            let first = set[..<dash].trimmingCharacters(in: .whitespaces)
            let last = set[set.index(after: dash)...].trimmingCharacters(in: .whitespaces)
            if first.isEmpty {
                guard let length = Self.digits(last) else { return nil }
                self = .suffix(length)
                return
            }
            guard let start = Self.digits(first) else { return nil }
            if last.isEmpty {
                self = .from(start, through: nil)
                return
            }
            guard let end = Self.digits(last), end >= start else { return nil }
            self = .from(start, through: end)
        }

        /// 1*DIGIT that fits an Int64 (no sign, no spaces inside).
        private static func digits(_ text: String) -> Int64? {
            guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return Int64(text)
        }

        /// The bytes it selects of a representation of `length` bytes, or nil
        /// when it selects none (unsatisfiable, RFC 9110 §14.1.1).
        func bounds(in length: Int64) -> ClosedRange<Int64>? {
            guard length > 0 else { return nil }
            switch self {
            case .from(let first, let last):
                guard first < length else { return nil }
                return first...min(last ?? length - 1, length - 1)
            case .suffix(let count):
                guard count > 0 else { return nil }
                return max(0, length - count)...(length - 1)
            }
        }
    }

    /// Whether a ranged GET may be looked up at all: one well-formed byte
    /// range that is not how a download resumes. `bytes=N-` (N > 0) is the
    /// form every resume in the library sends (a paused operation, a
    /// restart-proof file; download tasks never consult the cache); its
    /// output already holds the first
    /// N bytes, which an answer from the cache would not continue (it skips
    /// the resume bookkeeping that runs on a network head), so it goes to
    /// the server.
    static func mayConsultCache(forRange field: String, of request: URLRequest) -> Bool {
        guard ByteRange(field: field) != nil else { return false }
        if let offset = ResumeRules.offset(of: request), offset > 0 { return false }
        return true
    }

    /// How a stored response answers `request`.
    enum RangeAnswer {
        /// As stored (no Range, or an `If-Range` that does not match: RFC 9110 §13.1.5).
        case whole
        /// This 206, cut from the stored entity.
        case partial(CachedURLResponse)
        /// The cache cannot answer the range: the server must.
        case forward
    }

    /// The answer to `request` from `cached` (a stored response fit to be reused).
    static func rangeAnswer(to request: URLRequest, from cached: CachedURLResponse) -> RangeAnswer {
        guard let field = request.value(forHTTPHeaderField: "Range") else { return .whole }
        guard let range = ByteRange(field: field), let stored = cached.response as? HTTPURLResponse else { return .forward }
        if let condition = request.value(forHTTPHeaderField: "If-Range"), !ifRangeMatches(condition, stored) { return .whole }
        guard isCompleteIdentityEntity(stored, body: cached.data),
              let bounds = range.bounds(in: Int64(cached.data.count)) else { return .forward }
        let slice = cached.data.subdata(in: Int(bounds.lowerBound)..<Int(bounds.upperBound + 1))
        var fields = headerFields(of: stored).filter {
            !["content-length", "content-range"].contains($0.key.lowercased())
        }
        fields["Content-Range"] = "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(cached.data.count)"
        fields["Content-Length"] = String(slice.count)
        let partial = rebuilt(stored, fields: fields, statusCode: 206)
        return .partial(CachedURLResponse(response: partial, data: slice, userInfo: cached.userInfo, storagePolicy: .notAllowed))
    }

    /// `If-Range` (RFC 9110 §13.1.5): a strong entity tag identical to the
    /// stored one, or a date exactly equal to its `Last-Modified` when that
    /// is a strong validator for a cache (§8.8.2.2: the entry has a `Date` at
    /// least 60 seconds later). A weak tag never matches.
    static func ifRangeMatches(_ condition: String, _ stored: HTTPURLResponse) -> Bool {
        let given = condition.trimmingCharacters(in: .whitespaces)
        if given.hasPrefix("\"") || given.hasPrefix("W/") {
            guard given.hasPrefix("\""), let tag = stored.value(forHTTPHeaderField: "ETag")?.trimmingCharacters(in: .whitespaces),
                  tag.hasPrefix("\"") else { return false }
            return tag == given
        }
        guard let modified = stored.value(forHTTPHeaderField: "Last-Modified")?.trimmingCharacters(in: .whitespaces),
              modified == given, let changed = HTTPDate.parse(modified),
              let date = stored.value(forHTTPHeaderField: "Date").flatMap(HTTPDate.parse) else { return false }
        return changed <= date - 60
    }

    /// Whether bytes can be cut from the stored entity: a 200 whose body is
    /// the representation itself — no content coding (offsets count the
    /// coded bytes, and the body is stored decoded), and as long as it says.
    static func isCompleteIdentityEntity(_ stored: HTTPURLResponse, body: Data) -> Bool {
        guard stored.statusCode == 200, stored.value(forHTTPHeaderField: "Content-Range") == nil else { return false }
        if let coding = stored.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces),
           !coding.isEmpty, coding.lowercased() != "identity" { return false }
        if let declared = stored.value(forHTTPHeaderField: "Content-Length") {
            return Int(declared.trimmingCharacters(in: .whitespaces)) == body.count
        }
        return true
    }

    /// A 206 that holds the whole representation (`Content-Range: bytes
    /// 0-(N-1)/N`, N bytes long by `Content-Length`, not content-coded), so it
    /// may be stored as that representation's 200 (RFC 9111 §3.4).
    static func coversWholeRepresentation(_ head: ReceivedResponse) -> Bool {
        guard head.statusCode == 206 else { return false }
        let ranges = head.values(forField: "content-range")
        guard ranges.count == 1, let whole = completeLength(ofWholeRange: ranges[0]),
              head.values(forField: "content-length").count == 1,
              Int64(head.values(forField: "content-length")[0].trimmingCharacters(in: .whitespaces)) == whole,
              head.value(forField: "transfer-encoding") == nil else { return false }
        if let coding = head.value(forField: "content-encoding")?.trimmingCharacters(in: .whitespaces),
           !coding.isEmpty, coding.lowercased() != "identity" { return false }
        return true
    }

    /// "bytes 0-99/100" → 100; nil for any other range or an unknown length.
    private static func completeLength(ofWholeRange field: String) -> Int64? {
        let value = field.trimmingCharacters(in: .whitespaces)
        guard let space = value.firstIndex(of: " "), value[..<space].lowercased() == "bytes" else { return nil }
        let spec = value[value.index(after: space)...].trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, bounds[0] == "0", let total = Int64(parts[1]), total > 0,
              parts[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }),
              bounds[1].utf8.allSatisfy({ (0x30...0x39).contains($0) }), Int64(bounds[1]) == total - 1 else { return nil }
        return total
    }
}
