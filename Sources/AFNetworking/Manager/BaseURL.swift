import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How both HTTP managers resolve URL strings against their base URL.
enum BaseURL {
    /// 2.7 appends "/" to a base URL whose path does not end with one, so
    /// that "users" under "http://h/api" means "/api/users".
    static func normalized(_ url: URL?) -> URL? {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              !components.path.isEmpty, !components.path.hasSuffix("/") else { return url }
        components.path += "/"
        return components.url ?? url
    }

    /// `URLString` resolved against `base` as `URL(string:relativeTo:)` does,
    /// or NSURLErrorBadURL when that gives no absolute URL.
    static func absoluteString(for URLString: String, relativeTo base: URL?) throws -> String {
        // An empty reference is the base itself, fragment dropped (RFC 3986
        // §5.2.2; Apple's URL(string: "", relativeTo:) agrees, 2.x's get(@"")
        // relied on it); corelibs returns nil.
        if URLString.isEmpty, let base = base?.absoluteURL, base.scheme != nil {
            guard var components = URLComponents(url: base, resolvingAgainstBaseURL: true) else { return base.absoluteString }
            components.fragment = nil
            return components.url?.absoluteString ?? base.absoluteString
        }
        guard let url = URL(string: URLString, relativeTo: base), url.scheme != nil else {
            throw NSError(domain: NSURLErrorDomain, code: NSURLErrorBadURL, userInfo: [
                NSLocalizedDescriptionKey: "\"\(URLString)\" is not a URL\(base == nil ? " and the manager has no base URL" : "").",
                "NSErrorFailingURLStringKey": URLString,
            ])
        }
        return url.absoluteString
    }
}
