import Foundation

/// RFC 6265 §5.1.4: a request's cookie path, the default-path of a cookie
/// set without a valid Path, and path-match.
enum CookiePath {
    /// The request URL's path as sent, percent-encoded and with its trailing
    /// slash (`URL.path` decodes it and drops the slash, so `/a/b/` would not
    /// match a cookie for `/a/b/`). Empty becomes "/".
    static func requestPath(of url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        return path.isEmpty ? "/" : path
    }

    /// The directory of the request path: up to, not including, its last "/";
    /// "/" when that would be empty or the path is not absolute.
    static func defaultPath(for url: URL) -> String {
        let path = requestPath(of: url)
        guard path.first == "/", let last = path.lastIndex(of: "/"), last != path.startIndex else { return "/" }
        return String(path[..<last])
    }

    /// `requestPath` is within `cookiePath`: the same, or below it at a "/".
    /// Compared byte for byte (paths are percent-encoded ASCII).
    static func matches(requestPath: String, cookiePath: String) -> Bool {
        let request = Array(requestPath.utf8)
        let cookie = Array(cookiePath.utf8)
        guard request.starts(with: cookie) else { return false }
        if request.count == cookie.count || cookie.last == UInt8(ascii: "/") { return true }
        return request[cookie.count] == UInt8(ascii: "/")
    }
}
