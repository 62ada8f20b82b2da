import ArgumentParser
import Foundation

/// `afn post URL`: one POST with a raw body (`-d`) or a multipart form
/// (`-F`), printed as `afn get` prints its response.
struct Post: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send a body (-d) or a multipart form (-F) with POST.",
        discussion: BodyOptions.discussion
    )

    @Argument(help: "The URL to send to.") var url: String
    @OptionGroup(title: "Body") var body: BodyOptions
    @OptionGroup(title: "Output") var output: ResponseOptions
    @OptionGroup(title: "Request") var request: RequestOptions
    @OptionGroup(title: "TLS") var tls: TLSOptions

    func validate() throws {
        try RequestOptions.validateURL(url)
        // -O's name is checked before anything is sent.
        _ = try output.file(for: URL(string: RequestOptions.withScheme(url)))
    }

    func run() throws {
        try exiting {
            let built = try body.makeRequest(method: "POST", url: url, json: output.json)
            return try SingleRequest(request: built, options: request, tls: tls, output: output).run()
        }
    }
}
