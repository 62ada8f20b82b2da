import Foundation

/// URLs naming a server on a Unix domain socket, AsyncHTTPClient's form:
/// scheme `http+unix` or `https+unix`, the socket's path percent-encoded as
/// the host — `http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.43/info`.
package enum UnixSocketURL {
    /// Whether `scheme` is `http+unix` or `https+unix` (any case).
    package static func isUnixScheme(_ scheme: String?) -> Bool {
        guard let scheme = scheme?.lowercased() else { return false }
        return scheme == "http+unix" || scheme == "https+unix"
    }

    /// The socket path and the URL curl is given (`http://localhost/…`, so
    /// the `Host` header is `localhost`), or nil for another kind of URL.
    package static func target(of url: URL) -> (socketPath: String, curlURL: String, httpScheme: String)? {
        guard isUnixScheme(url.scheme), let path = url.host, !path.isEmpty,
              let components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        let scheme = url.scheme!.lowercased() == "https+unix" ? "https" : "http"
        var rest = components.percentEncodedPath
        if rest.isEmpty { rest = "/" }
        if let query = components.percentEncodedQuery { rest += "?" + query }
        return (path, "\(scheme)://localhost\(rest)", scheme)
    }

    /// The URL of a server on the socket at `path` (`/` percent-encoded).
    package static func url(socketPath path: String, scheme: String = "http+unix", pathAndQuery: String = "/") -> URL? {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        guard let host = path.addingPercentEncoding(withAllowedCharacters: allowed) else { return nil }
        return URL(string: "\(scheme)://\(host)\(pathAndQuery)")
    }
}
