import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `httpShouldHandleCookies`: cookies from `HTTPCookieStorage.shared` go out
/// with each hop, and every response's `Set-Cookie` goes into it.
enum CookieHandling {
    /// The request with a Cookie header for its URL, unless the caller set one
    /// or turned cookie handling off.
    static func addingCookies(to request: URLRequest) -> URLRequest {
        guard request.httpShouldHandleCookies, let url = request.url,
              request.value(forHTTPHeaderField: "Cookie") == nil,
              let cookies = HTTPCookieStorage.shared.cookies(for: url), !cookies.isEmpty else { return request }
        var withCookies = request
        for (name, value) in HTTPCookie.requestHeaderFields(with: cookies) {
            withCookies.setValue(value, forHTTPHeaderField: name)
        }
        return withCookies
    }

    /// Stores the response's cookies for the URL that set them.
    static func store(from response: ReceivedResponse, for request: URLRequest) {
        guard request.httpShouldHandleCookies else { return }
        let values = response.values(forField: "set-cookie")
        guard !values.isEmpty else { return }
        // One header per cookie: a joined value would split inside Expires dates.
        let cookies = values.flatMap { HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: response.url) }
        HTTPCookieStorage.shared.setCookies(cookies, for: response.url, mainDocumentURL: nil)
    }
}
