import ArgumentParser
import Foundation

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

    /// `-o` names a file to write into; a directory is a usage error, never replaced.
    func validate() throws {
        if let output { try OutputPath.refuseDirectory(output) }
    }
}

/// Checks on an `-o/--output` path made before any request is sent.
enum OutputPath {
    /// A directory (or a symlink to one) cannot be the output: the tool would
    /// have to replace it, and never does.
    static func refuseDirectory(_ path: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ValidationError("--output \(path) is a directory; name a file to write the body to")
        }
    }
}
