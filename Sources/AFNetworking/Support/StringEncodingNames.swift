import Foundation

/// IANA charset names (as in a Content-Type `charset` parameter) to
/// `String.Encoding`. Darwin uses CoreFoundation's table for this; it is not
/// public in swift-corelibs-foundation, so the common names are listed here.
enum StringEncodingNames {
    static func encoding(forIANAName name: String) -> String.Encoding? {
        let key = name.trimmingCharacters(in: CharacterSet(charactersIn: "\"' ")).lowercased()
        return table[key]
    }

    private static let table: [String: String.Encoding] = [
        "utf-8": .utf8, "utf8": .utf8, "unicode-1-1-utf-8": .utf8,
        "us-ascii": .ascii, "ascii": .ascii, "ansi_x3.4-1968": .ascii,
        "iso-8859-1": .isoLatin1, "iso8859-1": .isoLatin1, "latin1": .isoLatin1, "l1": .isoLatin1, "iso_8859-1": .isoLatin1,
        "iso-8859-2": .isoLatin2, "latin2": .isoLatin2,
        "windows-1250": .windowsCP1250, "cp1250": .windowsCP1250,
        "windows-1251": .windowsCP1251, "cp1251": .windowsCP1251,
        "windows-1252": .windowsCP1252, "cp1252": .windowsCP1252,
        "windows-1253": .windowsCP1253, "cp1253": .windowsCP1253,
        "windows-1254": .windowsCP1254, "cp1254": .windowsCP1254,
        "utf-16": .utf16, "utf16": .utf16, "utf-16be": .utf16BigEndian, "utf-16le": .utf16LittleEndian,
        "utf-32": .utf32, "utf-32be": .utf32BigEndian, "utf-32le": .utf32LittleEndian,
        "shift_jis": .shiftJIS, "shift-jis": .shiftJIS, "sjis": .shiftJIS,
        "euc-jp": .japaneseEUC, "iso-2022-jp": .iso2022JP,
        "macintosh": .macOSRoman, "mac": .macOSRoman, "x-mac-roman": .macOSRoman,
    ]
}
