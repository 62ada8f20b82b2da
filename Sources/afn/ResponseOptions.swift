import ArgumentParser
import Foundation

/// What the single-request commands (`get`, `post`, `put`) print and when
/// an HTTP error status fails them.
struct ResponseOptions: ParsableArguments {
    @Option(name: .shortAndLong, help: "Write the body to this file instead of stdout ('-': stdout, as curl).")
    var output: String?

    @Flag(name: [.customShort("O"), .customLong("remote-name")],
          help: "Write the body to the file the URL's last path segment names, in the current directory (curl's -O); as with -o, an existing file is written over.")
    var remoteName = false

    @Flag(name: [.short, .customLong("include")], help: "Print the status line and headers (to stdout, lines ended by CRLF as curl prints them) before the body.")
    var include = false

    @Flag(name: .shortAndLong, help: "Also print, on stderr, the request line and headers, each redirect and challenge, each response head when it arrives and the transfer metrics (with -s too).")
    var verbose = false

    @Flag(name: .shortAndLong, help: "Fail with exit status 22 on an HTTP status >= 400, printing no body (curl's --fail).")
    var fail = false

    @Flag(help: "Send 'Accept: application/json' (and JSON as the -d body type); print one JSON object: status, headers, body (parsed JSON or text), metrics, error.")
    var json = false

    /// `-o` names a file to write into; a directory is a usage error, never replaced.
    func validate() throws {
        if remoteName, output != nil { throw ValidationError("-O and -o both name the output; give one") }
        if let output, output != "-" { try OutputPath.refuseDirectory(output) }
    }

    /// The file the body of `url` goes to: `-o`'s path, or the name `-O`
    /// takes from the URL; nil for stdout (neither, or `-o -`).
    func file(for url: URL?) throws -> String? {
        if remoteName { return try OutputPath.remoteName(of: url) }
        guard let output, output != "-" else { return nil }
        return output
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

    /// `-O`: the last segment of the URL's path as the URL writes it (curl
    /// does not decode it either, so it never holds a `/`). A URL whose path
    /// ends in `/`, `.` or `..` names no file: a usage error, not a write to
    /// the current or the parent directory.
    static func remoteName(of url: URL?) throws -> String {
        let path = url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: true)?.percentEncodedPath } ?? ""
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard !name.isEmpty, name != ".", name != ".." else {
            throw ValidationError("-O: the URL's path (\(path.isEmpty ? "/" : path)) ends in no file name; name the output with -o FILE")
        }
        try refuseDirectory(name)
        return name
    }

    /// `-O`'s name for a URL argument as typed (scheme-less: http).
    static func remoteName(ofArgument url: String) throws -> String {
        try remoteName(of: URL(string: RequestOptions.withScheme(url)))
    }
}
