import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn get URL`: one request (GET unless `-X`, HEAD with `-I`); the body goes
/// to stdout or a file (`-o FILE`, `-O`), and with `--resume` (`-C -`) a
/// download continues where an earlier run (even a killed one) stopped.
struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch one URL; the body goes to stdout or a file.",
        discussion: "Without -f/--fail an HTTP error status still exits 0 and prints the body. See 'afn --help' for the exit statuses."
    )

    @Argument(help: "The URL to fetch.") var url: String
    @Option(name: [.short, .customShort("X"), .long], help: "HTTP method.") var method = "GET"
    @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and print the status line and headers (curl's -I).") var head = false
    @Flag(help: "With -o/-O: continue a download an earlier run left unfinished (survives restarts).") var resume = false
    @Option(name: .customShort("C"), help: CurlSpelling.continueAtHelp) var continueAt: String?
    @OptionGroup(title: "Output") var output: ResponseOptions
    @OptionGroup(title: "Request") var request: RequestOptions
    @OptionGroup(title: "TLS") var tls: TLSOptions

    /// `--resume`, or curl's `-C -`.
    private var resumes: Bool { resume || continueAt != nil }

    func validate() throws {
        try RequestOptions.validateURL(url)
        try CurlSpelling.validateContinueAt(continueAt)
        let file = try output.file(for: URL(string: RequestOptions.withScheme(url)))
        if resumes, file == nil { throw ValidationError("--resume (-C -) needs a file to continue: -o FILE or -O") }
        if head, !["GET", "HEAD"].contains(method.uppercased()) { throw ValidationError("-I sends HEAD; it cannot be combined with -X \(method)") }
        // RFC 9110 §9.1: a method is a token; anything else would be written into the request line as is.
        let tokenSymbols = Set("!#$%&'*+-.^_`|~".utf8)
        let isToken = !method.isEmpty && method.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || tokenSymbols.contains(byte)
        }
        guard isToken else { throw ValidationError("not an HTTP method (a token: letters, digits and !#$%&'*+-.^_`|~): \(method.debugDescription)") }
    }

    func run() throws {
        try exiting {
            let urlRequest = try RequestOptions.makeRequest(method: head ? "HEAD" : method.uppercased(), url: url)
            var shown = output
            // -I prints the head as -i does (a HEAD answer has no body to follow it).
            if head { shown.include = true }
            return try SingleRequest(request: urlRequest, options: request, tls: tls, output: shown, resumes: resumes).run()
        }
    }
}
