import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn get URL`: one request (GET unless `-X`); the body goes to stdout or
/// `-o FILE`, and with `--resume` a download continues where an earlier run
/// (even a killed one) stopped.
struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch one URL; the body goes to stdout or a file.",
        discussion: "Without -f/--fail an HTTP error status still exits 0 and prints the body. See 'afn --help' for the exit statuses."
    )

    @Argument(help: "The URL to fetch.") var url: String
    @Option(name: [.short, .customShort("X"), .long], help: "HTTP method.") var method = "GET"
    @Flag(help: "With --output: continue a download an earlier run left unfinished (survives restarts).") var resume = false
    @OptionGroup(title: "Output") var output: ResponseOptions
    @OptionGroup(title: "Request") var request: RequestOptions
    @OptionGroup(title: "TLS") var tls: TLSOptions

    func validate() throws {
        try RequestOptions.validateURL(url)
        if resume, output.output == nil { throw ValidationError("--resume needs --output") }
        guard !method.isEmpty, !method.contains(where: \.isWhitespace) else { throw ValidationError("not an HTTP method: \(method)") }
    }

    func run() throws {
        try exiting {
            let urlRequest = try RequestOptions.makeRequest(method: method.uppercased(), url: url)
            return try SingleRequest(request: urlRequest, options: request, tls: tls, output: output, resumes: resume).run()
        }
    }
}
