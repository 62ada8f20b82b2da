import ArgumentParser

/// What the single-request commands (`get`, `post`, `put`) print and when
/// an HTTP error status fails them.
struct ResponseOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Write the body to this file instead of stdout.")
    var output: String?

    @Flag(name: [.short, .customLong("include")], help: "Print the status line and headers (to stdout) before the body.")
    var include = false

    @Flag(name: .shortAndLong, help: "Also print, on stderr, the request line and headers, each redirect and challenge, the response head and the transfer metrics.")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Fail with exit status 22 on an HTTP status >= 400, printing no body (curl's --fail).")
    var fail = false

    @Flag(help: "Send 'Accept: application/json' (and JSON as the -d body type); print one JSON object: status, headers, body (parsed JSON or text), metrics, error.")
    var json = false
}
