@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a request as the `curl` command line that sends the same request:
/// method, URL, its header fields, the fields the library adds when it sends
/// it (`Accept-Encoding`, stored cookies), and the body. The fields curl
/// would add on its own and the library does not send (`User-Agent`,
/// `Expect`) are switched off with `-H 'Name:'`.
enum CURLCommand {
    /// What the library adds to `request` when it sends it.
    struct Additions {
        /// Where cookies come from (nil: none are sent).
        var cookieStorage: HTTPCookieStorage?
    }

    static func describe(_ request: URLRequest?, adding additions: Additions) -> String {
        guard let request, let url = request.url else { return "# The request has no URL: there is no curl command for it." }
        var headers: [(String, String)] = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key.lowercased() < $1.key.lowercased() }
        func has(_ name: String) -> Bool { headers.contains { $0.0.caseInsensitiveCompare(name) == .orderedSame } }
        let withCookies = additions.cookieStorage.map { CookieHandling.addingCookies(to: request, from: $0) } ?? request
        if !has("Cookie"), let cookie = withCookies.value(forHTTPHeaderField: "Cookie") { headers.append(("Cookie", cookie)) }
        // The transport asks for what it decodes; a range asks for the
        // identity coding (see Transfer+Configuration).
        if !has("Accept-Encoding") { headers.append(("Accept-Encoding", has("Range") ? "identity" : "gzip, deflate, br, zstd")) }
        let hasBody = request.httpBody != nil || request.httpBodyStream != nil
        // (A body without a Content-Type gets libcurl's form type, from the
        // library and from curl alike, so that one is left on.)
        var off = ["User-Agent"]
        if hasBody { off.append("Expect") }

        var lines: [String] = []
        var prefix = ""
        var note: String?
        let method = (request.httpMethod ?? "GET").uppercased()
        if method == "HEAD" {
            lines.append("--head")
        } else if !(method == "GET" && !hasBody) && !(method == "POST" && hasBody) {
            lines.append("-X \(quoted(method))")
        }
        for (name, value) in headers {
            // "Name;" is curl's spelling for a field with an empty value.
            lines.append("-H \(quoted(value.isEmpty ? "\(name);" : "\(name): \(value)"))")
        }
        for name in off where !has(name) { lines.append("-H \(quoted("\(name):"))") }
        if let body = request.httpBody {
            if let text = String(data: body, encoding: .utf8), !text.utf8.contains(0) {
                lines.append("--data-raw \(quoted(text))")
            } else {
                // A NUL cannot be an argument: the bytes come from printf on stdin.
                prefix = "printf '\(body.map { "\\" + String($0, radix: 8) }.joined())' | "
                lines.append("--data-binary @-")
            }
        } else if request.httpBodyStream != nil {
            note = "# The body is streamed from an input stream and is not shown; add it with --data-binary @FILE."
            lines.append("--data-binary @-")
        }
        if let unix = UnixSocketURL.target(of: url) {
            // curl has no http+unix scheme: the socket is an option, the URL
            // the one the library gives curl (host "localhost").
            lines.append("--unix-socket \(quoted(unix.socketPath))")
            lines.append(quoted(unix.curlURL))
        } else {
            lines.append(quoted(url.absoluteString))
        }
        let command = prefix + "curl " + lines.joined(separator: " \\\n\t")
        return note.map { $0 + "\n" + command } ?? command
    }

    /// `text` in single quotes for a POSIX shell (a quote inside as `'\''`).
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
