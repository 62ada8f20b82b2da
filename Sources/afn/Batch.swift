import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn batch`: GETs every URL of a list, `-j` at a time, on an
/// `OperationQueue`; a one-line progress on stderr while they run, then a
/// summary (a table, or JSON lines with `--json`) on stdout in input order.
struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch many URLs concurrently and summarize the outcome.",
        discussion: """
            URLs come one per line from --file FILE or stdin (a URL without a scheme is http); blank lines and lines starting with # are skipped. \
            Bodies are counted, not printed. A URL fails on a transport error or an HTTP status >= 400. \
            Exit status: 0 when every URL succeeded, otherwise the status (see 'afn --help') of the first failed URL in input order.
            """
    )

    // No short name: -f is --fail in every command (curl's meaning).
    @Option(name: .customLong("file"), help: ArgumentHelp("Read the URLs from this file ('-': stdin, the default).", valueName: "file"))
    var file: String?

    @Flag(name: .shortAndLong, help: "Accepted for curl's spelling: a batch always fails a URL on an HTTP status >= 400 (exit 22).")
    var fail = false

    @Option(name: [.customShort("j"), .customLong("jobs")], help: "How many requests run at once.")
    var jobs = 4

    @Flag(help: "Print the summary as JSON lines (url, status, bytes, time in seconds, error, exitCode).")
    var json = false

    @OptionGroup(title: "Request") var request: RequestOptions
    @OptionGroup(title: "TLS") var tls: TLSOptions

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("-j must be at least 1") }
        if let file, file != "-", !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("cannot read the URL list \(file)")
        }
    }

    func run() throws {
        try exiting {
            let urls = try readURLs()
            guard !urls.isEmpty else { throw ToolFailure(status: ExitStatus.usage, message: "no URLs to fetch") }
            let results = try BatchRun(urls: urls, jobs: jobs, request: request, tls: tls).run()
            BatchReport.print(results, json: json)
            return results.first { $0.exitCode != ExitStatus.success }?.exitCode ?? ExitStatus.success
        }
    }

    /// The non-blank, non-comment lines of the list.
    private func readURLs() throws -> [String] {
        let data: Data
        if let file, file != "-" {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw ToolFailure(status: ExitStatus.readError, message: "cannot read \(file)")
            }
            data = contents
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        return String(decoding: data, as: UTF8.self)
            .split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }
}

/// The outcome of one URL of a batch.
struct BatchResult: Sendable {
    let url: String
    let status: Int?
    let bytes: Int
    let seconds: TimeInterval
    let error: String?
    let exitCode: Int32
}

/// Runs a batch: one operation per URL on a queue limited to `jobs`, results
/// collected (and progress redrawn) on `callbackQueue`.
private struct BatchRun {
    let urls: [String]
    let jobs: Int
    let request: RequestOptions
    let tls: TLSOptions

    func run() throws -> [BatchResult] {
        let policy = try tls.securityPolicy()
        let certificate = try tls.clientCertificate()
        let tally = BatchTally(count: urls.count)
        let queue = OperationQueue()
        queue.name = "afn.batch"
        queue.maxConcurrentOperationCount = jobs
        for (index, url) in urls.enumerated() {
            guard RequestOptions.isHTTPURL(url), var urlRequest = try? RequestOptions.makeRequest(method: "GET", url: url) else {
                tally.record(BatchResult(url: url, status: nil, bytes: 0, seconds: 0, error: "not an http(s) URL",
                                         exitCode: ExitStatus.badURL), at: index)
                continue
            }
            request.apply(to: &urlRequest)
            let operation = TimedRequestOperation(request: urlRequest)
            operation.responseSerializer.acceptableStatusCodes = nil
            operation.securityPolicy = policy
            operation.clientCertificate = certificate
            request.apply(to: operation)
            operation.completionQueue = callbackQueue
            let finish: @Sendable (HTTPRequestOperation) -> Void = { finished in
                tally.record(Self.result(of: finished, url: url), at: index)
            }
            operation.setCompletionBlockWithSuccess({ finished, _ in finish(finished) }, failure: { finished, _ in finish(finished) })
            queue.addOperation(operation)
        }
        queue.waitUntilAllOperationsAreFinished()
        tally.finishProgress()
        return tally.results
    }

    private static func result(of operation: HTTPRequestOperation, url: String) -> BatchResult {
        let status = operation.response?.statusCode
        let seconds = (operation as? TimedRequestOperation)?.elapsed ?? 0
        let bytes = operation.responseData?.count ?? 0
        if let error = operation.error {
            return BatchResult(url: url, status: status, bytes: bytes, seconds: seconds,
                               error: ResponsePrinter.describe(error), exitCode: ExitStatus.status(for: error))
        }
        if let status, status >= 400 {
            return BatchResult(url: url, status: status, bytes: bytes, seconds: seconds,
                               error: "HTTP \(status)", exitCode: ExitStatus.httpError)
        }
        return BatchResult(url: url, status: status, bytes: bytes, seconds: seconds, error: nil, exitCode: ExitStatus.success)
    }
}

/// An operation that remembers when its queue started it, for the time column.
private final class TimedRequestOperation: HTTPRequestOperation, @unchecked Sendable {
    // @unchecked: the only added state is a LockedState.
    private let startedAt = LockedState<Date?>(nil)

    override func start() {
        startedAt.withLock { $0 = $0 ?? Date() }
        super.start()
    }

    /// Seconds from the start until now (called when it has finished).
    var elapsed: TimeInterval {
        startedAt.value.map { Date().timeIntervalSince($0) } ?? 0
    }
}
