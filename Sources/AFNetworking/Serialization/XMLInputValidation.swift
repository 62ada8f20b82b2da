import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Screens bytes before they reach FoundationXML. Its parser callbacks turn
/// libxml2's names into Strings without checking them, so an element name
/// with invalid UTF-8 or an embedded NUL crashes the process (found by
/// `make fuzz`). XML cannot contain either, so such input is refused here with
/// a parse error instead.
enum XMLInputValidation {
    static func validate(_ data: Data) throws {
        // Whatever the encoding, the text must decode in it, without NUL. An
        // encoding this side cannot name is refused: libxml2 would read such a
        // document as UTF-8 unchecked.
        guard let encoding = encoding(of: data),
              let text = String(data: data, encoding: encoding),
              // Scalars, not `contains("\0")`: Foundation's substring search
              // stops at NUL and never finds it (found by `make fuzz`).
              !text.unicodeScalars.contains("\u{0}") else { throw malformed() }
    }

    /// The document's encoding as libxml2 would settle it: a byte-order mark or
    /// the UTF-16 pattern of "<?", else the XML declaration, else UTF-8.
    private static func encoding(of data: Data) -> String.Encoding? {
        if data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]) { return .utf16 }
        if data.starts(with: [0x3C, 0x00, 0x3F, 0x00]) { return .utf16LittleEndian }
        if data.starts(with: [0x00, 0x3C, 0x00, 0x3F]) { return .utf16BigEndian }
        let head = String(decoding: data.prefix(128), as: UTF8.self).lowercased()
        guard head.hasPrefix("<?xml") || head.hasPrefix("\u{FEFF}<?xml"), let range = head.range(of: "encoding=") else { return .utf8 }
        let name = head[range.upperBound...].dropFirst().prefix { $0 != "\"" && $0 != "'" }
        return TextEncoding.encoding(forCharset: String(name))
    }

    private static func malformed() -> NSError {
        NSError(domain: XMLParser.errorDomain, code: XMLParser.ErrorCode.internalError.rawValue,
                userInfo: [NSLocalizedDescriptionKey: "The XML document is not well-formed: it holds bytes XML cannot contain"])
    }
}
