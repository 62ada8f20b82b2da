@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a stored response is, beyond its URL: the request fields it varies
/// on (RFC 9111 §4.1), the fields that are never stored (§3.1), what a 304
/// changes (§3.2, §4.3.4), and the `Age` a hit carries (§5.1).
extension CacheRules {
    /// `userInfo` key of a cached response: the normalised values, in the
    /// order of its `Vary` field's names, of the request that fetched it.
    static let varyValuesKey = "AFNetworkingVaryValues"
    /// Stands for "the request had no such field" among the vary values.
    static let absentField = "\u{0}"

    /// The field names a response varies on, lowercased (["*"]: on
    /// everything, so it never matches another request).
    static func varyNames(of response: HTTPURLResponse) -> [String] {
        let value = response.value(forHTTPHeaderField: "Vary") ?? ""
        return value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
    }

    /// A request field's value as compared for `Vary`: list members trimmed
    /// and joined with ", " (the same semantics, RFC 9111 §4.1), or the
    /// absent marker.
    static func normalizedField(_ name: String, in request: URLRequest) -> String {
        guard let value = request.value(forHTTPHeaderField: name) else { return absentField }
        return value.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: ", ")
    }

    /// The values `request` (as it is sent: with its cookies) has for the names.
    static func varyValues(for names: [String], of request: URLRequest) -> [String] {
        names.map { normalizedField($0, in: request) }
    }

    /// Whether `cached` may answer `sent` (the request as it would go out):
    /// every field named in its `Vary` — `names`, as `varyNames(of:)` reads
    /// them (a cache index entry keeps them) — has the value it had when
    /// stored; `Vary: *` never matches.
    static func variantMatches(_ cached: CachedURLResponse, varyingOn names: [String], request sent: () -> URLRequest) -> Bool {
        guard cached.response is HTTPURLResponse else { return false }
        if names.isEmpty { return true }
        if names.contains("*") { return false }
        guard let stored = cached.userInfo?[varyValuesKey] as? [String] else { return false }
        return stored == varyValues(for: names, of: sent())
    }

    /// A proxy's authentication fields (RFC 9111 §3.1): a cache whose key
    /// does not name the proxy must not store them — this one's does not, and
    /// they belong to whichever proxy the request went through.
    static let proxyFields: Set<String> = ["proxy-authenticate", "proxy-authentication-info", "proxy-authorization"]

    /// Fields that describe one connection, not the resource (RFC 9111 §3.1):
    /// never stored, never replayed from the cache.
    static func connectionFields(of response: HTTPURLResponse) -> Set<String> {
        connectionFields(listedIn: response.value(forHTTPHeaderField: "Connection"))
    }

    /// The hop-by-hop fields, the proxy's authentication fields and those a
    /// `Connection` field value names, lowercased.
    static func connectionFields(listedIn connection: String?) -> Set<String> {
        var names: Set<String> = ["connection", "proxy-connection", "keep-alive", "te", "transfer-encoding", "upgrade"]
        names.formUnion(proxyFields)
        for token in (connection ?? "").split(separator: ",") {
            names.insert(token.trimmingCharacters(in: .whitespaces).lowercased())
        }
        return names
    }

    /// `response` as it is stored: without its connection fields; a 206
    /// holding the whole representation becomes its 200 (RFC 9111 §3.4),
    /// so a stored answer is never partial.
    static func storable(_ response: HTTPURLResponse) -> HTTPURLResponse {
        var dropped = connectionFields(of: response)
        let status = response.statusCode == 206 ? 200 : response.statusCode
        if response.statusCode == 206 { dropped.insert("content-range") }
        let kept = headerFields(of: response).filter { !dropped.contains($0.key.lowercased()) }
        return rebuilt(response, fields: kept, statusCode: status)
    }

    /// The stored response updated by a 304 (RFC 9111 §3.2): each field the
    /// 304 carries replaces the stored one, except `Content-Length` and the
    /// 304's connection fields. The body stays.
    /// Builds from the 304's raw fields (no `HTTPURLResponse` for it): this
    /// runs where the machine sees the 304.
    static func merging(_ cached: CachedURLResponse, with confirmation: ReceivedResponse) -> CachedURLResponse {
        guard let stored = cached.response as? HTTPURLResponse else { return cached }
        var update: [String: String] = [:]
        for (name, value) in confirmation.fields {
            if let existing = update.keys.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) {
                update[existing] = update[existing].map { "\($0), \(value)" }
            } else {
                update[name] = value
            }
        }
        let excluded = connectionFields(listedIn: confirmation.value(forField: "connection")).union(["content-length"])
        var fields = headerFields(of: stored)
        for (name, value) in update where !excluded.contains(name.lowercased()) {
            if let existing = fields.keys.first(where: { $0.caseInsensitiveCompare(name) == .orderedSame }) { fields[existing] = nil }
            fields[name] = value
        }
        var userInfo = cached.userInfo
        if let head = mergingReceivedHead(of: cached, with: confirmation) { userInfo?[receivedHeadKey] = joined(head) }
        return CachedURLResponse(response: rebuilt(stored, fields: fields), data: cached.data, userInfo: userInfo,
                                 storagePolicy: cached.storagePolicy)
    }

    /// A hit as delivered: the stored response with `Age` set to its current
    /// age in whole seconds (RFC 9111 §5.1: a cache generates it), without
    /// the fields a qualified `no-cache="…"` names (§5.2.2.4: only a
    /// revalidated answer may carry them).
    static func withAge(_ cached: CachedURLResponse, seconds: TimeInterval) -> CachedURLResponse {
        guard let stored = cached.response as? HTTPURLResponse, seconds.isFinite else { return cached }
        // Every hit comes through here: field names are compared as bytes
        // (Foundation's case-insensitive compare costs microseconds per field).
        var fields = headerFields(of: stored)
        var withheld: Set<String> = []
        for (name, value) in fields {
            if Self.isField(name, "age") { fields[name] = nil }
            if Self.isField(name, "cache-control") { withheld = fieldsWithheldFromHits(value) }
        }
        if !withheld.isEmpty { fields = fields.filter { !withheld.contains($0.key.lowercased()) } }
        fields["Age"] = String(ageSeconds(seconds))
        return CachedURLResponse(response: rebuilt(stored, fields: fields), data: cached.data, userInfo: cached.userInfo,
                                 storagePolicy: cached.storagePolicy)
    }

    /// An age as `Age` carries it: whole seconds, and 2147483648 for anything
    /// larger (RFC 9111 §1.2.2) — a hostile `Age` or `max-age` can make a
    /// fresh entry's age exceed what an `Int` holds.
    static func ageSeconds(_ seconds: TimeInterval) -> Int {
        let limit = 2_147_483_648.0
        guard seconds.isFinite else { return Int(limit) }
        return Int(min(max(0, seconds.rounded(.down)), limit))
    }

    /// A directive's delta-seconds argument (RFC 9111 §1.2.2): digits only —
    /// `inf`, `+60`, `1e3`, `60.5` and `-1` are not numbers of seconds (Swift's
    /// `Double(String)` would read each). A larger number than an `Int` holds
    /// stays as large (the RFC allows "the greatest positive integer it can
    /// conveniently represent"): a `max-age` of 10^27 outlives any `Age`;
    /// only the `Age` the cache sends is cut to 2147483648 (`ageSeconds`).
    static func deltaSeconds<Text: StringProtocol>(_ text: Text) -> TimeInterval? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return TimeInterval(String(text)) ?? .infinity
    }

    /// Whether `name` is `lowercased` (ASCII letters in any case).
    static func isField(_ name: String, _ lowercased: StaticString) -> Bool {
        name.utf8.count == lowercased.utf8CodeUnitCount && startsIgnoringASCIICase(name.utf8[...], with: lowercased)
    }

    /// Whether `bytes` begin with `lowercased`, ASCII letters in any case.
    private static func startsIgnoringASCIICase(_ bytes: Substring.UTF8View, with lowercased: StaticString) -> Bool {
        let expected = UnsafeRawBufferPointer(start: lowercased.utf8Start, count: lowercased.utf8CodeUnitCount)
        guard bytes.count >= expected.count else { return false }
        return zip(bytes, expected).allSatisfy { byte, lower in
            byte == lower || ((0x41...0x5A).contains(byte) && byte | 0x20 == lower)
        }
    }

    /// The field names (lowercased) of every `no-cache="a, b"` in `cacheControl`.
    static func fieldsWithheldFromHits(_ cacheControl: String?) -> Set<String> {
        // Most responses have no qualified no-cache: a byte scan skips the parse on the hit path.
        guard let cacheControl, containsQualifiedNoCache(cacheControl) else { return [] }
        var names = Set<String>()
        for directive in directives(in: cacheControl) where directive.hasPrefix("no-cache=") {
            for name in directive.dropFirst("no-cache=".count).split(separator: ",") {
                let trimmed = name.trimmingCharacters(in: .whitespaces)
                if !trimmed.isEmpty { names.insert(trimmed) }
            }
        }
        return names
    }

    /// Whether `value` holds `no-cache=` in any case (a cheap pre-check).
    private static func containsQualifiedNoCache(_ value: String) -> Bool {
        let utf8 = value[...].utf8
        return utf8.indices.contains { startsIgnoringASCIICase(utf8[$0...], with: "no-cache=") }
    }

    /// RFC 9111 §4.4 note: a 504 for `only-if-cached` with nothing usable stored.
    static func gatewayTimeout(for request: URLRequest) -> CachedURLResponse? {
        guard let url = request.url,
              let response = HTTPURLResponse(url: url, statusCode: 504, httpVersion: "HTTP/1.1",
                                             headerFields: ["Content-Length": "0", "Cache-Control": "no-store"]) else { return nil }
        return CachedURLResponse(response: response, data: Data(), userInfo: nil, storagePolicy: .notAllowed)
    }

    static func headerFields(of response: HTTPURLResponse) -> [String: String] {
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return fields
    }

    /// `response` with other header fields (and status).
    static func rebuilt(_ response: HTTPURLResponse, fields: [String: String], statusCode: Int? = nil) -> HTTPURLResponse {
        guard let url = response.url,
              let copy = HTTPURLResponse(url: url, statusCode: statusCode ?? response.statusCode, httpVersion: "HTTP/1.1",
                                         headerFields: fields)
        else { return response }
        return copy
    }
}
