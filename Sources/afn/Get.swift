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
        // RFC 9110 §9.1: a method is a token; anything else would be written into the request line as is.
        let tokenSymbols = Set("!#$%&'*+-.^_`|~".utf8)
        let isToken = !method.isEmpty && method.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || tokenSymbols.contains(byte)
        }
        guard isToken else { throw ValidationError("not an HTTP method (a token: letters, digits and !#$%&'*+-.^_`|~): \(method.debugDescription)") }
    }

    func run() throws {
        try exiting {
            let urlRequest = try RequestOptions.makeRequest(method: method.uppercased(), url: url)
            return try SingleRequest(request: urlRequest, options: request, tls: tls, output: output, resumes: resume).run()
        }
    }
}
