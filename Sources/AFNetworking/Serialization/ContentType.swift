import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The package's one reader of `Content-Type` (RFC 9110 §8.3.1): the media type
/// and its `charset` parameter, both lowercased. Parameter names are matched
/// case-insensitively (`Charset=`, `CHARSET=`), values may be quoted strings
/// (with `\` escapes and `;` inside), and blanks around `;` and `=` are
/// ignored. Every serializer and `responseString` read a response's charset
/// here: swift-corelibs-foundation's `textEncodingName` matches `charset`
/// case-sensitively and misses `Charset=`.
enum ContentType {
    /// `text/html; Charset="UTF-8"` → ("text/html", "utf-8"); nil parts when absent.
    /// Byte by byte: this runs for every response validated.
    static func parse(_ value: String?) -> (mimeType: String?, charset: String?) {
        guard var value, !value.isEmpty else { return (nil, nil) }
        return value.withUTF8 { bytes -> (String?, String?) in
            var reader = Reader(bytes: bytes)
            let type = reader.lowercased(reader.take { $0 != semicolon })
            var charset: String?
            while charset == nil, reader.skip(semicolon) {
                let name = reader.lowercased(reader.take { $0 != semicolon && $0 != equals })
                guard reader.skip(equals) else { continue }
                let parameter = reader.parameterValue()
                if name == "charset", !parameter.isEmpty { charset = parameter.lowercased() }
            }
            return (type.isEmpty ? nil : type, charset)
        }
    }

    /// The media type and charset of `response`: from its `Content-Type` field
    /// when it is an HTTP response, else as the response reports them.
    static func of(_ response: URLResponse?) -> (mimeType: String?, charset: String?) {
        if let http = response as? HTTPURLResponse, let field = http.value(forHTTPHeaderField: "Content-Type") {
            return parse(field)
        }
        return (response?.mimeType?.trimmingCharacters(in: .whitespaces).lowercased(), response?.textEncodingName?.lowercased())
    }

    private static let semicolon = UInt8(ascii: ";")
    private static let equals = UInt8(ascii: "=")

    /// A cursor over the field's bytes.
    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// The bytes up to the first one `accept` refuses (or the end), blanks trimmed.
        mutating func take(while accept: (UInt8) -> Bool) -> Range<Int> {
            let start = index
            while index < bytes.count, accept(bytes[index]) { index += 1 }
            return trimmed(start..<index)
        }

        /// Steps over `byte` when it is next.
        mutating func skip(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A token or a quoted string (escapes removed); anything after a closing
        /// quote up to the next `;` is ignored.
        mutating func parameterValue() -> String {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[take { $0 != semicolon }]), as: UTF8.self)
            }
            index += 1
            var text: [UInt8] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
                text.append(bytes[index])
                index += 1
            }
            _ = take { $0 != semicolon }
            return String(decoding: text, as: UTF8.self)
        }

        func trimmed(_ range: Range<Int>) -> Range<Int> {
            var lower = range.lowerBound, upper = range.upperBound
            while lower < upper, bytes[lower] == 0x20 || bytes[lower] == 0x09 { lower += 1 }
            while upper > lower, bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09 { upper -= 1 }
            return lower..<upper
        }

        /// ASCII-lowercased.
        func lowercased(_ range: Range<Int>) -> String {
            let slice = UnsafeBufferPointer(rebasing: bytes[range])
            guard slice.contains(where: { $0 >= 65 && $0 <= 90 }) else { return String(decoding: slice, as: UTF8.self) }
            return String(decoding: slice.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        }
    }
}
