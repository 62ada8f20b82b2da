import Foundation

/// Collects the header lines curl hands over, one response head at a time,
/// and checks what curl lets through but RFC 9112 / RFC 9110 forbid.
///
/// Works on bytes: this runs on the network thread for every header line, and
/// Foundation's string trimming would cost more than the rest of the request.
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

    private(set) var statusLine = ""
    private(set) var statusCode = 0
    private var fields: [(name: String, value: String)] = []
    private var headBytes = 0
    /// Whether a final head has been completed (a blank line after a non-1xx status).
    package private(set) var isComplete = false
    /// Whether any line of a head has arrived since the last one completed.
    package private(set) var isInProgress = false

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
            if (100..<200).contains(statusCode) { return .pending }
            if let problem = contentLengthProblem() { return .invalid(problem) }
            isComplete = true
            return .complete
        }
        let line = UnsafeBufferPointer(rebasing: raw[0..<end])
        if !isInProgress {
            // The first line of a head is its status line.
            guard let code = ResponseHead.statusCode(ofStatusLine: line) else {
                return .invalid("The response does not start with an HTTP status line.")
            }
            statusLine = String(decoding: line, as: UTF8.self)
            statusCode = code
            fields.removeAll(keepingCapacity: true)
            isInProgress = true
            isComplete = false
            return .pending
        }
        if ResponseHead.isBlank(line[0]) {
            // obs-fold continuation (RFC 9112 §5.2): join with a single space.
            guard !fields.isEmpty else { return .invalid("The response head starts with a continuation line.") }
            fields[fields.count - 1].value += " " + ResponseHead.fieldValue(line[...])
            return .pending
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            return .invalid("The response head has a line that is not a header field.")
        }
        let nameBytes = line[..<colon]
        guard nameBytes.allSatisfy(ResponseHead.isTokenCharacter) else {
            return .invalid("The response head has a header field with an invalid name.")
        }
        fields.append((String(decoding: UnsafeBufferPointer(rebasing: nameBytes), as: UTF8.self),
                       ResponseHead.fieldValue(line[(colon + 1)...])))
        return .pending
    }

    /// The raw fields of the last head, in order; cheap to hand to another thread.
    package var rawFields: [(name: String, value: String)] { fields }

    /// RFC 9112 §6.3: several Content-Length values (repeated fields or a
    /// list) must agree, and each must be a number; otherwise the message
    /// length is unknowable and the response must be treated as an error.
    private func contentLengthProblem() -> String? {
        var length: Substring?
        for (name, value) in fields where name.utf8.count == 14 && name.lowercased() == "content-length" {
            for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                var number = item[...]
                while let first = number.utf8.first, ResponseHead.isBlank(first) { number = number.dropFirst() }
                while let last = number.utf8.last, ResponseHead.isBlank(last) { number = number.dropLast() }
                guard !number.isEmpty, number.utf8.allSatisfy(ResponseHead.isDigit) else {
                    return "The response has an invalid Content-Length (\(value))."
                }
                if let length, length != number {
                    return "The response has conflicting Content-Length values (\(length) and \(number))."
                }
                length = number
            }
        }
        return nil
    }

    /// Header fields with repeated names joined by ", " as Foundation does; the
    /// first spelling of a name wins.
    package static func headerFields(_ fields: [(name: String, value: String)]) -> [String: String] {
        var result: [String: String] = [:]
        result.reserveCapacity(fields.count)
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

    /// "HTTP/1.1", "HTTP/2" … as written on a status line.
    package static func httpVersion(ofStatusLine line: String) -> String? {
        line.split(separator: " ", maxSplits: 1).first.map(String.init)
    }

    /// `HTTP/<digit>[.<digit>] <3 digits>[ reason]`, else nil.
    static func statusCode(ofStatusLine line: UnsafeBufferPointer<UInt8>) -> Int? {
        let prefix = httpPrefix
        guard line.count >= prefix.count + 5, line.starts(with: prefix) else { return nil }
        var index = prefix.count
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

    private static let httpPrefix = Array("HTTP/".utf8)

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    private static func isBlank(_ byte: UInt8) -> Bool {
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

    /// The value trimmed of surrounding blanks, with CR and NUL replaced by a
    /// space (RFC 9110 §5.5 allows that instead of rejecting the message), so
    /// a bare CR can never reach the app as a line break.
    private static func fieldValue(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        let value = UnsafeBufferPointer(rebasing: bytes.base[start..<end])
        if !value.contains(where: { $0 == 0x0D || $0 == 0x00 }) {
            return String(decoding: value, as: UTF8.self)
        }
        return String(decoding: value.map { $0 == 0x0D || $0 == 0x00 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
    }
}
