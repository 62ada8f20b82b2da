import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLConnectionOperation {
    /// The operation's request as a `curl` command line that sends the same
    /// request (Alamofire's `cURLDescription()`): method, URL, header fields,
    /// the `Accept-Encoding` and stored cookies the library adds when it sends
    /// it (cookies when `httpShouldHandleCookies`), and the body (`--data-raw`,
    /// shell-quoted; a body with a NUL byte through `printf`). A streamed body
    /// is noted, not read. Fields curl would add and the library does not send
    /// are switched off (`-H 'User-Agent:'`). Credentials, proxies and TLS
    /// settings are not included.
    public func cURLDescription() -> String {
        CURLCommand.describe(request, adding: .init(cookieStorage: CookieHandling.sharedStorage))
    }
}
