import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What validation and text decoding read from a response: the status, the
/// MIME type and charset of its Content-Type, its URL. Made from an
/// `HTTPURLResponse`, or straight from the head the transport received, so
/// that a response that passes validation never needs an `HTTPURLResponse`
/// (swift-corelibs-foundation's initializer costs more than the rest of a
/// small request: it capitalizes every field name and re-parses Content-Type).
struct ResponseSummary {
    let statusCode: Int
    let mimeType: String?
    let textEncodingName: String?
    let url: URL?
    /// The full response, for error `userInfo` (built on demand for a head).
    let response: () -> URLResponse?

    init(_ response: HTTPURLResponse) {
        statusCode = response.statusCode
        // swift-corelibs-foundation keeps the blanks before ";" in the MIME
        // type ("application/json " for "application/json ; charset=…").
        mimeType = response.mimeType?.trimmingCharacters(in: .whitespaces)
        textEncodingName = response.textEncodingName
        url = response.url
        self.response = { response }
    }

    init(_ head: ReceivedResponse) {
        statusCode = head.statusCode
        url = head.url
        (mimeType, textEncodingName) = ResponseSummary.contentType(head.value(forField: "content-type"))
        response = { head.httpURLResponse }
    }

    /// `text/html; charset="UTF-8"` → ("text/html", "utf-8"), both lowercased,
    /// as Foundation reports them. Byte by byte: Foundation's trimming went
    /// through NSString and cost more than the rest of the validation.
    static func contentType(_ value: String?) -> (String?, String?) {
        guard var value, !value.isEmpty else { return (nil, nil) }
        return value.withUTF8 { bytes -> (String?, String?) in
            let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
            let type = lowercasedTrimmed(bytes, 0..<semicolon)
            var charset: String?
            var start = semicolon + 1
            while start < bytes.count {
                let end = bytes[start...].firstIndex(of: UInt8(ascii: ";")) ?? bytes.count
                if let equals = bytes[start..<end].firstIndex(of: UInt8(ascii: "=")),
                   lowercasedTrimmed(bytes, start..<equals) == "charset" {
                    var name = trimmedRange(bytes, (equals + 1)..<end)
                    if name.count >= 2, bytes[name.lowerBound] == UInt8(ascii: "\""), bytes[name.upperBound - 1] == UInt8(ascii: "\"") {
                        name = (name.lowerBound + 1)..<(name.upperBound - 1)
                    }
                    charset = lowercasedTrimmed(bytes, name)
                    break
                }
                start = end + 1
            }
            return (type.isEmpty ? nil : type, charset)
        }
    }

    private static func trimmedRange(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Range<Int> {
        var lower = range.lowerBound, upper = range.upperBound
        while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
        while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
        return lower..<upper
    }

    /// ASCII-lowercased, blanks trimmed.
    private static func lowercasedTrimmed(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[trimmedRange(bytes, range)])
        guard slice.contains(where: { $0 >= 65 && $0 <= 90 }) else { return String(decoding: slice, as: UTF8.self) }
        return String(decoding: slice.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
