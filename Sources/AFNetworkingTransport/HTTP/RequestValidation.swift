import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Checks a request before any DNS lookup, connection or byte is sent, so that
/// curl never has to guess: left to itself it reads a scheme-less URL's first
/// path segment as a host name, connects a host-less URL to whatever it finds
/// in the path, and drops header lines it cannot send.
package enum RequestValidation {
    /// The absolute http(s) URL to send, or the error to fail with:
    /// `NSURLErrorUnsupportedURL` without a scheme or with another one,
    /// `NSURLErrorBadURL` without a host.
    package static func targetURL(of request: URLRequest) -> Result<URL, NSError> {
        guard let url = request.url?.absoluteURL else {
            return .failure(TransportErrors.make(NSURLErrorBadURL, url: nil, underlying: nil,
                                                 description: "The request has no URL."))
        }
        guard let scheme = url.scheme, !scheme.isEmpty else {
            return .failure(TransportErrors.make(NSURLErrorUnsupportedURL, url: url, underlying: nil,
                                                 description: "The URL \(url.absoluteString) has no scheme; only absolute http and https URLs can be loaded."))
        }
        guard isHTTP(scheme) || UnixSocketURL.isUnixScheme(scheme) else {
            return .failure(TransportErrors.make(NSURLErrorUnsupportedURL, url: url, underlying: nil,
                                                 description: "The URL scheme \(scheme) is not supported; only http, https, http+unix and https+unix are."))
        }
        guard let host = url.host, !host.isEmpty else {
            return .failure(TransportErrors.make(NSURLErrorBadURL, url: url, underlying: nil,
                                                 description: "The URL \(url.absoluteString) has no host."))
        }
        return .success(url)
    }

    /// "http" or "https" in any case, without making a lowercased copy.
    private static func isHTTP(_ scheme: String) -> Bool {
        let utf8 = scheme.utf8
        guard utf8.count == 4 || utf8.count == 5 else { return false }
        for (index, byte) in utf8.enumerated() {
            let lower = byte | 0x20
            switch index {
            case 0: guard lower == UInt8(ascii: "h") else { return false }
            case 1, 2: guard lower == UInt8(ascii: "t") else { return false }
            case 3: guard lower == UInt8(ascii: "p") else { return false }
            default: guard lower == UInt8(ascii: "s") else { return false }
            }
        }
        return true
    }

    /// nil when the request method is an RFC 9110 token (§9.1: method = token);
    /// otherwise the error (`NSURLErrorBadURL`, as for a bad header field). The
    /// method is written into the request line as it is: a CR, LF or space in
    /// it would end that line early and smuggle a second request to the server.
    package static func methodProblem(in request: URLRequest, url: URL?) -> NSError? {
        request.httpMethod.flatMap { methodProblem($0, url: url) }
    }

    /// As `methodProblem(in:url:)`, for a method about to be put in a request.
    package static func methodProblem(_ method: String, url: URL?) -> NSError? {
        if isToken(method) { return nil }
        return TransportErrors.make(NSURLErrorBadURL, url: url, underlying: nil,
                                    description: "The request method \"\(printable(method))\" is not a token (RFC 9110 §9.1: letters, digits and !#$%&'*+-.^_`|~ only); nothing was sent.")
    }

    /// Whether `text` is a non-empty RFC 9110 token.
    package static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(ResponseHead.isFieldNameCharacter)
    }

    /// Whether `value` can be sent as a header field's value as it is: a CR
    /// or LF would end the field line (and start another field, or a second
    /// request), and a NUL ends a C string early.
    package static func isFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    /// `text` with control characters spelled as `\u{…}`, for an error message.
    package static func printable(_ text: String) -> String {
        text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
    }

    /// nil when every header field can be sent as is; otherwise the error
    /// (`NSURLErrorBadURL`, naming the field): a CR or LF would let a value
    /// smuggle in another header or a second request, and NUL ends a C string
    /// early, so such a request is refused rather than silently changed.
    package static func headerProblem(in request: URLRequest, url: URL?) -> NSError? {
        for (name, value) in request.allHTTPHeaderFields ?? [:] {
            let badName = name.isEmpty || name.utf8.contains { $0 <= 0x20 || $0 == UInt8(ascii: ":") || $0 == 0x7F }
            let badValue = !isFieldValue(value)
            if badName || badValue {
                let printable = name.unicodeScalars.map { $0.value < 0x20 ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined()
                let what = badName ? "name" : "value"
                return TransportErrors.make(NSURLErrorBadURL, url: url, underlying: nil,
                                            description: "The request header field \"\(printable)\" has an invalid \(what) (a CR, LF or NUL character, or a name that is not a token); nothing was sent.")
            }
        }
        return nil
    }
}
