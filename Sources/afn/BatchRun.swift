import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The outcome of one line of a batch.
struct BatchResult: Sendable {
    let url: String
    let id: String
    let status: Int?
    let bytes: Int64
    let seconds: TimeInterval
    /// done, resumed-as-done, failed, skipped, cancelled.
    let outcome: String
    let file: String?
    let resumedFrom: Int64?
    let error: String?
    let exitCode: Int32
}

/// Runs a batch through the library's `ResumableBatch`: the lines become
/// entries (the request options on each request and operation), progress is
/// redrawn as entries end, and the report becomes one row per line.
struct BatchRun {
    let lines: [ResumableBatchList.Line]
    /// The list's bytes: the manifest records their SHA-256.
    let content: Data
    let jobs: Int
    let request: RequestOptions
    let tls: TLSOptions
    let outputDirectory: String?
    let manifest: String?
    let bytesPerSecond: Int64

    func run() throws -> [BatchResult] {
        let policy = try tls.securityPolicy()
        let certificate = try tls.clientCertificate()
        let entries = lines.map(entry(for:))
        let batch: ResumableBatch
        do {
            batch = try ResumableBatch(entries: entries, outputDirectory: outputDirectory.map { URL(fileURLWithPath: $0) },
                                       manifest: manifest.map { URL(fileURLWithPath: $0) }, listContent: content)
        } catch let error as ResumableBatchError {
            throw ToolFailure(status: ExitStatus.batchRefused, message: error.message)
        }
        batch.maxConcurrentRequestCount = jobs
        batch.maximumDownloadBytesPerSecond = bytesPerSecond
        let options = request
        batch.configureOperation = { operation, _ in
            operation.securityPolicy = policy
            operation.clientCertificate = certificate
            _ = options.apply(to: operation)
        }
        let tally = BatchTally(count: entries.count)
        let indexOfID = Dictionary(uniqueKeysWithValues: entries.enumerated().map { ($1.id, $0) })
        let lines = self.lines
        batch.entryFinished = { result in
            // The progress line counts what did not succeed; the final rows say why.
            guard let index = indexOfID[result.entry.id] else { return }
            tally.record(Self.row(result, line: lines[index], exitCode: result.outcome.isSuccess ? ExitStatus.success : ExitStatus.other),
                         at: index)
        }
        let finished = DispatchSemaphore(value: 0)
        let outcome = LockedState<Result<ResumableBatchReport, ResumableBatchError>?>(nil)
        batch.start(queue: callbackQueue) { result in
            outcome.withLock { $0 = result }
            finished.signal()
        }
        finished.wait()
        tally.finishProgress()
        switch outcome.value {
        case .success(let report)?:
            return rows(of: report)
        case .failure(let error)?:
            throw ToolFailure(status: ExitStatus.writeError, message: error.message)
        case nil:
            throw ToolFailure(status: ExitStatus.other, message: "the batch ended without a report")
        }
    }

    /// The line as an entry: a GET with the request options; a line that is
    /// not an http(s) URL gets a request the batch never sends (it fails the
    /// entry as `unsupportedURL`, reported with status 3 as before).
    private func entry(for line: ResumableBatchList.Line) -> ResumableBatchEntry {
        guard RequestOptions.isHTTPURL(line.url), var urlRequest = try? RequestOptions.makeRequest(method: "GET", url: line.url) else {
            return ResumableBatchEntry(id: line.name, request: URLRequest(url: URL(fileURLWithPath: "/dev/null")),
                                       dependencies: line.after, outputPath: line.outputPath)
        }
        request.apply(to: &urlRequest)
        // Saved bodies neither read nor fill get's response cache (as `afn download`).
        if outputDirectory != nil { urlRequest.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData }
        return ResumableBatchEntry(id: line.name, request: urlRequest, dependencies: line.after, outputPath: line.outputPath)
    }

    /// One row per line, in input order; a skipped line's status is the one
    /// of the line whose failure it followed.
    private func rows(of report: ResumableBatchReport) -> [BatchResult] {
        var statusOfID: [String: Int32] = [:]
        func status(of result: ResumableBatchEntryResult) -> Int32 {
            if let known = statusOfID[result.entry.id] { return known }
            let status: Int32
            switch result.outcome {
            case .done, .alreadyDone: status = ExitStatus.success
            case .failed(let error): status = Self.status(of: error, statusCode: result.statusCode)
            case .cancelled: status = ExitStatus.other
            // Dependencies end before their dependents: the chain ends at a failure.
            case .skipped(let because): status = report[because].map(status(of:)) ?? ExitStatus.other
            }
            statusOfID[result.entry.id] = status
            return status
        }
        return zip(report.results, lines).map { result, line in Self.row(result, line: line, exitCode: status(of: result)) }
    }

    private static func row(_ result: ResumableBatchEntryResult, line: ResumableBatchList.Line, exitCode: Int32) -> BatchResult {
        let outcome: String, error: String?
        switch result.outcome {
        case .done: (outcome, error) = ("done", nil)
        case .alreadyDone: (outcome, error) = ("resumed-as-done", nil)
        case .cancelled: (outcome, error) = ("cancelled", "cancelled")
        case .skipped(let because): (outcome, error) = ("skipped", "skipped: '\(because)' did not succeed")
        case .failed(let failure):
            outcome = "failed"
            if let status = result.statusCode, status >= 400 {
                error = "HTTP \(status)"
            } else if let batchError = failure as? ResumableBatchError {
                error = batchError.message
            } else {
                error = ResponsePrinter.describe(failure)
            }
        }
        return BatchResult(url: line.url, id: result.entry.id, status: result.statusCode, bytes: result.bytesReceived,
                           seconds: result.seconds, outcome: outcome, file: result.file?.path, resumedFrom: result.resumedFrom,
                           error: error, exitCode: exitCode)
    }

    /// A failed line's status: 22 for an HTTP error status, 3 not a URL, 23
    /// a file that cannot be written (or is not afn's to write), else the
    /// transport error's.
    private static func status(of error: any Error, statusCode: Int?) -> Int32 {
        if let statusCode, statusCode >= 400 { return ExitStatus.httpError }
        if let batchError = error as? ResumableBatchError {
            if case .unsupportedURL = batchError { return ExitStatus.badURL }
            return ExitStatus.writeError
        }
        if (error as NSError).domain == NSPOSIXErrorDomain { return ExitStatus.writeError }
        return ExitStatus.status(for: error)
    }
}
