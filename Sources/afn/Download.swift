import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn download`: one restart-proof download (`PartialDownload`, the
/// library's `resumingDownloadTo`). The body goes to `<output>.partial`,
/// which any later run with the same output continues — after Ctrl-C,
/// SIGTERM or a SIGKILL alike — and which becomes the output once complete.
struct Download: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download a URL to a file; an interrupted download continues on the next run.",
        discussion: """
            The body is written to <output>.partial (the server's validator and the length in <output>.partial.json) \
            and becomes <output> once complete. A run that stops early (Ctrl-C, SIGTERM, killed outright, a crash) \
            leaves both, and the next run with the same output continues with a Range request validated by If-Range, \
            the progress bar starting where it stopped; for another URL, a changed file, or a server that gave no \
            validator it starts over. A run that ends with part of the file stored (Ctrl-C, SIGTERM, a broken connection) \
            also writes <output>.afnresume, saying what waits to be continued; it goes once the file is complete. \
            An answer that is not the file (an HTTP error status, a redirect not followed) leaves no file behind. \
            Exit status: 0 done, 130 interrupted (run again to continue), 1 for an HTTP error status or another failure, \
            otherwise the transport error's status as listed by 'afn --help' (6, 7, 18, 28, 35, 47, 56, 58, 60, ...).
            """
    )

    @Argument(help: "The URL to download.") var url: String
    @Option(name: .shortAndLong, help: "Where to store the file (replaced when the download completes; never a directory).") var output: String?
    @Flag(name: [.customShort("O"), .customLong("remote-name")],
          help: "Store the file under the name the URL's last path segment gives, in the current directory (curl's -O).")
    var remoteName = false
    @Option(name: .customShort("C"), help: CurlSpelling.continueAtHelp) var continueAt: String?
    @Flag(name: .shortAndLong, help: "Accepted for curl's spelling: an HTTP error status always fails a download (exit 1), saving nothing.")
    var fail = false
    @OptionGroup(title: "Request") var options: RequestOptions
    @OptionGroup(title: "TLS") var tls: TLSOptions

    func validate() throws {
        try RequestOptions.validateURL(url)
        try CurlSpelling.validateContinueAt(continueAt)
        try OutputPath.refuseDirectory(try destinationPath())
    }

    /// `-o`'s path or `-O`'s name: always a file (a download is continued
    /// from what it wrote, which stdout cannot give back).
    private func destinationPath() throws -> String {
        if remoteName {
            if output != nil { throw ValidationError("-O and -o both name the output; give one") }
            return try OutputPath.remoteName(ofArgument: url)
        }
        guard let output else { throw ValidationError("name the file to store: -o FILE, or -O for the URL's file name") }
        if output == "-" { throw ValidationError("download stores a file it can continue, not stdout; use 'afn get URL' for stdout") }
        return output
    }

    func run() throws {
        try exiting { try download() }
    }

    private func download() throws -> Int32 {
        let output = try destinationPath()
        let partial = PartialDownload(path: output)
        let marker = URL(fileURLWithPath: output + ".afnresume")
        var request = try RequestOptions.makeRequest(method: "GET", url: url)
        options.apply(to: &request)
        // A download neither reads nor fills get's response cache (as a session download never did).
        request.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData
        let operation = try partial.makeOperation(for: request)
        let continued = PartialDownload.continues(operation)
        // Only the entity is a success; any other status fails the serializer: exit 1, as before.
        operation.responseSerializer.acceptableStatusCodes = IndexSet([200, 206])
        operation.securityPolicy = try tls.securityPolicy()
        operation.clientCertificate = try tls.clientCertificate()
        let redirectLimit = options.apply(to: operation)
        operation.completionQueue = callbackQueue
        let target = operation.request.url
        let bar = ProgressBar(label: target.map { $0.lastPathComponent.isEmpty ? $0.host ?? "download" : $0.lastPathComponent } ?? "download")
        // Counts from the entity's first byte: the bar starts at what earlier runs stored.
        operation.setDownloadProgressBlock { bytes, total, expected in bar.update(total, of: expected, read: bytes) }

        let interrupted = Self.runInterruptibly(operation)
        bar.finish()
        let waiting = partial.keepIfResumable(after: operation, continued: continued)
        // Only afn's own note is written over or removed: anything else of
        // that name (a directory, a link, a user's file) stays as it is.
        let mayTouch = Self.isNote(marker) || !Self.exists(marker)
        if waiting {
            if mayTouch { try? Self.note(marker, url: target, partial: partial) }
        } else if Self.isNote(marker) {
            // Done, or nothing to continue: an older note is no longer true.
            try? FileManager.default.removeItem(at: marker)
        }

        if let redirectLimit, redirectLimit.exceeded {
            Console.error("maximum (\(redirectLimit.maximum)) redirects followed")
            return ExitStatus.tooManyRedirects
        }
        if interrupted {
            Console.error(waiting ? "interrupted; run the same command again to continue" : "interrupted")
            return ExitStatus.interrupted
        }
        if let error = operation.error {
            let hint = waiting ? " (\(partial.partialPath) kept; run again to continue)" : ""
            Console.error("\(ResponsePrinter.describe(error))\(hint)")
            // An HTTP error status fails the serializer's validation: status 1, as before.
            return ExitStatus.status(for: error)
        }
        return ExitStatus.success
    }

    /// Runs `operation` to its end; Ctrl-C or SIGTERM cancels it (its partial
    /// file stays). Returns whether a signal did.
    private static func runInterruptibly(_ operation: HTTPRequestOperation) -> Bool {
        let interrupted = LockedState(false)
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: callbackQueue)
            source.setEventHandler {
                interrupted.set(\.self, to: true)
                operation.cancel()
            }
            source.resume()
            sources.append(source)
        }
        operation.start()
        operation.waitUntilFinished()
        for source in sources { source.cancel() }
        return interrupted.value
    }

    /// Whether anything is at `url` (a dangling link included).
    private static func exists(_ url: URL) -> Bool {
        var info = stat()
        return lstat(url.path, &info) == 0
    }

    /// Whether `url` is a note afn wrote: a regular file (not a link) holding
    /// the note's JSON object and nothing else.
    private static func isNote(_ url: URL) -> Bool {
        var info = stat()
        guard lstat(url.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 64 * 1024,
              let data = FileManager.default.contents(atPath: url.path),
              let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else { return false }
        return Set(object.keys) == ["url", "partial", "bytes"]
    }

    /// `<output>.afnresume`: what a later run will continue — the URL, the
    /// partial file and how much of it is there — for a person or a script;
    /// afn itself continues from the partial file and its sidecar.
    private static func note(_ marker: URL, url: URL?, partial: PartialDownload) throws {
        let bytes = (try? FileManager.default.attributesOfItem(atPath: partial.partialPath))?[.size] as? Int ?? 0
        let object: [String: Any] = ["url": url?.absoluteString ?? "", "partial": partial.partialPath, "bytes": bytes]
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).write(to: marker, options: .atomic)
    }
}
