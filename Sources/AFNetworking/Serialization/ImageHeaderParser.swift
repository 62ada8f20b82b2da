import Foundation

/// Reads format and pixel size from image headers. Every read is bounds-checked and
/// every loop advances, so truncated or hostile input returns nil instead of trapping.
enum ImageHeaderParser {
    static func parse(_ data: Data) -> (Image.Format, Int, Int)? {
        let bytes = [UInt8](data.prefix(1 << 20)) // headers sit near the start; cap the copy
        return parsePNG(bytes) ?? parseGIF(bytes) ?? parseJPEG(bytes) ?? parseWebP(bytes) ?? parseBMP(bytes)
    }

    private static func u16be(_ b: [UInt8], _ i: Int) -> Int? {
        guard i >= 0, i + 2 <= b.count else { return nil }
        return Int(b[i]) << 8 | Int(b[i + 1])
    }

    private static func u16le(_ b: [UInt8], _ i: Int) -> Int? {
        guard i >= 0, i + 2 <= b.count else { return nil }
        return Int(b[i + 1]) << 8 | Int(b[i])
    }

    private static func u24le(_ b: [UInt8], _ i: Int) -> Int? {
        guard i >= 0, i + 3 <= b.count else { return nil }
        return Int(b[i + 2]) << 16 | Int(b[i + 1]) << 8 | Int(b[i])
    }

    private static func u32be(_ b: [UInt8], _ i: Int) -> Int? {
        guard i >= 0, i + 4 <= b.count else { return nil }
        return Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
    }

    private static func u32le(_ b: [UInt8], _ i: Int) -> UInt32? {
        guard i >= 0, i + 4 <= b.count else { return nil }
        return UInt32(b[i + 3]) << 24 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i])
    }

    private static func matches(_ b: [UInt8], _ i: Int, _ ascii: String) -> Bool {
        let expected = Array(ascii.utf8)
        guard i >= 0, i + expected.count <= b.count else { return false }
        return Array(b[i..<(i + expected.count)]) == expected
    }

    private static func parsePNG(_ b: [UInt8]) -> (Image.Format, Int, Int)? {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        guard b.count >= 24, Array(b[0..<8]) == signature, matches(b, 12, "IHDR"),
              let w = u32be(b, 16), let h = u32be(b, 20) else { return nil }
        return (.png, w, h)
    }

    private static func parseGIF(_ b: [UInt8]) -> (Image.Format, Int, Int)? {
        guard matches(b, 0, "GIF87a") || matches(b, 0, "GIF89a"),
              let w = u16le(b, 6), let h = u16le(b, 8) else { return nil }
        return (.gif, w, h)
    }

    private static func parseJPEG(_ b: [UInt8]) -> (Image.Format, Int, Int)? {
        guard b.count >= 4, b[0] == 0xFF, b[1] == 0xD8 else { return nil }
        // Start-of-frame markers carry the size; DHT (C4), JPG (C8) and DAC (CC) do not.
        let frameMarkers: Set<UInt8> = [0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF]
        var i = 2
        while i < b.count {
            guard b[i] == 0xFF else { return nil }
            while i < b.count, b[i] == 0xFF { i += 1 } // fill bytes
            guard i < b.count else { return nil }
            let marker = b[i]
            i += 1
            if marker == 0x01 || (0xD0...0xD8).contains(marker) { continue } // no payload
            if marker == 0xD9 || marker == 0xDA { return nil } // image data began before any frame header
            guard let length = u16be(b, i), length >= 2 else { return nil }
            if frameMarkers.contains(marker) {
                guard let h = u16be(b, i + 3), let w = u16be(b, i + 5) else { return nil }
                return (.jpeg, w, h)
            }
            i += length
        }
        return nil
    }

    private static func parseWebP(_ b: [UInt8]) -> (Image.Format, Int, Int)? {
        guard matches(b, 0, "RIFF"), matches(b, 8, "WEBP") else { return nil }
        if matches(b, 12, "VP8 ") {
            // Lossy: a 3-byte frame tag, the start code 9D 01 2A, then 14-bit sizes.
            guard b.count >= 30, b[23] == 0x9D, b[24] == 0x01, b[25] == 0x2A,
                  let w = u16le(b, 26), let h = u16le(b, 28) else { return nil }
            return (.webp, w & 0x3FFF, h & 0x3FFF)
        }
        if matches(b, 12, "VP8L") {
            // Lossless: signature 0x2F, then width-1 and height-1 packed in 14 bits each.
            guard b.count >= 25, b[20] == 0x2F, let bits = u32le(b, 21) else { return nil }
            return (.webp, Int(bits & 0x3FFF) + 1, Int((bits >> 14) & 0x3FFF) + 1)
        }
        if matches(b, 12, "VP8X") {
            // Extended: 24-bit canvas width-1 and height-1.
            guard let w = u24le(b, 24), let h = u24le(b, 27) else { return nil }
            return (.webp, w + 1, h + 1)
        }
        return nil
    }

    private static func parseBMP(_ b: [UInt8]) -> (Image.Format, Int, Int)? {
        guard matches(b, 0, "BM"), let headerSize = u32le(b, 14) else { return nil }
        if headerSize == 12 {
            guard let w = u16le(b, 18), let h = u16le(b, 20) else { return nil }
            return (.bmp, w, h)
        }
        guard headerSize >= 40, let w = u32le(b, 18), let h = u32le(b, 22) else { return nil }
        // Both are signed; a negative height means rows are stored top-down.
        let width = Int(Int32(bitPattern: w)), height = Int(Int32(bitPattern: h))
        return (.bmp, abs(width), abs(height))
    }
}
