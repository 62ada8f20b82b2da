import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTask {
    /// The task's current request (its original one before it started) as a
    /// `curl` command line that sends the same request (Alamofire's
    /// `cURLDescription()`): method, URL, header fields (the configuration's
    /// `httpAdditionalHeaders` included), the `Accept-Encoding` and the
    /// cookies from the configuration's `httpCookieStorage` that a session
    /// manager's task adds when it sends it, and the body (`--data-raw`,
    /// shell-quoted). A streamed body is noted, not read. For a task not made
    /// by a session manager, cookies come from `HTTPCookieStorage.shared`.
    public func cURLDescription() -> String {
        var storage: HTTPCookieStorage? = CookieHandling.sharedStorage
        if let managed = self as? ManagedSessionTask {
            let settings = managed.frontend.context.session.settings
            storage = settings.sendsCookies ? settings.cookieStorage : nil
        }
        return CURLCommand.describe(currentRequest ?? originalRequest, adding: .init(cookieStorage: storage))
    }
}
