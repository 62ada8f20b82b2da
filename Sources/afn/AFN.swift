import AFNetworking
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn`: a command-line HTTP client built on AFNetworking's operations and session manager.
@main
struct AFN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "afn",
        abstract: "An HTTP client built on AFNetworking for Linux.",
        subcommands: [Get.self, Download.self, Demo.self, Reach.self]
    )
}

/// Where every block of the tool runs: the main thread only waits.
let callbackQueue = DispatchQueue(label: "afn.callbacks")

struct Get: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Fetch one URL; the body goes to stdout or a file.")

    @Argument(help: "The URL to fetch.") var url: String
    @Option(name: .shortAndLong, help: "Write the body to this file instead of stdout.") var output: String?
    @Option(name: [.customShort("H"), .long], help: "Extra header, 'Name: value' (repeatable).") var header: [String] = []
    @Option(name: .shortAndLong, help: "HTTP method.") var method = "GET"
    @Option(help: "Idle timeout in seconds.") var timeout: Double = 60
    @Flag(help: "With --output: continue a download an earlier run left unfinished (survives restarts).") var resume = false

    func run() throws {
        guard let target = URL(string: url), let scheme = target.scheme, ["http", "https"].contains(scheme.lowercased()) else {
            throw ValidationError("not an http(s) URL: \(url)")
        }
        var request = URLRequest(url: target)
        request.httpMethod = method.uppercased()
        request.timeoutInterval = timeout
        for line in header {
            guard let colon = line.firstIndex(of: ":") else { throw ValidationError("header must read 'Name: value': \(line)") }
            request.setValue(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces),
                             forHTTPHeaderField: String(line[..<colon]))
        }
        let operation: HTTPRequestOperation
        if resume {
            guard let output else { throw ValidationError("--resume needs --output") }
            operation = try HTTPRequestOperation(request: request, resumingDownloadTo: URL(fileURLWithPath: output))
        } else {
            operation = HTTPRequestOperation(request: request)
            if let output { operation.outputStream = OutputStream(toFileAtPath: output, append: false) }
        }
        operation.completionQueue = callbackQueue
        let bar = ProgressBar(label: target.lastPathComponent.isEmpty ? target.host ?? "body" : target.lastPathComponent)
        operation.setDownloadProgressBlock { _, total, expected in bar.update(total, of: expected) }
        operation.start()
        operation.waitUntilFinished()
        bar.finish()
        if let error = operation.error {
            FileHandle.standardError.write(Data("afn: \(error.localizedDescription)\n".utf8))
            throw ExitCode(1)
        }
        if output == nil, let data = operation.responseData { FileHandle.standardOutput.write(data) }
    }
}
