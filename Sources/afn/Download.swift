import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn download`: one download through the session layer (`URLSessionManager`).
/// Ctrl-C or SIGTERM cancels it producing resume data, saved next to the
/// output as `<output>.afnresume`; the next run with the same output continues
/// from there (a Range request validated by If-Range).
struct Download: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download a URL to a file; an interrupted download continues on the next run.",
        discussion: """
            Ctrl-C saves resume data in <output>.afnresume; the progress bar of the next run starts where it stopped. \
            A run killed outright (SIGKILL) saves none and starts over; its partial file in the temporary directory \
            is removed by a later download once untouched for 24 hours. \
            Exit status: 0 done, 130 interrupted (resume data saved), 1 for an HTTP error status or another failure, \
            otherwise the transport error's status as listed by 'afn --help' (6, 7, 28, 35, 56, 58, 60, ...).
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
        let destination = URL(fileURLWithPath: output)
        let resumeFile = URL(fileURLWithPath: output + ".afnresume")
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = options.timeout
        if let maxTime = options.maxTime { configuration.timeoutIntervalForResource = maxTime }
        configuration.urlCache = nil
        let manager = URLSessionManager(sessionConfiguration: configuration)
        manager.completionQueue = callbackQueue
        manager.securityPolicy = try tls.securityPolicy()
        manager.clientCertificate = try tls.clientCertificate()
        manager.retryPolicy = options.retryPolicy
        let redirectLimit = options.maxRedirs.map(RedirectLimit.init(maximum:))
        if let redirectLimit {
            manager.setTaskWillPerformHTTPRedirectionBlock { _, _, _, proposed in redirectLimit.follow(proposed) }
        }
        let target = URL(string: RequestOptions.withScheme(url))!
        var request = URLRequest(url: target)
        options.apply(to: &request)
        let bar = ProgressBar(label: target.lastPathComponent.isEmpty ? target.host ?? "download" : target.lastPathComponent)
        manager.setDownloadTaskDidResumeBlock { _, _, offset, expected in bar.start(at: offset, of: expected) }

        var outcome = DownloadRun(manager: manager, bar: bar, destination: destination).start(resumeData: try? Data(contentsOf: resumeFile),
                                                                                              request: request)
        if let error = outcome.error as NSError?, error.domain == NSURLErrorDomain, error.code == NSURLErrorCannotDecodeRawData {
            // Resume data from another version, or its partial file is gone: start over.
            Console.error("cannot continue the earlier download (\(error.localizedDescription)); starting over")
            try? FileManager.default.removeItem(at: resumeFile)
            outcome = DownloadRun(manager: manager, bar: bar, destination: destination).start(resumeData: nil, request: request)
        }
        bar.finish()
        manager.invalidateSessionCancelingTasks(true)
        if let resumeData = outcome.resumeData {
            try resumeData.write(to: resumeFile, options: .atomic)
        } else if outcome.error == nil {
            try? FileManager.default.removeItem(at: resumeFile)
        }
        if let redirectLimit, redirectLimit.exceeded {
            Console.error("maximum (\(redirectLimit.maximum)) redirects followed")
            return ExitStatus.tooManyRedirects
        }
        if outcome.interrupted {
            Console.error("interrupted; run the same command again to continue")
            return ExitStatus.interrupted
        }
        if let error = outcome.error {
            let hint = outcome.resumeData == nil ? "" : " (resume data saved; run again to continue)"
            Console.error("\(ResponsePrinter.describe(error))\(hint)")
            // An HTTP error status fails the serializer's validation: status 1, as before.
            return ExitStatus.status(for: error)
        }
        return ExitStatus.success
    }
}

/// One attempt: a download task, the signals that interrupt it, and its result.
private struct DownloadRun {
    struct Outcome: Sendable {
        var error: Error?
        var resumeData: Data?
        var interrupted = false
    }

    let manager: URLSessionManager
    let bar: ProgressBar
    let destination: URL

    func start(resumeData: Data?, request: URLRequest) -> Outcome {
        let result = LockedState(Outcome())
        let done = DispatchSemaphore(value: 0)
        let destination = self.destination
        let bar = self.bar
        let progress: @Sendable (Progress) -> Void = { bar.update($0.completedUnitCount, of: $0.totalUnitCount) }
        let serializer = manager.responseSerializer
        // The manager's block, not the task's destination: it can decline the
        // move (nil), so an error page (which fails the serializer's status
        // check) never replaces the file at the output; it is deleted instead.
        manager.setDownloadTaskDidFinishDownloadingBlock { _, task, _ in
            guard (try? serializer.validate(task.response as? HTTPURLResponse, data: nil)) != nil else { return nil }
            // The finished file replaces an older file, never a directory (removeItem would
            // delete it with everything in it): one made since `validate()` makes the move fail.
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: destination.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                try? FileManager.default.removeItem(at: destination)
            }
            return destination
        }
        let completion: @Sendable (URLResponse, URL?, Error?) -> Void = { _, _, error in
            result.withLock { outcome in
                outcome.error = error
                if outcome.resumeData == nil {
                    outcome.resumeData = (error as NSError?)?.userInfo[URLSessionDownloadTaskResumeData] as? Data
                }
            }
            done.signal()
        }
        let task = resumeData.map {
            manager.downloadTask(withResumeData: $0, progress: progress, destination: nil, completionHandler: completion)
        } ?? manager.downloadTask(with: request, progress: progress, destination: nil, completionHandler: completion)

        // Ctrl-C / SIGTERM: cancel, keeping what arrived as resume data.
        var sources: [DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: callbackQueue)
            source.setEventHandler {
                result.withLock { $0.interrupted = true }
                task.cancel(byProducingResumeData: { data in result.withLock { $0.resumeData = data } })
            }
            source.resume()
            sources.append(source)
        }
        task.resume()
        done.wait()
        for source in sources { source.cancel() }
        return result.value
    }
}
