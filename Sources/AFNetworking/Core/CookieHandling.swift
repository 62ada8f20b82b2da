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
    /// The request with a Cookie header for its URL, unless the caller set one
    /// or turned cookie handling off.
    static func addingCookies(to request: URLRequest, from storage: HTTPCookieStorage? = .shared) -> URLRequest {
        NetworkThread.assertNotCurrent()
        guard request.httpShouldHandleCookies, let storage, let url = request.url,
              request.value(forHTTPHeaderField: "Cookie") == nil,
              let cookies = storage.cookies(for: url), !cookies.isEmpty else { return request }
        var withCookies = request
        for (name, value) in HTTPCookie.requestHeaderFields(with: cookies) {
            withCookies.setValue(value, forHTTPHeaderField: name)
        }
        return withCookies
    }

    /// Stores the response's cookies for the URL that set them.
    static func store(from response: ReceivedResponse, for request: URLRequest, in storage: HTTPCookieStorage? = .shared) {
        NetworkThread.assertNotCurrent()
        guard request.httpShouldHandleCookies, let storage else { return }
        let values = response.values(forField: "set-cookie")
        guard !values.isEmpty else { return }
        // One header per cookie: a joined value would split inside Expires dates.
        let cookies = values.flatMap { HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: response.url) }
        storage.setCookies(cookies, for: response.url, mainDocumentURL: nil)
    }
}
