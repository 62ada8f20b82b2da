@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `httpShouldHandleCookies`: cookies from a cookie storage go out with each
/// hop, and every response's `Set-Cookie` goes into it, both through the
/// library's own RFC 6265 policy (`CookieJar`), not corelibs' parser and
/// matching. Never called on the network thread or under a lock: the
/// storage takes its own locks and may touch the disk.
enum CookieHandling {
    /// `HTTPCookieStorage.shared`, read once: its getter takes a lock, and
    /// swift-corelibs-foundation never replaces the shared storage. Its
    /// cookies' Secure flags are restored from its file here, once, as the
    /// storage itself loads that file in its own one-time initialiser
    /// (`CookiePersistence`).
    static let sharedStorage: HTTPCookieStorage = {
        let storage = HTTPCookieStorage.shared
        CookiePersistence.restoreSecureFlags(of: storage)
        return storage
    }()

    /// The request with a Cookie header for its URL, unless the caller set one
    /// or turned cookie handling off.
    static func addingCookies(to request: URLRequest, from storage: HTTPCookieStorage? = CookieHandling.sharedStorage) -> URLRequest {
        NetworkThread.assertNotCurrent()
        guard request.httpShouldHandleCookies, let storage, let url = request.url,
              request.value(forHTTPHeaderField: "Cookie") == nil,
              let header = CookieJar.header(for: url, from: storage) else { return request }
        var withCookies = request
        withCookies.setValue(header, forHTTPHeaderField: "Cookie")
        return withCookies
    }

    /// Stores the response's cookies for the URL that set them: one
    /// `Set-Cookie` field is one cookie, whatever commas it holds.
    static func store(from response: ReceivedResponse, for request: URLRequest, in storage: HTTPCookieStorage? = CookieHandling.sharedStorage) {
        NetworkThread.assertNotCurrent()
        guard request.httpShouldHandleCookies, let storage else { return }
        CookieJar.store(response.values(forField: "set-cookie"), for: response.url, in: storage)
    }
}
