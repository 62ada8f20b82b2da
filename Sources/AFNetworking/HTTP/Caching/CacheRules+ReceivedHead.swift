@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stored response's head as the server sent it, kept beside the response
/// for this package's own tools (`afn -i/-v` print a cached answer as curl
/// would have printed it when it arrived). The stored `HTTPURLResponse` cannot
/// say it: a dictionary keeps neither the order of the fields nor their case
/// (`ETag` came back as `Etag`), and the status line's reason phrase is gone.
/// Only shown, never used to answer: the response the cache serves is still
/// the stored `HTTPURLResponse`, without its connection fields (§3.1).
extension CacheRules {
    /// `userInfo` key of a cached response: the head as one string, its lines
    /// (the status line, then `Name: value`) joined by CRLF. One string, not an
    /// array: swift-corelibs-foundation's disk cache archives `userInfo` and
    /// traps (`NSKeyedUnarchiver`: "Value was of unexpected class NSArray")
    /// when it reads back an array. A line holds no CR or LF (the head parser
    /// turns a bare CR into a space and refuses a NUL), so CRLF separates them.
    static let receivedHeadKey = "AFNetworkingReceivedHead"

    /// `userInfo` key of a cached response: when it was received, seconds
    /// since 1970 as a String (a String for the same archiving reason).
    static let receivedAtKey = "AFNetworkingReceivedAt"

    /// `cached` with its receive time in `userInfo`.
    static func stamped(_ cached: CachedURLResponse, receivedAt: Date) -> CachedURLResponse {
        var userInfo = cached.userInfo ?? [:]
        userInfo[receivedAtKey] = String(receivedAt.timeIntervalSince1970)
        return CachedURLResponse(response: cached.response, data: cached.data, userInfo: userInfo, storagePolicy: cached.storagePolicy)
    }

    /// The receive time `stamped` kept; nil when there is none (or it is not a time).
    static func receivedAt(of cached: CachedURLResponse) -> Date? {
        guard let text = cached.userInfo?[receivedAtKey] as? String, let seconds = Double(text), seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Adds `head` to `userInfo` when it is the head of the stored `response`
    /// (not for a 206 stored as its 200: that head describes a part).
    static func keepReceivedHead(_ head: ReceivedResponse, of response: HTTPURLResponse, in userInfo: inout [AnyHashable: Any]) {
        guard head.statusCode == response.statusCode else { return }
        // As received, but for the proxy's authentication fields: nothing of them is stored (§3.1).
        let fields = head.fields.filter { !proxyFields.contains($0.name.lowercased()) }
        userInfo[receivedHeadKey] = joined([head.statusLine] + fields.flatMap { [$0.name, $0.value] })
    }

    /// `[status line, name, value, …]` as the stored string.
    static func joined(_ flat: [String]) -> String {
        var lines = [flat.first ?? ""]
        for field in pairs(flat.dropFirst()) { lines.append("\(field.name): \(field.value)") }
        return lines.joined(separator: "\r\n")
    }

    /// The stored string as `[status line, name, value, …]`; nil when it is not one.
    static func flattened(_ stored: Any?) -> [String]? {
        guard let text = stored as? String else { return nil }
        let lines = text.components(separatedBy: "\r\n")
        guard let statusLine = lines.first, !statusLine.isEmpty else { return nil }
        var flat = [statusLine]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let value = line[line.index(after: colon)...]
            flat.append(String(line[..<colon]))
            flat.append(String(value.hasPrefix(" ") ? value.dropFirst() : value))
        }
        return flat
    }

    /// The head of `cached` as it was received (a 304 that confirmed it
    /// having updated its fields), or nil: an entry stored before heads were
    /// kept, or an answer the cache made from it (a range cut as a 206).
    static func receivedHead(of cached: CachedURLResponse) -> ReceivedResponse? {
        guard let response = cached.response as? HTTPURLResponse, let url = response.url,
              let flat = flattened(cached.userInfo?[receivedHeadKey]), let statusLine = flat.first, flat.count % 2 == 1,
              statusCode(ofStatusLine: statusLine) == response.statusCode else { return nil }
        return ReceivedResponse(url: url, statusCode: response.statusCode, statusLine: statusLine, fields: pairs(flat.dropFirst()))
    }

    /// The kept head of `cached` updated as `merging` updates the response
    /// (RFC 9111 §3.2): each field the 304 carries, but for `Content-Length` and
    /// its connection fields, takes the place of the stored field of that name
    /// (where that one stood; at the end when there was none). Nil when
    /// `cached` kept no head.
    static func mergingReceivedHead(of cached: CachedURLResponse, with confirmation: ReceivedResponse) -> [String]? {
        guard let flat = flattened(cached.userInfo?[receivedHeadKey]), let statusLine = flat.first, flat.count % 2 == 1 else { return nil }
        let excluded = connectionFields(listedIn: confirmation.value(forField: "connection")).union(["content-length"])
        let updates = confirmation.fields.filter { !excluded.contains($0.name.lowercased()) }
        let updated = Set(updates.map { $0.name.lowercased() })
        var placed: Set<String> = []
        var merged: [(name: String, value: String)] = []
        for field in pairs(flat.dropFirst()) {
            let name = field.name.lowercased()
            guard updated.contains(name) else {
                merged.append(field)
                continue
            }
            // The first stored field of the name gives the place of the 304's fields; later ones go.
            if placed.insert(name).inserted { merged += updates.filter { $0.name.lowercased() == name } }
        }
        merged += updates.filter { !placed.contains($0.name.lowercased()) }
        return [statusLine] + merged.flatMap { [$0.name, $0.value] }
    }

    /// `[name, value, name, value, …]` as fields.
    private static func pairs(_ flat: ArraySlice<String>) -> [(name: String, value: String)] {
        stride(from: flat.startIndex, to: flat.endIndex - 1, by: 2).map { (name: flat[$0], value: flat[$0 + 1]) }
    }

    /// The status code of "HTTP/1.1 200 OK" or "HTTP/2 200".
    private static func statusCode(ofStatusLine line: String) -> Int? {
        let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        return parts.count >= 2 ? Int(parts[1]) : nil
    }
}
