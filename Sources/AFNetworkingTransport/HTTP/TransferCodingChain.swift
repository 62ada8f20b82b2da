import Foundation

/// RFC 9112 §6.1 on a response's `Transfer-Encoding` list (all its fields,
/// in order): `chunked` may be applied once, and a recipient can only find
/// the end of the body when `chunked` is the last coding. `chunked, gzip`
/// (chunked first) would leave the body undelimited and its bytes
/// undecodable; libcurl 7.x lets it through and reports an empty success,
/// curl 8 refuses it. The transfer fails instead, saying why.
enum TransferCodingChain {
    /// Why the chain cannot be read, or nil when it can.
    static func problem(in values: [ArraySlice<UInt8>]) -> String? {
        var codings: [String] = []
        for value in values {
            for item in value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                // A coding's parameters (";q=…" is not allowed here, but extensions are) do not name it.
                let name = String(decoding: item.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
                    .trimmingCharacters(in: .whitespaces).lowercased()
                if !name.isEmpty { codings.append(name) }
            }
        }
        let chunked = codings.indices.filter { codings[$0] == "chunked" }
        let chain = codings.joined(separator: ", ")
        if chunked.count > 1 {
            return "The response applies the chunked transfer coding more than once (Transfer-Encoding: \(chain))."
        }
        if let position = chunked.first, position != codings.count - 1 {
            return "The response's Transfer-Encoding (\(chain)) does not end with chunked, so its body cannot be delimited or decoded."
        }
        return nil
    }
}
