import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request of `get`, `post` or `put`: an `HTTPRequestOperation` with every
/// option applied, run to its end on the calling thread, then printed by
/// `ResponsePrinter`. `run()` returns the exit status.
struct SingleRequest {
    /// The request as the subcommand built it (method, URL, body).
    let request: URLRequest
    let options: RequestOptions
    let tls: TLSOptions
    let output: ResponseOptions
    /// `get --resume`: the body goes to the output file through a partial file
    /// that a later run continues.
    var resumes = false

    func run() throws -> Int32 {
        // -o FILE, -O's name, or nil: stdout (no -o, or `-o -`).
        let path = try output.file(for: self.request.url)
        let policy = try tls.securityPolicy()
        let certificate = try tls.clientCertificate()
        var request = self.request
        options.apply(to: &request)
        if output.json, request.value(forHTTPHeaderField: "Accept") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Accept")
        }
        // --resume: the body goes to a partial file that becomes `path` once complete.
        let partial = resumes ? path.map { PartialDownload(path: $0) } : nil
        let operation = try partial?.makeOperation(for: request) ?? HTTPRequestOperation(request: request)
        let continued = PartialDownload.continues(operation)
        // The tool judges the status itself (-f/--fail): every status is a response.
        operation.responseSerializer.acceptableStatusCodes = nil
        operation.securityPolicy = policy
        operation.clientCertificate = certificate
        let redirectLimit = options.apply(to: operation)
        operation.completionQueue = callbackQueue
        if let path, !resumes {
            // Nothing touches the path before the first byte of an accepted response (see OutputFile):
            // not for a status -f rejects, nor for a redirect past --max-redirs.
            let failsOnHTTPError = output.fail
            operation.outputStream = OutputFile(path: path) { [weak operation] in
                if redirectLimit?.exceeded == true { return false }
                guard failsOnHTTPError, let response = operation?.response else { return true }
                return response.statusCode < 400
            }
        }

        let trace = output.verbose ? VerboseTrace() : nil
        trace?.attach(to: operation, redirectLimit: redirectLimit)
        trace?.sending(operation.request)
        if let trace { operation.logger = trace.logger }
        var bar: ProgressBar?
        if let path, !output.json {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let progress = ProgressBar(label: name)
            operation.setDownloadProgressBlock { bytes, total, expected in progress.update(total, of: expected, read: bytes) }
            bar = progress
        }
        operation.start()
        operation.waitUntilFinished()
        bar?.finish()
        // An answer that is not the entity (a redirect past --max-redirs, an error status) leaves no partial file.
        partial?.keepIfResumable(after: operation, continued: continued)
        // The cache writes behind the requests: make them before the process ends.
        CacheIndex.finishWrites(to: URLCache.shared)

        if let redirectLimit, redirectLimit.exceeded, operation.error == nil {
            throw ToolFailure(status: ExitStatus.tooManyRedirects, message: "maximum (\(redirectLimit.maximum)) redirects followed")
        }
        if let file = operation.outputStream as? OutputFile, operation.error == nil,
           !(output.fail && (operation.response?.statusCode ?? 0) >= 400) {
            // A successful empty body still makes (or empties) the output, as curl does.
            do { try file.createIfNeverOpened() } catch {
                throw ToolFailure(status: ExitStatus.writeError, message: error.localizedDescription)
            }
        }
        let exchange = Exchange(operation, bodyInFile: path != nil)
        trace?.finished(exchange)
        return ResponsePrinter(options: output, resumes: resumes).report(exchange)
    }
}

/// What one request came to, read once from its finished operation.
struct Exchange {
    /// The URL of the final hop (after redirects), or the request's.
    let url: URL?
    let response: HTTPURLResponse?
    /// The body kept in memory; nil when it went to a file.
    let body: Data?
    /// The transport error (the status is judged separately).
    let error: Error?
    let metrics: TransferMetrics?
    /// The final head as it arrived (nil for an answer from the cache).
    let receivedHead: ReceivedResponse?
    /// The 304 that confirmed the cached answer, if one did.
    let revalidationHead: ReceivedResponse?
    /// The cached answer's head as received when it was stored (nil for a
    /// received answer, or an entry stored without it).
    let storedHead: ReceivedResponse?

    init(_ operation: HTTPRequestOperation, bodyInFile: Bool) {
        response = operation.response
        url = response?.url ?? operation.request.url
        body = bodyInFile ? nil : operation.responseData
        error = operation.error
        metrics = operation.metrics
        receivedHead = operation.receivedHead
        revalidationHead = operation.revalidationHead
        storedHead = operation.storedHead
    }

    /// "HTTP/1.1", "HTTP/2": from the metrics, HTTP/1.1 when they do not say.
    var httpVersion: String {
        guard let version = metrics?.httpVersion, !version.isEmpty else { return "HTTP/1.1" }
        return version
    }
}
