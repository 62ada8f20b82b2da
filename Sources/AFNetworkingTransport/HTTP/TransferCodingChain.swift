import CAFCompression
import Foundation

/// RFC 9112 §6.1 on a response's `Transfer-Encoding` list (all its fields,
/// in order). A recipient can only find the end of the body when `chunked`
/// is the last coding: `chunked, gzip` (chunked first) would leave the body
/// undelimited and its bytes undecodable; libcurl 7.x lets it through and
/// reports an empty success, curl 8 refuses it. The transfer fails instead,
/// saying why.
///
/// `chunked` named again after itself (`chunked, chunked`, or two fields
/// that each say `chunked`) is read as one `chunked`, as curl does (its
/// tests 1482 and 1483): libcurl takes the body apart once, and the server
/// framed it once. Only another coding after `chunked` cannot be read.
enum TransferCodingChain {
    /// The coding names in `values` (each field's value, in order),
    /// lowercased, without parameters or blanks.
    static func names<Value: Collection>(in values: [Value]) -> [String] where Value.Element == UInt8 {
        var codings: [String] = []
        for value in values {
            for item in value.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: true) {
                // A coding's parameters (";q=…" is not allowed here, but extensions are) do not name it.
                let name = String(decoding: item.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self)
                    .trimmingCharacters(in: .whitespaces).lowercased()
                if !name.isEmpty { codings.append(name) }
            }
        }
        return codings
    }

    /// Why the chain cannot be delimited, or nil when it can.
    static func problem(in values: [ArraySlice<UInt8>]) -> String? {
        // libcurl reads a coding as chunked only when the item is exactly
        // `chunked`: with parameters it would deliver the framing as the body.
        for value in values {
            for item in value.split(separator: UInt8(ascii: ",")) {
                let name = item.prefix { $0 != UInt8(ascii: ";") }
                guard name.count < item.count else { continue }
                let trimmed = String(decoding: name, as: UTF8.self).trimmingCharacters(in: .whitespaces).lowercased()
                if trimmed == "chunked" {
                    return "The response's Transfer-Encoding gives chunked parameters (\(String(decoding: item, as: UTF8.self).trimmingCharacters(in: .whitespaces))), so its body cannot be delimited."
                }
            }
        }
        let codings = names(in: values)
        guard let first = codings.firstIndex(of: "chunked"),
              codings[first...].contains(where: { $0 != "chunked" }) else { return nil }
        return "The response's Transfer-Encoding (\(codings.joined(separator: ", "))) does not end with chunked, so its body cannot be delimited or decoded."
    }

    /// The codings the library undoes itself, in the order the server
    /// applied them: every one but `chunked` (libcurl takes that apart) and
    /// `identity` (nothing to undo). Fails with the name of a coding it does
    /// not know: unlike an unknown content coding, a transfer coding is not
    /// part of the representation, so a body still in it is no answer at all
    /// (curl refuses one too, its test 2119).
    static func codingsToUndo(in values: [String]) -> Result<[cafdec_kind], UnknownCoding> {
        var kinds: [cafdec_kind] = []
        for name in names(in: values.map(\.utf8)) where name != "chunked" && name != "identity" {
            guard let kind = ContentDecoder.kind(named: name) else { return .failure(UnknownCoding(name: name)) }
            kinds.append(kind)
        }
        guard kinds.count <= ContentDecoder.maximumCodings else {
            return .failure(UnknownCoding(name: "\(kinds.count) stacked codings"))
        }
        return .success(kinds)
    }

    /// A transfer coding this library cannot undo.
    struct UnknownCoding: Error, Equatable {
        /// As the response named it (lowercased), or what is wrong with the list.
        let name: String
    }
}
