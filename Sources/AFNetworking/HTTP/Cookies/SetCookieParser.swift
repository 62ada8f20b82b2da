import Foundation

/// One `Set-Cookie` field as RFC 6265 §5.2 (with 6265bis's settled changes)
/// reads it: attributes are kept as received, the policy (`CookieJar`)
/// decides what they mean for the request that got them.
struct ParsedSetCookie: Equatable {
    enum SameSite: String, Equatable {
        case strict = "Strict", lax = "Lax", none = "None"
        /// No attribute, or a value that is none of the three (6265bis "Default").
        case unspecified = "Default"
    }

    var name: String
    var value: String
    /// The last `Expires` that parsed as a cookie-date.
    var expires: Date?
    /// The last valid `Max-Age`, in seconds (may be zero or negative).
    var maxAge: Int64?
    /// The last non-empty `Domain`, lowercased, without a leading dot.
    var domain: String?
    /// The last `Path` that starts with "/" (nil: the default-path applies).
    var path: String?
    var secure = false
    var httpOnly = false
    var sameSite = SameSite.unspecified
}

enum SetCookieParser {
    /// Browsers' limit on a cookie's name and value together (6265bis §5.7).
    static let maximumNameValueBytes = 4096
    /// Browsers' limit on one attribute's value (6265bis §5.7).
    static let maximumAttributeValueBytes = 1024

    /// nil: the field is ignored as a whole (control characters, no "=" or
    /// an empty name, a name and value over 4096 bytes). Read as octets, as
    /// the RFC does: a combining mark after "=" or ";" cannot hide it.
    static func parse(_ field: String) -> ParsedSetCookie? {
        let bytes = Array(field.utf8)
        // 6265bis: a CTL other than HTAB anywhere ignores the whole field.
        if bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { return nil }
        // One field is one cookie: commas are ordinary characters here, so
        // `a="b, c=d"` is one value and `b,az=qux` one name.
        let pieces = bytes.split(separator: semicolon, maxSplits: 1, omittingEmptySubsequences: false)
        let pair = pieces[0]
        // RFC 6265 §5.2 steps 2 and 5: a pair without "=" or with an empty
        // name is no cookie. (6265bis would keep it as a nameless cookie; the
        // RFC, curl and the independent parser suite ignore it, and a server
        // cannot later replace or delete a cookie it cannot name.)
        guard let equals = pair.firstIndex(of: equalsSign) else { return nil }
        let name = trimmed(pair[..<equals])
        let value = trimmed(pair[(equals + 1)...])
        guard !name.isEmpty, name.count + value.count <= maximumNameValueBytes else { return nil }
        var cookie = ParsedSetCookie(name: text(name), value: text(value))
        if pieces.count > 1 {
            for attribute in pieces[1].split(separator: semicolon, omittingEmptySubsequences: true) {
                apply(attribute, to: &cookie)
            }
        }
        return cookie
    }

    private static let semicolon = UInt8(ascii: ";")
    private static let equalsSign = UInt8(ascii: "=")

    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// §5.2 steps for one cookie-av: names compare without case, and every
    /// attribute may carry a value (`Secure=1` is still Secure).
    private static func apply(_ attribute: ArraySlice<UInt8>, to cookie: inout ParsedSetCookie) {
        let name: ArraySlice<UInt8>
        let value: ArraySlice<UInt8>
        if let equals = attribute.firstIndex(of: equalsSign) {
            name = trimmed(attribute[..<equals])
            value = trimmed(attribute[(equals + 1)...])
        } else {
            name = trimmed(attribute)
            value = []
        }
        guard value.count <= maximumAttributeValueBytes else { return }
        let valueText = text(value)
        switch text(name).lowercased() {
        case "expires":
            if let date = CookieDate.parse(valueText) { cookie.expires = date }
        case "max-age":
            if let seconds = maxAge(value) { cookie.maxAge = seconds }
        case "domain":
            // Empty: the attribute is ignored (the cookie stays host-only).
            guard !value.isEmpty else { return }
            cookie.domain = text(value.first == UInt8(ascii: ".") ? value.dropFirst() : value).lowercased()
        case "path":
            cookie.path = value.first == UInt8(ascii: "/") ? valueText : nil
        case "secure":
            cookie.secure = true
        case "httponly":
            cookie.httpOnly = true
        case "samesite":
            switch valueText.lowercased() {
            case "strict": cookie.sameSite = .strict
            case "lax": cookie.sameSite = .lax
            case "none": cookie.sameSite = .none
            default: cookie.sameSite = .unspecified
            }
        default:
            break
        }
    }

    /// §5.2.2: an optional "-" then digits only; anything else ignores the
    /// attribute. Huge values saturate (they are capped later anyway).
    private static func maxAge(_ value: ArraySlice<UInt8>) -> Int64? {
        let negative = value.first == UInt8(ascii: "-")
        let digits = negative ? value.dropFirst() : value
        guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        var magnitude: Int64 = 0
        for byte in digits {
            let (times, overflowTimes) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int64(byte - 0x30))
            if overflowTimes || overflowSum { magnitude = .max; break }
            magnitude = sum
        }
        return negative ? -magnitude : magnitude
    }

    /// Removes leading and trailing SP and HTAB (the RFC's WSP), nothing else.
    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let isWSP: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.firstIndex(where: { !isWSP($0) }), let last = bytes.lastIndex(where: { !isWSP($0) }) else { return [] }
        return bytes[first...last]
    }
}
