import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a request's own `Cache-Control` (and `Pragma: no-cache`) asks of the
/// cache (RFC 9111 §5.2.1), for requests on the default cache policy — 2.x
/// users who set `URLRequest.cachePolicy` instead get the same through it.
struct RequestDirectives: Equatable {
    /// `no-cache`, `max-age=0`, `Pragma: no-cache`: ask the server first.
    var noCache = false
    var noStore = false
    var onlyIfCached = false
    /// `max-age=N`: nothing older.
    var maxAge: TimeInterval?
    /// `min-fresh=N`: fresh for at least N more seconds.
    var minFresh: TimeInterval?
    /// `max-stale[=N]`: stale by at most N seconds (nil value: any staleness).
    var maxStale: TimeInterval??

    init(_ request: URLRequest) {
        let directives = CacheRules.directives(in: request.value(forHTTPHeaderField: "Cache-Control"))
        for directive in directives {
            let parts = directive.split(separator: "=", maxSplits: 1).map(String.init)
            // An argument that is not delta-seconds makes the directive
            // invalid, and it is ignored: `max-stale=abc` accepts no staleness.
            let argument = parts.count == 2 ? CacheRules.deltaSeconds(parts[1].trimmingCharacters(in: .whitespaces)) : nil
            switch parts.first?.trimmingCharacters(in: .whitespaces) {
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "only-if-cached": onlyIfCached = true
            case "max-age": if let argument { maxAge = argument }
            case "min-fresh": if let argument { minFresh = argument }
            case "max-stale":
                if parts.count == 1 { maxStale = .some(nil) } else if let argument { maxStale = .some(argument) }
            default: break
            }
        }
        if maxAge == 0 { noCache = true }
        // Pragma counts only without Cache-Control (RFC 9111 §5.4 history).
        if directives.isEmpty, request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true { noCache = true }
    }

    /// Whether a stored response of `age` seconds may answer without asking the server.
    func permitsReuse(of freshness: CacheFreshness, age: TimeInterval) -> Bool {
        guard !noCache, !freshness.mustRevalidate, let lifetime = freshness.lifetime else { return false }
        if let maxAge, age > maxAge { return false }
        if let minFresh, lifetime - age < minFresh { return false }
        if age < lifetime { return true }
        // Stale: only where the request accepts it and the response allows it.
        guard let maxStale, !freshness.forbidsStale else { return false }
        guard let limit = maxStale else { return true }
        return age - lifetime <= limit
    }

    /// Whether a stale response may be served at once while a background
    /// request revalidates it (RFC 5861 §3): within its
    /// `stale-while-revalidate` window, the response not forbidding stale
    /// use (`must-revalidate`, `no-cache`), and the request asking for no
    /// freshness of its own (`no-cache`, `max-age`, `min-fresh`) nor for
    /// no network at all (`only-if-cached`).
    func permitsStaleWhileRevalidate(_ freshness: CacheFreshness, age: TimeInterval) -> Bool {
        guard !noCache, !onlyIfCached, maxAge == nil, minFresh == nil, !freshness.forbidsStale,
              let lifetime = freshness.lifetime, let window = freshness.staleWhileRevalidate else { return false }
        return age >= lifetime && age < lifetime + window
    }
}
