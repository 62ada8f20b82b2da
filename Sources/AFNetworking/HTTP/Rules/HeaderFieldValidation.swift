@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation

/// Header fields handed to the library — per call (`headers:`) or as a
/// request serializer's defaults — are checked before a request is built: a
/// CR, LF or NUL in a value would let it smuggle in another field or a second
/// request, and a name that is not an RFC 9110 token is no field name. Such a
/// field is refused, never dropped: corelibs' `URLRequest.setValue` drops a
/// bad value without a word, and the request went out without the field.
enum HeaderFieldValidation {
    /// Throws `NSURLErrorBadURL` in `NSURLErrorDomain` naming the field (the
    /// error the transport gives a request carrying such a field).
    static func check(_ headers: [String: String]?, url: URL?) throws {
        for (name, value) in headers ?? [:] {
            if let problem = problem(name: name, value: value, url: url) { throw problem }
        }
    }

    /// The error for a field that cannot be sent as it is, or nil when it can.
    /// `role` says in the message which field it is ("request header field",
    /// "default header field"). The value is never quoted: it may be a credential.
    static func problem(name: String, value: String, url: URL?, role: String = "request header field") -> NSError? {
        let badName = !RequestValidation.isToken(name)
        guard badName || !RequestValidation.isFieldValue(value) else { return nil }
        let what = badName ? "name (not a token)" : "value (a CR, LF or NUL character)"
        return badURL("The \(role) \"\(RequestValidation.printable(name))\" has an invalid \(what); nothing was sent.", url: url)
    }

    /// The error for a Basic `Authorization` field made from a user name
    /// holding ":", which RFC 7617 §2 makes unsendable.
    static func basicUserWithColon(url: URL?) -> NSError {
        badURL("The default Authorization field was set from a user name containing \":\", which Basic authentication cannot carry (RFC 7617 §2); nothing was sent.",
               url: url)
    }

    /// `NSURLErrorBadURL` in `NSURLErrorDomain` with `description` and both
    /// failing-URL keys (the transport's errors carry only the URL one).
    private static func badURL(_ description: String, url: URL?) -> NSError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            info["NSErrorFailingURLStringKey"] = url.absoluteString
        }
        return NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL, userInfo: info)
    }
}
