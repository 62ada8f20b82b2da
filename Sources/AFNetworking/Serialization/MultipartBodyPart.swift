import Foundation

/// One part of a multipart body: its headers and where its bytes come from. The part
/// describes its source instead of holding an open stream, so a body can be rebuilt and
/// sent again (a redirect or an authentication retry) without being "exhausted".
final class MultipartBodyPart {
    /// Where the body bytes come from.
    enum Source {
        case data(Data)
        case file(URL)
        case stream(InputStream?)
    }

    /// Header fields in the order they are written. Written as they are:
    /// `StreamingMultipartFormData` refuses a field that is not a token or
    /// whose value holds a CR, LF or NUL before a part is made.
    let headers: [(String, String)]
    let source: Source
    /// Exact number of body bytes; a source that runs short or holds more fails the stream.
    let bodyLength: Int64

    init(headers: [(String, String)], source: Source, bodyLength: Int64) {
        self.headers = headers
        self.source = source
        // Never negative here (a negative length is refused when the part is
        // appended); the clamp only keeps the stream's arithmetic safe.
        self.bodyLength = max(0, bodyLength)
    }

    /// The encapsulation boundary and headers, ready to write before the body.
    func preamble(boundary: String, isFirst: Bool) -> Data {
        var text = isFirst ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n"
        for (field, value) in headers { text += "\(field): \(value)\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// `form-data; name="…"` with an optional file name, quoted and escaped.
    static func contentDisposition(name: String, fileName: String?) -> String {
        var value = "form-data; name=\"\(escapedQuotedValue(name))\""
        if let fileName = fileName { value += "; filename=\"\(escapedQuotedValue(fileName))\"" }
        return value
    }

    /// Escapes a quoted-string value the way browsers do for form data (WHATWG
    /// HTML, RFC 7578 §2's percent-encoding): `"` → `%22`, so a name cannot end
    /// the quoted string. Other characters, non-ASCII included, are sent as
    /// UTF-8 (RFC 7578 §5.1). A CR, LF or NUL never gets here: such a name is
    /// refused when the part is appended.
    static func escapedQuotedValue(_ value: String) -> String {
        var result = ""
        for scalar in value.unicodeScalars {
            if scalar == "\"" { result += "%22" } else { result.unicodeScalars.append(scalar) }
        }
        return result
    }
}
