import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `httpShouldHandleCookies`: cookies from a cookie storage go out with each
/// hop, and every response's `Set-Cookie` goes into it. Never called on the
/// network thread or under a lock: the storage takes its own locks and may
/// touch the disk.
enum CookieHandling {
    /// `HTTPCookieStorage.shared`, read once: its getter takes a lock, and
    /// swift-corelibs-foundation never replaces the shared storage.
    static let sharedStorage = HTTPCookieStorage.shared

    /// The request with a Cookie header for its URL, unless the caller set one
    /// or turned cookie handling off.
    static func addingCookies(to request: URLRequest, from storage: HTTPCookieStorage? = CookieHandling.sharedStorage) -> URLRequest {
        NetworkThread.assertNotCurrent()
        guard request.httpShouldHandleCookies, let storage, let url = request.url,
              request.value(forHTTPHeaderField: "Cookie") == nil,
              let candidates = storage.cookies(for: url), !candidates.isEmpty else { return request }
        // swift-corelibs-foundation matches cookies on the host alone: the
        // path, Secure and expiry rules of RFC 6265 §5.4 are applied here.
        let cookies = candidates.filter { sendable($0, to: url) }
        guard !cookies.isEmpty else { return request }
        var withCookies = request
        for (name, value) in HTTPCookie.requestHeaderFields(with: cookies) {
            withCookies.setValue(value, forHTTPHeaderField: name)
        }
        return withCookies
    }

    /// RFC 6265 §5.4: a cookie goes to a URL whose path is within the
    /// cookie's path, only over https when it is Secure, and not once expired.
    static func sendable(_ cookie: HTTPCookie, to url: URL, now: Date = Date()) -> Bool {
        if let expiry = cookie.expiresDate, expiry <= now { return false }
        if cookie.isSecure, url.scheme?.lowercased() != "https" { return false }
        return pathMatches(requestPath: url.path.isEmpty ? "/" : url.path, cookiePath: cookie.path.isEmpty ? "/" : cookie.path)
    }

    /// RFC 6265 §5.1.4 path-match.
    static func pathMatches(requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        if cookiePath.hasSuffix("/") { return true }
        return requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// Stores the response's cookies for the URL that set them.
    static func store(from response: ReceivedResponse, for request: URLRequest, in storage: HTTPCookieStorage? = CookieHandling.sharedStorage) {
        NetworkThread.assertNotCurrent()
        guard request.httpShouldHandleCookies, let storage else { return }
        let values = response.values(forField: "set-cookie")
        guard !values.isEmpty else { return }
        // One header per cookie: a joined value would split inside Expires dates.
        let cookies = values.flatMap { HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: response.url) }
        storage.setCookies(cookies, for: response.url, mainDocumentURL: nil)
    }
}
