import Foundation

/// Collects the header lines curl hands over, one response head at a time,
/// and checks what curl lets through but RFC 9112 / RFC 9110 forbid.
///
/// Works on bytes, into one buffer per head with the field positions beside
/// it: this runs on the network thread for every header line, and making two
/// Strings per field (and lowercasing names to compare them) cost more than
/// the rest of a small request. Strings are made later, on demand
/// (`ReceivedResponse`).
package struct ResponseHead: Sendable {
    /// What one header line meant.
    package enum LineResult: Equatable, Sendable {
        /// More lines to come.
        case pending
        /// The blank line ending a final (non-1xx) head: the response head is complete.
        case complete
        /// The head breaks the protocol; the transfer must fail with this reason.
        case invalid(String)
    }

    /// Bytes a whole head may take before it is refused. Below curl's own
    /// limit (300 KiB), so the refusal is ours and says why; browsers allow
    /// about as much.
    package static let maximumHeadBytes = 256 * 1024

    /// The status line, then each field's name and value, back to back.
    private var bytes: [UInt8] = []
    private var statusLineEnd = 0
    private var spans: [FieldSpan] = []
    private(set) var statusCode = 0
    private var headBytes = 0
    /// Interim (1xx) heads so far: each resets `headBytes`, so without a
    /// count of its own a server could send them forever.
    private var interimHeads = 0
    package static let maximumInterimHeads = 100
    /// Whether a final head has been completed (a blank line after a non-1xx status).
    package private(set) var isComplete = false
    /// Whether any line of a head has arrived since the last one completed.
    package private(set) var isInProgress = false
    /// Trailer fields (RFC 9110 §6.5) of the response whose head completed
    /// last, in order. curl hands them to the header callback after the body,
    /// as field lines where no status line starts a new head.
    package private(set) var trailerFields: [(name: String, value: String)] = []

    package init() {}

    package mutating func consume(line raw: UnsafeBufferPointer<UInt8>) -> LineResult {
        headBytes += raw.count
        guard headBytes <= ResponseHead.maximumHeadBytes else {
            return .invalid("The response header block is larger than \(ResponseHead.maximumHeadBytes / 1024) KiB.")
        }
        var end = raw.count
        while end > 0, raw[end - 1] == UInt8(ascii: "\n") || raw[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if end == 0 {
            // The blank line that ends a head. 1xx heads (100 Continue, 103
            // Early Hints) are interim: the real head follows.
            guard isInProgress else { return .pending }
            headBytes = 0
            isInProgress = false
            // libcurl takes a 101 as final and hands what follows as its body
            // (curl test 1801); the library never asks to switch protocols.
            if statusCode == 101 { return .invalid("The server switched protocols (101 Switching Protocols) without being asked to.") }
            if (100..<200).contains(statusCode) {
                interimHeads += 1
                guard interimHeads <= ResponseHead.maximumInterimHeads else {
                    return .invalid("The server sent more than \(ResponseHead.maximumInterimHeads) interim (1xx) responses.")
                }
                return .pending
            }
            if let problem = contentLengthProblem() ?? transferCodingProblem() { return .invalid(problem) }
            isComplete = true
            return .complete
        }
        let line = UnsafeBufferPointer(start: raw.baseAddress, count: end)
        if !isInProgress, isComplete, ResponseHead.statusCode(ofStatusLine: line) == nil {
            // After a final head, a line that is no status line is a trailer
            // field (a new status line is another response: Digest's second round).
            return consumeTrailer(line)
        }
        if !isInProgress {
            // The first line of a head is its status line.
            guard let code = ResponseHead.statusCode(ofStatusLine: line) else {
                return .invalid("The response does not start with an HTTP status line.")
            }
            bytes.removeAll(keepingCapacity: true)
            spans.removeAll(keepingCapacity: true)
            bytes.reserveCapacity(512)
            spans.reserveCapacity(12)
            bytes.append(contentsOf: line)
            statusLineEnd = bytes.count
            statusCode = code
            isInProgress = true
            isComplete = false
            trailerFields.removeAll()
            return .pending
        }
        if ResponseHead.isBlank(line[0]) {
            // obs-fold continuation (RFC 9112 §5.2): join with a single space.
            // The last field's value ends the buffer, so it simply grows.
            guard let last = spans.last else { return .invalid("The response head starts with a continuation line.") }
            // libcurl frames the body from each line as it arrives, not from
            // the unfolded field: a folded length or coding would frame it
            // one way there and another here (RFC 9112 §5.2, §6.3).
            for framing: StaticString in ["content-length", "transfer-encoding"] where HeadBytes.nameMatches(bytes, last, framing) {
                return .invalid("The response folds its \(framing) field over two lines (obsolete line folding), so its body cannot be delimited.")
            }
            bytes.append(UInt8(ascii: " "))
            appendValue(line, from: 0)
            spans[spans.count - 1] = FieldSpan(nameStart: last.nameStart, nameEnd: last.nameEnd,
                                               valueStart: last.valueStart, valueEnd: Int32(bytes.count))
            return .pending
        }
        // The name: token characters up to the colon.
        var colon = 0
        let validName = ResponseHead.tokenCharacters.withUnsafeBufferPointer { table -> Bool in
            while colon < line.count, line[colon] != UInt8(ascii: ":") {
                guard table[Int(line[colon])] else { return false }
                colon += 1
            }
            return true
        }
        guard validName else { return .invalid("The response head has a header field with an invalid name.") }
        guard colon < line.count, colon > 0 else {
            return .invalid("The response head has a line that is not a header field.")
        }
        let nameStart = bytes.count
        bytes.append(contentsOf: UnsafeBufferPointer(start: line.baseAddress, count: colon))
        let valueStart = bytes.count
        appendValue(line, from: colon + 1)
        spans.append(FieldSpan(nameStart: Int32(nameStart), nameEnd: Int32(valueStart), valueStart: Int32(valueStart),
                               valueEnd: Int32(bytes.count)))
        return .pending
    }

    /// One trailer line: kept as a field when it is one. Bounded like a head,
    /// and checked like one (a trailer that is not a field is a broken response).
    private mutating func consumeTrailer(_ line: UnsafeBufferPointer<UInt8>) -> LineResult {
        // `headBytes` was reset when the head completed; it counts trailers now.
        if ResponseHead.isBlank(line[0]) {
            guard let last = trailerFields.popLast() else { return .invalid("The response trailer starts with a continuation line.") }
            let more = ResponseHead.trimmedValue(line, from: 0)
            trailerFields.append((last.name, last.value + " " + more))
            return .pending
        }
        var colon = 0
        while colon < line.count, line[colon] != UInt8(ascii: ":") {
            guard ResponseHead.tokenCharacters[Int(line[colon])] else {
                return .invalid("The response trailer has a field with an invalid name.")
            }
            colon += 1
        }
        guard colon < line.count, colon > 0 else { return .invalid("The response trailer has a line that is not a field.") }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[0..<colon]), as: UTF8.self)
        trailerFields.append((name, ResponseHead.trimmedValue(line, from: colon + 1)))
        return .pending
    }

    /// The value part of `line` from `start` as a String, blanks trimmed, CR
    /// and NUL replaced by a space (as `appendValue`).
    private static func trimmedValue(_ line: UnsafeBufferPointer<UInt8>, from start: Int) -> String {
        var lower = start, upper = line.count
        while lower < upper, isBlank(line[lower]) { lower += 1 }
        while upper > lower, isBlank(line[upper - 1]) { upper -= 1 }
        return String(decoding: line[lower..<upper].map { $0 == 0x0D || $0 == 0x00 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }

    /// Appends the value part of `line` from `start`, blanks trimmed, with CR
    /// and NUL replaced by a space (RFC 9110 §5.5 allows that instead of
    /// rejecting the message), so a bare CR never reaches the app as a line break.
    private mutating func appendValue(_ line: UnsafeBufferPointer<UInt8>, from start: Int) {
        var lower = start, upper = line.count
        while lower < upper, ResponseHead.isBlank(line[lower]) { lower += 1 }
        while upper > lower, ResponseHead.isBlank(line[upper - 1]) { upper -= 1 }
        let value = UnsafeBufferPointer(start: line.baseAddress.map { $0 + lower }, count: upper - lower)
        var clean = true
        for byte in value where byte == 0x0D || byte == 0x00 {
            clean = false
            break
        }
        if clean {
            bytes.append(contentsOf: value)
        } else {
            for byte in value { bytes.append(byte == 0x0D || byte == 0x00 ? UInt8(ascii: " ") : byte) }
        }
    }

    /// The completed head as a response for `url`, possibly the own answer
    /// of `proxy` (nil: the origin's; see `ReceivedResponse.proxy`).
    ///
    /// A response outlives its transfer (an operation keeps it until it is
    /// released), and the buffers here grow with room to spare (512 bytes
    /// for a head of typically 200–300, doubling): a buffer with much spare
    /// room is kept as a copy of its exact size instead.
    package func response(for url: URL, proxy: ProxyEndpoint? = nil) -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: statusCode,
                         head: HeadBytes(bytes: ResponseHead.trimmed(bytes, spare: 128), statusLineEnd: statusLineEnd,
                                         spans: ResponseHead.trimmed(spans, spare: 8)),
                         proxy: proxy)
    }

    /// `array`, or a copy of exactly its count when it has `spare` or more
    /// unused elements (a copy costs an allocation: small slack is kept).
    private static func trimmed<Element>(_ array: [Element], spare: Int) -> [Element] {
        guard array.capacity - array.count >= spare else { return array }
        return array.withUnsafeBufferPointer { source in
            [Element](unsafeUninitializedCapacity: source.count) { target, count in
                _ = target.initialize(fromContentsOf: source)
                count = source.count
            }
        }
    }

    /// RFC 9112 §6.3: several Content-Length values (repeated fields or a
    /// list) must agree, and each must be a number; otherwise the message
    /// length is unknowable and the response must be treated as an error.
    private func contentLengthProblem() -> String? {
        var length: ArraySlice<UInt8>?
        for span in spans where HeadBytes.nameMatches(bytes, span, "content-length") {
            let value = bytes[Int(span.valueStart)..<Int(span.valueEnd)]
            // Each comma-separated item, empty ones included (an error), by
            // index: every response has one, and splitting made an array.
            var itemStart = value.startIndex
            while true {
                let itemEnd = value[itemStart...].firstIndex(of: UInt8(ascii: ",")) ?? value.endIndex
                var lower = itemStart, upper = itemEnd
                while lower < upper, ResponseHead.isBlank(value[lower]) { lower += 1 }
                while upper > lower, ResponseHead.isBlank(value[upper - 1]) { upper -= 1 }
                let number = value[lower..<upper]
                guard !number.isEmpty, number.allSatisfy(ResponseHead.isDigit) else {
                    return "The response has an invalid Content-Length (\(String(decoding: value, as: UTF8.self)))."
                }
                // Equal values may be written differently (`6` and `06`, curl test 770).
                if let length, !length.drop(while: { $0 == UInt8(ascii: "0") }).elementsEqual(number.drop(while: { $0 == UInt8(ascii: "0") })) {
                    return "The response has conflicting Content-Length values (\(String(decoding: length, as: UTF8.self)) and \(String(decoding: number, as: UTF8.self)))."
                }
                length = number
                guard itemEnd < value.endIndex else { break }
                itemStart = itemEnd + 1
            }
        }
        return nil
    }

    /// The Transfer-Encoding chain's fault, if any (see `TransferCodingChain`).
    private func transferCodingProblem() -> String? {
        let values = spans.filter { HeadBytes.nameMatches(bytes, $0, "transfer-encoding") }
            .map { bytes[Int($0.valueStart)..<Int($0.valueEnd)] }
        return values.isEmpty ? nil : TransferCodingChain.problem(in: values)
    }

    /// Header fields with repeated names joined by ", " as Foundation does; the
    /// first spelling of a name wins.
    package static func headerFields(_ fields: [(name: String, value: String)]) -> [String: String] {
        var result: [String: String] = [:]
        result.reserveCapacity(fields.count)
        // A head of ordinary size: the names seen so far are scanned with an
        // ASCII case-insensitive comparison (field names are tokens), which
        // costs less than lowercasing every name into a second dictionary.
        // A head with many fields takes the dictionary: the scan is quadratic.
        if fields.count <= smallHeadFieldCount {
            var names: [String] = []
            names.reserveCapacity(fields.count)
            for (name, value) in fields {
                if let existing = names.first(where: { sameFieldName($0, name) }) {
                    result[existing] = result[existing].map { $0 + ", " + value } ?? value
                } else {
                    names.append(name)
                    result[name] = value
                }
            }
            return result
        }
        var spelling: [String: String] = [:]
        for (name, value) in fields {
            let key = name.lowercased()
            if let existing = spelling[key] {
                result[existing] = result[existing].map { $0 + ", " + value } ?? value
            } else {
                spelling[key] = name
                result[name] = value
            }
        }
        return result
    }

    /// Up to this many fields, `headerFields` scans instead of hashing.
    package static let smallHeadFieldCount = 32

    /// Whether two field names are the same name: equal but for the case of ASCII letters.
    package static func sameFieldName(_ lhs: String, _ rhs: String) -> Bool {
        var left = lhs.utf8.makeIterator(), right = rhs.utf8.makeIterator()
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        while let a = left.next(), let b = right.next() {
            if a == b { continue }
            // Equal only as the two cases of one ASCII letter.
            guard a ^ b == 0x20, (a | 0x20) >= UInt8(ascii: "a"), (a | 0x20) <= UInt8(ascii: "z") else { return false }
        }
        return true
    }

    /// `HTTP/<digit>[.<digit>] <3 digits>[ reason]`, else nil.
    static func statusCode(ofStatusLine line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard line.count >= 10, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
              line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/") else { return nil }
        var index = 5
        guard isDigit(line[index]) else { return nil }
        index += 1
        if line[index] == UInt8(ascii: ".") {
            index += 1
            guard index < line.count, isDigit(line[index]) else { return nil }
            index += 1
        }
        guard index + 4 <= line.count, line[index] == UInt8(ascii: " "),
              isDigit(line[index + 1]), isDigit(line[index + 2]), isDigit(line[index + 3]) else { return nil }
        guard index + 4 == line.count || line[index + 4] == UInt8(ascii: " ") else { return nil }
        return Int(line[index + 1] - 48) * 100 + Int(line[index + 2] - 48) * 10 + Int(line[index + 3] - 48)
    }

    /// RFC 9110 §5.6.2 token characters (a field name), by byte value.
    private static let tokenCharacters: [Bool] = (0..<256).map { isTokenCharacter(UInt8($0)) }

    /// Whether `byte` may stand in a field name (an RFC 9110 token character).
    package static func isFieldNameCharacter(_ byte: UInt8) -> Bool { tokenCharacters[Int(byte)] }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    /// RFC 9110 §5.6.2 token characters (a field name).
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// Where one field's name and value are in a head's bytes.
package struct FieldSpan: Sendable {
    let nameStart: Int32
    let nameEnd: Int32
    let valueStart: Int32
    let valueEnd: Int32
}

/// A completed head's bytes and field positions (immutable).
package struct HeadBytes: Sendable {
    let bytes: [UInt8]
    let statusLineEnd: Int
    let spans: [FieldSpan]

    /// Whether the span's name is `wanted` (which must be lowercase ASCII),
    /// compared without case and without allocating.
    static func nameMatches(_ bytes: [UInt8], _ span: FieldSpan, _ wanted: StaticString) -> Bool {
        let count = wanted.utf8CodeUnitCount
        guard Int(span.nameEnd - span.nameStart) == count else { return false }
        let start = Int(span.nameStart)
        for offset in 0..<count {
            var byte = bytes[start + offset]
            if byte >= 65 && byte <= 90 { byte += 32 }
            if byte != wanted.utf8Start[offset] { return false }
        }
        return true
    }

    /// Whether the span's name is `wanted`, compared without case (ASCII).
    func nameMatches(_ span: FieldSpan, _ wanted: UnsafeBufferPointer<UInt8>) -> Bool {
        guard Int(span.nameEnd - span.nameStart) == wanted.count else { return false }
        let start = Int(span.nameStart)
        for offset in 0..<wanted.count {
            var byte = bytes[start + offset], other = wanted[offset]
            if byte >= 65 && byte <= 90 { byte += 32 }
            if other >= 65 && other <= 90 { other += 32 }
            if byte != other { return false }
        }
        return true
    }

    /// The spans whose name is `wanted` (compared without case), in order.
    func spans(named wanted: String) -> [FieldSpan] {
        var wanted = wanted
        return wanted.withUTF8 { name in spans.filter { nameMatches($0, name) } }
    }

    /// The first span whose name is `wanted` (compared without case).
    func firstSpan(named wanted: String) -> FieldSpan? {
        var wanted = wanted
        return wanted.withUTF8 { name in spans.first { nameMatches($0, name) } }
    }

    func name(_ span: FieldSpan) -> String {
        String(decoding: bytes[Int(span.nameStart)..<Int(span.nameEnd)], as: UTF8.self)
    }

    func value(_ span: FieldSpan) -> String {
        String(decoding: bytes[Int(span.valueStart)..<Int(span.valueEnd)], as: UTF8.self)
    }

    var statusLine: String { String(decoding: bytes[0..<statusLineEnd], as: UTF8.self) }

    /// The span's value as `Int64(String)` reads it. Plain digits (every
    /// received Content-Length: the head refuses others) are read from the
    /// bytes without making a String.
    func integer(_ span: FieldSpan) -> Int64? {
        let digits = bytes[Int(span.valueStart)..<Int(span.valueEnd)]
        guard (1...18).contains(digits.count), digits.allSatisfy(ResponseHead.isDigit) else { return Int64(value(span)) }
        return digits.reduce(0) { $0 * 10 + Int64($1 - UInt8(ascii: "0")) }
    }

    /// The protocol version as the status line spells it ("HTTP/1.1",
    /// "HTTP/2" …): its first word. The usual spellings are literals, so
    /// building an `HTTPURLResponse` makes no String for them.
    package var httpVersion: String {
        let end = bytes[0..<statusLineEnd].firstIndex(of: UInt8(ascii: " ")) ?? statusLineEnd
        let word = bytes[0..<end]
        if word.elementsEqual("HTTP/1.1".utf8) { return "HTTP/1.1" }
        if word.elementsEqual("HTTP/2".utf8) { return "HTTP/2" }
        if word.elementsEqual("HTTP/1.0".utf8) { return "HTTP/1.0" }
        return String(decoding: word, as: UTF8.self)
    }

    /// A head made from Strings (tests, and responses built by hand).
    init(statusLine: String, fields: [(name: String, value: String)]) {
        var bytes = Array(statusLine.utf8)
        let statusLineEnd = bytes.count
        var spans: [FieldSpan] = []
        for (name, value) in fields {
            let nameStart = bytes.count
            bytes.append(contentsOf: name.utf8)
            let valueStart = bytes.count
            bytes.append(contentsOf: value.utf8)
            spans.append(FieldSpan(nameStart: Int32(nameStart), nameEnd: Int32(valueStart), valueStart: Int32(valueStart), valueEnd: Int32(bytes.count)))
        }
        self.init(bytes: bytes, statusLineEnd: statusLineEnd, spans: spans)
    }

    init(bytes: [UInt8], statusLineEnd: Int, spans: [FieldSpan]) {
        self.bytes = bytes
        self.statusLineEnd = statusLineEnd
        self.spans = spans
    }
}
