import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Collects the header lines curl hands over, one response at a time. A new
/// status line (an interim 1xx, or a redirect curl is following) starts over,
/// so what remains at the end belongs to the final response.
struct ResponseHead {
    private(set) var statusLine: Substring = ""
    private var fields: [(name: String, value: String)] = []

    mutating func consume(line raw: UnsafeBufferPointer<UInt8>) {
        var end = raw.count
        while end > 0, raw[end - 1] == UInt8(ascii: "\n") || raw[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { return }   // the blank line that ends a head
        let line = String(decoding: UnsafeBufferPointer(rebasing: raw[0..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            statusLine = Substring(line)
            fields.removeAll(keepingCapacity: true)
        } else if let first = line.first, first == " " || first == "\t", !fields.isEmpty {
            // obs-fold continuation (RFC 7230 §3.2.4): join with a single space.
            fields[fields.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            if !name.isEmpty { fields.append((name, value)) }
        }
    }

    /// Header fields with repeated names joined by ", " as Foundation does; the
    /// first spelling of a name wins.
    var headerFields: [String: String] {
        var result: [String: String] = [:]
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

    /// "HTTP/1.1", "HTTP/2" … as written on the status line.
    var httpVersion: String? {
        statusLine.split(separator: " ", maxSplits: 1).first.map(String.init)
    }
}
