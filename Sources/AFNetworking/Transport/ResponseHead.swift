import Foundation

/// Collects the header lines curl hands over, one response at a time. A new
/// status line (an interim 1xx, or a redirect curl is following) starts over,
/// so what remains at the end belongs to the final response.
///
/// Works on bytes: this runs on the network thread for every header line, and
/// Foundation's string trimming would cost more than the rest of the request.
struct ResponseHead {
    private(set) var statusLine = ""
    private var fields: [(name: String, value: String)] = []

    mutating func consume(line raw: UnsafeBufferPointer<UInt8>) {
        var end = raw.count
        while end > 0, raw[end - 1] == UInt8(ascii: "\n") || raw[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { return }   // the blank line that ends a head
        let line = UnsafeBufferPointer(rebasing: raw[0..<end])
        if line.starts(with: ResponseHead.httpPrefix) {
            statusLine = String(decoding: line, as: UTF8.self)
            fields.removeAll(keepingCapacity: true)
        } else if ResponseHead.isBlank(line[0]) {
            // obs-fold continuation (RFC 7230 §3.2.4): join with a single space.
            guard !fields.isEmpty else { return }
            fields[fields.count - 1].value += " " + ResponseHead.trimmed(line[...])
        } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            let name = ResponseHead.trimmed(line[..<colon])
            if !name.isEmpty { fields.append((name, ResponseHead.trimmed(line[(colon + 1)...]))) }
        }
    }

    /// The raw fields, in order; cheap to hand over to another thread.
    var rawFields: [(name: String, value: String)] { fields }

    /// Header fields with repeated names joined by ", " as Foundation does; the
    /// first spelling of a name wins.
    static func headerFields(_ fields: [(name: String, value: String)]) -> [String: String] {
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
    static func httpVersion(ofStatusLine line: String) -> String? {
        line.split(separator: " ", maxSplits: 1).first.map(String.init)
    }

    private static let httpPrefix = Array("HTTP/".utf8)

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, isBlank(bytes[start]) { start += 1 }
        while end > start, isBlank(bytes[end - 1]) { end -= 1 }
        return String(decoding: UnsafeBufferPointer(rebasing: bytes.base[start..<end]), as: UTF8.self)
    }
}
