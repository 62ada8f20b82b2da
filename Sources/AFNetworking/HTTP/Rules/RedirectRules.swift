@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a redirected request is made from the one that was redirected, as
/// browsers and NSURLConnection do it. Pure: a body stream is kept as is (the
/// driver sends a fresh copy; copying runs caller code).
enum RedirectRules {
    static func request(following response: ReceivedResponse, from request: URLRequest) -> Result<URLRequest, NSError> {
        guard let target = response.redirectURL, let scheme = target.scheme?.lowercased(),
              scheme == "http" || scheme == "https" || staysOnItsSocket(request.url, target) else {
            return .failure(TransportErrors.make(NSURLErrorUnsupportedURL, url: response.redirectURL ?? response.url, underlying: nil,
                                                 description: "A redirect may only lead to an http or https URL, or from a Unix socket to the same socket."))
        }
        var next = request
        next.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        let becomesGET: Bool
        switch response.statusCode {
        case 303: becomesGET = method != "GET" && method != "HEAD"
        case 301, 302: becomesGET = method == "POST"
        default: becomesGET = false   // 307, 308 keep the method and the body
        }
        if becomesGET {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            // The fields that described the body go with it (RFC 9110 §15.4).
            for name in bodyFields { next.setValue(nil, forHTTPHeaderField: name) }
        }
        if !sameOrigin(request.url, target) {
            // Credentials and cookies meant for one origin never go to another.
            for name in ["Authorization", "Proxy-Authorization", "Cookie"] { next.setValue(nil, forHTTPHeaderField: name) }
        }
        return .success(next)
    }

    /// Fields about the request's content, removed when a redirect drops it.
    static let bodyFields = ["Content-Type", "Content-Length", "Transfer-Encoding", "Content-Encoding", "Content-Language",
                             "Content-Location", "Content-Digest", "Repr-Digest", "Digest", "Last-Modified"]

    /// A Unix-socket target is followed only from a request on that very
    /// socket: a server elsewhere must never make the client talk to a local
    /// socket (a Docker daemon's, say).
    static func staysOnItsSocket(_ source: URL?, _ target: URL) -> Bool {
        guard UnixSocketURL.isUnixScheme(target.scheme), let source, UnixSocketURL.isUnixScheme(source.scheme) else { return false }
        return source.host == target.host
    }

    static func sameOrigin(_ lhs: URL?, _ rhs: URL?) -> Bool {
        guard let lhs, let rhs else { return false }
        // A socket path is case-sensitive, unlike a host name.
        if UnixSocketURL.isUnixScheme(lhs.scheme) { return lhs.scheme?.lowercased() == rhs.scheme?.lowercased() && lhs.host == rhs.host }
        return lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased()
            && effectivePort(lhs) == effectivePort(rhs)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}
