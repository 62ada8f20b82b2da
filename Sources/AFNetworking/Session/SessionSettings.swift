@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a session's tasks take from its `URLSessionConfiguration`, read once
/// when the session is made (Apple copies the configuration at that point too,
/// so later changes to the caller's object have no effect).
struct SessionSettings: @unchecked Sendable {
    // @unchecked: immutable; the storages it names are thread-safe Foundation objects.

    let cookieStorage: HTTPCookieStorage?
    let sendsCookies: Bool
    let acceptsCookies: Bool
    let cache: URLCache?
    let credentialStorage: URLCredentialStorage?
    let requestCachePolicy: URLRequest.CachePolicy
    /// `httpAdditionalHeaders` as header fields (string and number values).
    let additionalHeaders: [(name: String, value: String)]
    let idleTimeout: TimeInterval
    let resourceTimeout: TimeInterval
    let maximumConnectionsPerHost: Int
    /// Distinguishes this session's per-host limits from other sessions'.
    let sessionKey: Int
    /// The last `hostLimit(for:)` answer and the URL parts it was for (shared by copies).
    private let lastHostLimit = LockedState<(host: String, scheme: String?, port: Int?, limit: HostLimit)?>(nil)
    /// `connectionProxyDictionary`, parsed (nil: the environment decides).
    let proxies: Result<ProxyConfiguration, NSError>?

    init(_ configuration: URLSessionConfiguration, sessionKey: Int) {
        cookieStorage = configuration.httpCookieStorage
        sendsCookies = configuration.httpShouldSetCookies
        acceptsCookies = configuration.httpCookieAcceptPolicy != .never
        cache = configuration.urlCache
        credentialStorage = configuration.urlCredentialStorage
        requestCachePolicy = configuration.requestCachePolicy
        var headers: [(name: String, value: String)] = []
        for (key, value) in configuration.httpAdditionalHeaders ?? [:] {
            guard let name = key as? String else { continue }
            switch value {
            case let text as String: headers.append((name, text))
            case let number as NSNumber: headers.append((name, number.stringValue))
            default: continue
            }
        }
        additionalHeaders = headers.sorted { $0.name < $1.name }
        idleTimeout = configuration.timeoutIntervalForRequest
        resourceTimeout = configuration.timeoutIntervalForResource
        maximumConnectionsPerHost = configuration.httpMaximumConnectionsPerHost
        self.sessionKey = sessionKey
        proxies = configuration.connectionProxyDictionary.map { ProxyDictionary.parse($0) }
    }

    /// `request` as the session sends it: the additional headers it does not
    /// set itself, and the configuration's cache policy when it asks for the
    /// protocol's. `refusal` is the error the task fails with when resumed,
    /// sending nothing: an additional header it would get cannot be sent (a
    /// CR, LF or NUL in the value, a name that is not a token). corelibs'
    /// `URLRequest.setValue` drops such a value without a word, and the
    /// request went out without the field. A header the request sets itself
    /// is not added, so it is not checked.
    func applied(to request: URLRequest) -> (request: URLRequest, refusal: NSError?) {
        var applied = request
        var refusal: NSError?
        for header in additionalHeaders where applied.value(forHTTPHeaderField: header.name) == nil {
            if let problem = HeaderFieldValidation.problem(name: header.name, value: header.value, url: request.url,
                                                           role: "session configuration's httpAdditionalHeaders field") {
                if refusal == nil { refusal = problem }
                continue
            }
            applied.setValue(header.value, forHTTPHeaderField: header.name)
        }
        if applied.cachePolicy == .useProtocolCachePolicy && requestCachePolicy != .useProtocolCachePolicy {
            applied.cachePolicy = requestCachePolicy
        }
        return (applied, refusal)
    }

    /// The engine-level limit for `url`'s host and port in this session (nil
    /// when the configuration sets none).
    func hostLimit(for url: URL?) -> HostLimit? {
        guard maximumConnectionsPerHost > 0, let url, let rawHost = url.host else { return nil }
        let rawScheme = url.scheme, rawPort = url.port
        // A task asks for each hop, and most hops of a session go to one
        // origin: the last key is kept, so the strings are built once.
        if let last = lastHostLimit.value, last.host == rawHost, last.scheme == rawScheme, last.port == rawPort { return last.limit }
        let scheme = rawScheme?.lowercased() ?? "http"
        let port = rawPort ?? (scheme == "https" ? 443 : 80)
        let limit = HostLimit(key: "\(sessionKey)|\(scheme)://\(rawHost.lowercased()):\(port)", maximum: maximumConnectionsPerHost)
        lastHostLimit.withLock { $0 = (rawHost, rawScheme, rawPort, limit) }
        return limit
    }

    /// The environment a hop of a task starts in (its host limit aside: `hostLimit(for:)`).
    func environment(securityPolicy: SecurityPolicy?, usesCache: Bool, reportsUploadProgress: Bool) -> TransferEnvironment {
        var environment = TransferEnvironment(securityPolicy: securityPolicy)
        environment.cookieStorage = cookieStorage
        environment.sendsCookies = sendsCookies
        environment.acceptsCookies = acceptsCookies
        environment.credentialStorage = credentialStorage
        environment.cache = usesCache ? cache : nil
        environment.reportsUploadProgress = reportsUploadProgress
        if idleTimeout > 0 && idleTimeout.isFinite { environment.idleTimeout = idleTimeout }
        environment.proxies = proxies
        return environment
    }
}
