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
        guard let name = declaredEncoding(in: Array(data.prefix(256))) else { return .foundation(.utf8) }
        return TextEncoding.encoding(forCharset: name).map(Encoding.foundation) ?? .declared(name)
    }

    /// The `encoding` of the XML declaration that opens `head` (after a UTF-8
    /// byte-order mark), read by the declaration's grammar (XML 1.0 §2.8,
    /// §4.3.3: `<?xml S version Eq "…" (S encoding Eq "…")? … ?>`, with `Eq`
    /// allowing blanks around `=`): an `encoding="…"` anywhere else — in a
    /// comment, an attribute — names nothing, as for libxml2.
    static func declaredEncoding(in head: [UInt8]) -> String? {
        var index = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        guard head[index...].starts(with: Array("<?xml".utf8)), head.count > index + 5, isBlank(head[index + 5]) else { return nil }
        index += 5
        func skipBlanks() { while index < head.count, isBlank(head[index]) { index += 1 } }
        while true {
            skipBlanks()
            guard index < head.count, head[index] != UInt8(ascii: "?") else { return nil }
            let nameStart = index
            while index < head.count, isNameByte(head[index]) { index += 1 }
            let name = head[nameStart..<index]
            guard !name.isEmpty else { return nil }
            skipBlanks()
            guard index < head.count, head[index] == UInt8(ascii: "=") else { return nil }
            index += 1
            skipBlanks()
            guard index < head.count, head[index] == UInt8(ascii: "\"") || head[index] == UInt8(ascii: "'") else { return nil }
            let quote = head[index]
            index += 1
            let valueStart = index
            while index < head.count, head[index] != quote { index += 1 }
            guard index < head.count else { return nil }
            let value = head[valueStart..<index]
            index += 1
            if name.elementsEqual("encoding".utf8) { return String(decoding: value, as: UTF8.self) }
        }
    }

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
    private static func isNameByte(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }

    private static func malformed(_ reason: String = "it holds bytes XML cannot contain") -> NSError {
        NSError(domain: XMLParser.errorDomain, code: XMLParser.ErrorCode.internalError.rawValue,
                userInfo: [NSLocalizedDescriptionKey: "The XML document is not well-formed: \(reason)"])
    }
}
