import Foundation

/// Text in an encoding Foundation's table does not name, converted to UTF-8
/// with iconv — the converter libxml2 itself uses for every encoding beyond its
/// built-in few. So an XML document's declared encoding is accepted exactly
/// when the parser could read it (ISO-8859-15, KOI8-R, EUC-KR, …).
enum IconvDecoding {
    enum Failure: Error {
        /// iconv has no converter of that name.
        case unsupported
        /// The bytes are not valid in the encoding.
        case invalid
    }

    /// `data` converted from `encodingName` to UTF-8.
    static func utf8(from data: Data, encodingName: String) throws(Failure) -> Data {
        // The XML EncName production: a letter, then letters, digits, '.', '_', '-'.
        // Anything else (iconv's "//IGNORE" or "//TRANSLIT" suffixes above all) is refused.
        guard let first = encodingName.unicodeScalars.first, first.isASCII, first.properties.isAlphabetic,
              encodingName.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "._-".unicodeScalars.contains($0)) })
        else { throw .unsupported }
        let converter = iconv_open("UTF-8", encodingName)
        guard converter != iconv_t(bitPattern: -1) else { throw .unsupported }
        defer { iconv_close(converter) }

        var input = [CChar](repeating: 0, count: data.count)
        for (index, byte) in data.enumerated() { input[index] = CChar(bitPattern: byte) }
        var output = Data()
        var chunk = [CChar](repeating: 0, count: 16 << 10)
        let complete = input.withUnsafeMutableBufferPointer { inputBuffer -> Bool in
            var inputCursor = inputBuffer.baseAddress
            var inputLeft = inputBuffer.count
            // Bounded: each round either consumes input or fails (E2BIG only when the chunk filled).
            while true {
                let (result, failure) = chunk.withUnsafeMutableBufferPointer { chunkBuffer -> (Int, Int32) in
                    var outputCursor = chunkBuffer.baseAddress
                    var outputLeft = chunkBuffer.count
                    let result = iconv(converter, &inputCursor, &inputLeft, &outputCursor, &outputLeft)
                    let failure = errno
                    chunkBuffer.baseAddress.map { output.append(UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self), count: chunkBuffer.count - outputLeft) }
                    return (result, failure)
                }
                if result != -1 { return inputLeft == 0 }
                // E2BIG: the chunk is full, go on. EILSEQ / EINVAL: invalid or truncated input.
                if failure != E2BIG { return false }
            }
        }
        guard complete else { throw .invalid }
        return output
    }
}
