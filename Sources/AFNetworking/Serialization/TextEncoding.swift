import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Maps IANA charset names (from a `Content-Type` header) to `String.Encoding`.
/// Foundation on Linux has no `CFStringConvertIANACharSetNameToEncoding`, so the
/// names servers actually send are listed here.
enum TextEncoding {
    private static let table: [String: String.Encoding] = [
        "utf-8": .utf8, "utf8": .utf8, "unicode-1-1-utf-8": .utf8,
        "us-ascii": .ascii, "ascii": .ascii, "ansi_x3.4-1968": .ascii,
        "iso-8859-1": .isoLatin1, "iso8859-1": .isoLatin1, "iso_8859-1": .isoLatin1,
        "latin1": .isoLatin1, "l1": .isoLatin1, "iso-latin-1": .isoLatin1,
        "iso-8859-2": .isoLatin2, "latin2": .isoLatin2,
        "windows-1252": .windowsCP1252, "cp1252": .windowsCP1252, "x-cp1252": .windowsCP1252,
        "windows-1250": .windowsCP1250, "windows-1251": .windowsCP1251,
        "windows-1253": .windowsCP1253, "windows-1254": .windowsCP1254,
        "utf-16": .utf16, "utf16": .utf16, "utf-16le": .utf16LittleEndian, "utf-16be": .utf16BigEndian,
        "utf-32": .utf32, "utf-32le": .utf32LittleEndian, "utf-32be": .utf32BigEndian,
        "shift_jis": .shiftJIS, "euc-jp": .japaneseEUC, "iso-2022-jp": .iso2022JP,
        "macintosh": .macOSRoman, "x-mac-roman": .macOSRoman,
    ]

    /// The encoding named by `charset`, or nil when the name is unknown. Quotes and
    /// case are ignored because servers send `"UTF-8"`, `utf-8` and `Utf-8` alike.
    static func encoding(forCharset charset: String?) -> String.Encoding? {
        guard var name = charset?.trimmingCharacters(in: .whitespaces).lowercased(), !name.isEmpty else {
            return nil
        }
        if name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") {
            name = String(name.dropFirst().dropLast())
        }
        return table[name]
    }

    /// A human-readable name for error messages.
    static func name(of encoding: String.Encoding) -> String {
        switch encoding {
        case .utf8: return "UTF-8"
        case .ascii: return "US-ASCII"
        case .isoLatin1: return "ISO-8859-1"
        case .windowsCP1252: return "Windows-1252"
        case .utf16, .utf16BigEndian, .utf16LittleEndian: return "UTF-16"
        case .utf32, .utf32BigEndian, .utf32LittleEndian: return "UTF-32"
        default: return String(describing: encoding)
        }
    }

    /// Decodes `data` following the response's charset (falling back to `fallback`), and
    /// throws a clear error instead of silently dropping bytes that are invalid in it.
    static func decode(_ data: Data, response: URLResponse?, fallback: String.Encoding) throws -> String {
        try decode(data, encodingName: ContentType.of(response).charset, response: { response }, fallback: fallback)
    }

    /// `decode(_:response:fallback:)` with the charset name given; `response`
    /// is only asked for when decoding fails (it goes in the error).
    static func decode(_ data: Data, encodingName: String?, response: () -> URLResponse?, fallback: String.Encoding) throws -> String {
        let known = self.encoding(forCharset: encodingName)
        var decoded: String?
        var used = known.map(name(of:)) ?? name(of: fallback)
        if known == nil, let name = encodingName?.trimmingCharacters(in: CharacterSet.whitespaces.union(["\""])), !name.isEmpty {
            // A charset outside the table (KOI8-R, GBK, Big5 …), which
            // CoreFoundation decoded for 2.7 on Darwin: iconv's, as for XML.
            // One iconv does not know either falls back, as 2.7 did.
            do {
                decoded = String(decoding: try IconvDecoding.utf8(from: data, encodingName: name), as: UTF8.self)
            } catch .invalid {
                used = name
            } catch {
                decoded = String(data: data, encoding: fallback)
            }
        } else {
            decoded = String(data: data, encoding: known ?? fallback)
        }
        guard var string = decoded else {
            throw responseDecodingError(description: "Data failed decoding as a \(used) string",
                                        reason: "The response body contains bytes that are not valid \(used).",
                                        response: response(), data: data)
        }
        // A leading byte-order mark is not part of the text and would trip a parser.
        if string.unicodeScalars.first == "\u{FEFF}" {
            string.unicodeScalars.removeFirst()
        }
        return string
    }

    /// The body re-encoded as UTF-8 ready for a parser, or nil when it is empty or only
    /// whitespace (Rails answers `head :ok` with a single space, which is "no content").
    static func utf8Payload(_ data: Data, response: URLResponse?, fallback: String.Encoding) throws -> Data? {
        try utf8Payload(data, encodingName: ContentType.of(response).charset, response: { response }, fallback: fallback)
    }

    /// `utf8Payload(_:response:fallback:)` with the charset name given.
    static func utf8Payload(_ data: Data, encodingName: String?, response: () -> URLResponse?, fallback: String.Encoding) throws -> Data? {
        let string = try decode(data, encodingName: encodingName, response: response, fallback: fallback)
        if string.unicodeScalars.allSatisfy({ CharacterSet.whitespacesAndNewlines.contains($0) }) {
            return nil
        }
        return Data(string.utf8)
    }
}
