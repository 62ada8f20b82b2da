import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Screens bytes before they reach FoundationXML. Its parser callbacks turn
/// libxml2's names into Strings without checking them, so an element name
/// with invalid UTF-8 or an embedded NUL crashes the process (found by
/// `make fuzz`). XML cannot contain either, so such input is refused here with
/// a parse error instead. A declared encoding outside Foundation's table is
/// checked with iconv (`IconvDecoding`), the converter libxml2 uses for it.
enum XMLInputValidation {
    static func validate(_ data: Data) throws {
        // Whatever the encoding, the text must decode in it, without NUL.
        switch encoding(of: data) {
        case .foundation(let encoding):
            guard let text = String(data: data, encoding: encoding),
                  // Scalars, not `contains("\0")`: Foundation's substring search
                  // stops at NUL and never finds it (found by `make fuzz`).
                  !text.unicodeScalars.contains("\u{0}") else { throw malformed() }
        case .declared(let name):
            // Any other declared encoding is judged by iconv, as libxml2 reads it.
            let utf8: Data
            do {
                utf8 = try IconvDecoding.utf8(from: data, encodingName: name)
            } catch .unsupported {
                throw malformed("its declared encoding \(name) is not supported")
            } catch {
                throw malformed("it holds bytes that are not valid \(name)")
            }
            guard !utf8.contains(0) else { throw malformed() }
        }
    }

    /// How the document's text is decoded for the check.
    private enum Encoding {
        /// One Foundation decodes (the names in `TextEncoding`'s table, BOMs).
        case foundation(String.Encoding)
        /// Another name from the XML declaration, as written.
        case declared(String)
    }

    /// The document's encoding as libxml2 would settle it: a byte-order mark or
    /// the UTF-16 pattern of "<?", else the XML declaration, else UTF-8.
    private static func encoding(of data: Data) -> Encoding {
        if data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]) { return .foundation(.utf16) }
        if data.starts(with: [0x3C, 0x00, 0x3F, 0x00]) { return .foundation(.utf16LittleEndian) }
        if data.starts(with: [0x00, 0x3C, 0x00, 0x3F]) { return .foundation(.utf16BigEndian) }
        let head = String(decoding: data.prefix(128), as: UTF8.self)
        let lowered = head.lowercased()
        guard lowered.hasPrefix("<?xml") || lowered.hasPrefix("\u{FEFF}<?xml"),
              let range = head.range(of: "encoding=", options: .caseInsensitive) else { return .foundation(.utf8) }
        let name = String(head[range.upperBound...].dropFirst().prefix { $0 != "\"" && $0 != "'" })
        return TextEncoding.encoding(forCharset: name).map(Encoding.foundation) ?? .declared(name)
    }

    private static func malformed(_ reason: String = "it holds bytes XML cannot contain") -> NSError {
        NSError(domain: XMLParser.errorDomain, code: XMLParser.ErrorCode.internalError.rawValue,
                userInfo: [NSLocalizedDescriptionKey: "The XML document is not well-formed: \(reason)"])
    }
}
