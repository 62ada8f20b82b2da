import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request options every request command shares: headers, credentials,
/// timeouts and retries.
struct RequestOptions: ParsableArguments {
    @Option(name: [.customShort("H"), .long], help: "Extra header, 'Name: value' (repeatable).")
    var header: [String] = []

    @Option(name: .shortAndLong, help: "Credentials 'user:password', sent as Basic at once and answering Basic/Digest challenges.")
    var user: String?

    @Option(help: "Idle timeout in seconds: fail when nothing is received for this long.")
    var timeout: Double = 60

    @Option(name: .customLong("max-time"), help: "Total time limit in seconds for the whole request, redirects and retries included.")
    var maxTime: Double?

    @Option(help: "Retry up to N times after a transient failure (timeouts, refused or lost connections, 429, 503); GET, HEAD, PUT and DELETE only.")
    var retry: Int = 0

    @Option(name: .customLong("max-redirs"), help: "Follow at most N redirects (0: follow none, the 3xx is the response); one more exits 47.")
    var maxRedirs: Int?

    @Flag(name: [.customShort("s"), .long], help: "Silent: no progress bar and no error messages (the exit status still tells).")
    var silent = false

    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s: still write error messages (curl's -sS).")
    var showError = false

    @Flag(name: [.customShort("L"), .customLong("location")],
          help: "Follow redirects: afn always does (accepted for curl's spelling); --max-redirs limits them.")
    var location = false

    @Flag(name: .customLong("no-cache"), help: ArgumentHelp(
        "Neither use nor fill the response cache.",
        discussion: "get, post and put keep responses as HTTP allows in ~/.cache/org.swift.foundation.URLCache/afn "
            + "($XDG_CACHE_HOME instead of ~/.cache when set) and revalidate them on every run (If-None-Match / If-Modified-Since, "
            + "a 304 answer): a stored response is never used without asking the server."))
    var noCache = false

    mutating func validate() throws {
        // Set before any work, and only here: every command that sends has these options.
        Console.isSilent = silent
        Console.showsErrors = showError
        for line in header { _ = try Self.parse(header: line) }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        if let maxTime, maxTime <= 0 { throw ValidationError("--max-time must be positive") }
        guard retry >= 0 else { throw ValidationError("--retry cannot be negative") }
        if let maxRedirs, maxRedirs < 0 { throw ValidationError("--max-redirs cannot be negative") }
    }

    /// `Name: value` split into its parts; an empty value is allowed.
    static func parse(header line: String) throws -> (name: String, value: String) {
        guard let colon = line.firstIndex(of: ":") else { throw ValidationError("a header reads 'Name: value': \(line)") }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, !name.contains(" ") else { throw ValidationError("not a header name: \(line)") }
        return (name, line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }

    /// The parsed `-u` value.
    var credentials: (user: String, password: String)? {
        guard let user else { return nil }
        guard let colon = user.firstIndex(of: ":") else { return (user, "") }
        return (String(user[..<colon]), String(user[user.index(after: colon)...]))
    }

    /// The retry policy `--retry N` asks for (N + 1 attempts), or nil.
    var retryPolicy: RetryPolicy? {
        guard retry > 0 else { return nil }
        var policy = RetryPolicy()
        policy.maximumAttempts = retry + 1
        return policy
    }

    /// Sets the idle timeout, the `-H` headers (they win over defaults) and,
    /// with `-u`, a Basic `Authorization` unless `-H` set one.
    func apply(to request: inout URLRequest) {
        request.timeoutInterval = timeout
        // --no-cache: neither an answer from the cache nor a conditional request.
        // Otherwise a stored answer is used only after the server confirms it (a 304):
        // a tool run from scripts must never print what a file held before it changed,
        // as a heuristically fresh entry (Last-Modified, no Cache-Control) would.
        request.cachePolicy = noCache ? .reloadIgnoringLocalCacheData : .reloadRevalidatingCacheData
        for line in header {
            guard let field = try? Self.parse(header: line) else { continue }
            request.setValue(field.value, forHTTPHeaderField: field.name)
        }
        if let credentials, request.value(forHTTPHeaderField: "Authorization") == nil {
            let token = Data("\(credentials.user):\(credentials.password)".utf8).base64EncodedString()
            request.setValue("Basic \(token)", forHTTPHeaderField: "Authorization")
        }
    }

    /// Sets the credential (for Basic and Digest challenges), the total time
    /// limit, the retry policy and the redirect limit of an operation.
    @discardableResult
    func apply(to operation: URLConnectionOperation) -> RedirectLimit? {
        if let credentials {
            operation.credential = URLCredential(user: credentials.user, password: credentials.password, persistence: .none)
        }
        if let maxTime { operation.timeoutIntervalForResource = maxTime }
        operation.retryPolicy = retryPolicy
        // --no-cache: and nothing stored.
        if noCache { operation.setCacheResponseBlock { _, _ in nil } }
        guard let maxRedirs else { return nil }
        let limit = RedirectLimit(maximum: maxRedirs)
        operation.setRedirectResponseBlock { _, proposed, _ in limit.follow(proposed) }
        return limit
    }

    /// A `method` request for `url` carrying AFNetworking's default headers
    /// (User-Agent, Accept-Language), as a request serializer makes it.
    static func makeRequest(method: String, url: String) throws -> URLRequest {
        try HTTPRequestSerializer().request(withMethod: method, urlString: withScheme(url), parameters: nil)
    }

    /// `text` with `http://` in front when it names no scheme (curl's rule:
    /// `example.com/x` and `localhost:8080` are http URLs). Only URL
    /// arguments go through this, never a file argument.
    static func withScheme(_ text: String) -> String {
        text.contains("://") ? text : "http://" + text
    }

    /// Whether `text` (scheme-less: http) is an absolute http(s) URL with a host.
    static func isHTTPURL(_ text: String) -> Bool {
        guard let url = URL(string: withScheme(text)), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              let host = url.host, !host.isEmpty else { return false }
        return true
    }

    /// Throws a usage error unless `text` is an absolute http(s) URL.
    static func validateURL(_ text: String) throws {
        guard isHTTPURL(text) else { throw ValidationError("not an http(s) URL: \(text)") }
    }
}
