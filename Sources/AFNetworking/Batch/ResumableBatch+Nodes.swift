@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The batch as a graph: one builder node per entry, which looks at the
/// manifest and the files when the entry may start and makes its operation
/// (or none, for an entry already done); the operation's end updates the manifest.
extension ResumableBatch {
    func runGraph() {
        let settings = state.withLock { $0.settings }
        let graph = RequestGraph()
        graph.name = "ResumableBatch"
        graph.maxConcurrentRequestCount = settings.maxConcurrentRequestCount
        graph.maximumDownloadBytesPerSecond = settings.maximumDownloadBytesPerSecond
        var nodeOfID: [String: RequestGraphNode] = [:]
        for index in order {
            let entry = entries[index]
            do {
                nodeOfID[entry.id] = try graph.add(name: entry.id, dependencies: entry.dependencies.compactMap { nodeOfID[$0] }) { [self] _ in
                    try makeOperation(index)
                }
            } catch {
                // `order` puts dependencies first and they are this graph's nodes: add cannot refuse one.
                preconditionFailure("the batch's graph refused \(entry.id): \(error)")
            }
        }
        let nodes = entries.map { nodeOfID[$0.id] }
        graph.setCompletionBlock(queue: callbackQueue) { [self] report in graphFinished(report, nodes: nodes) }
        let cancelled = state.withLock { state in
            state.graph = graph
            return state.cancelled
        }
        // Cancelled first: no builder runs, nothing is sent (the graph still reports at start).
        if cancelled { graph.cancel() }
        graph.start()
    }

    /// The entry's operation, made when its dependencies have succeeded.
    private func makeOperation(_ index: Int) throws -> Operation {
        let entry = entries[index]
        guard entry.isFetchable else { throw ResumableBatchError.unsupportedURL(id: entry.id) }
        let record = state.withLock { $0.manifest.entries[entry.id] }
        guard let outputDirectory, let file = files[index] else {
            if record?.state == .done { return alreadyDone(index) }
            return prepared(HTTPRequestOperation(request: entry.request), index: index)
        }
        let components = try ResumableBatchPaths.components(of: file, id: entry.id)
        try ResumableBatchPaths.makeParentDirectories(base: outputDirectory.path, components: components, id: entry.id, path: file)
        let destination = outputDirectory.path + "/" + file
        let partial = destination + ".partial"
        if ResumableBatchPaths.exists(destination) {
            switch record?.state {
            case .done?:
                return alreadyDone(index)
            case .started? where !ResumableBatchPaths.exists(partial):
                // Its partial file became the file, and the process ended
                // before the manifest said so: done (the file was not there
                // when it started, or it would not have started).
                try? updateManifest { $0.done(entry.id, file: file) }
                return alreadyDone(index)
            default:
                throw ResumableBatchError.outputExists(id: entry.id, path: destination)
            }
        }
        // The library would empty a partial file without its sidecar to start over: never one it did not make.
        if let size = ResumableBatchPaths.fileSize(partial), size > 0, !ResumableBatchPaths.exists(partial + ".json") {
            throw ResumableBatchError.foreignPartialFile(id: entry.id, path: partial)
        }
        // On disk before the partial file is made: a later run knows the file is the batch's.
        try updateManifest { $0.started(entry.id, file: file) }
        let operation = try HTTPRequestOperation(request: entry.request, resumingDownloadTo: URL(fileURLWithPath: destination))
        if let range = operation.request.value(forHTTPHeaderField: "Range"),
           let offset = Int64(range.dropFirst("bytes=".count).prefix { $0 != "-" }) {
            state.withLock { $0.entries[index].resumedFrom = offset }
        }
        return prepared(operation, index: index)
    }

    /// An entry done in an earlier run: an operation that sends nothing.
    private func alreadyDone(_ index: Int) -> Operation {
        state.withLock { $0.entries[index].alreadyDone = true }
        return BlockOperation { [self] in
            callbackQueue.async { [self] in announce(index, result(index, .alreadyDone)) }
        }
    }

    /// The caller's settings, then the batch's: its completion queue and blocks, 2xx only.
    private func prepared(_ operation: HTTPRequestOperation, index: Int) -> Operation {
        let configure = state.withLock { state in
            state.entries[index].startedAt = Date()
            return state.settings.configureOperation
        }
        configure?(operation, entries[index])
        operation.responseSerializer.acceptableStatusCodes = IndexSet(200..<300)
        operation.completionQueue = callbackQueue
        operation.setCompletionBlockWithSuccess({ [self] finished, _ in operationEnded(index, finished) },
                                                failure: { [self] finished, _ in operationEnded(index, finished) })
        return operation
    }

    /// Records what the operation did; the manifest says done, or forgets a
    /// partial file that holds none of the entity (an error page, nothing).
    private func operationEnded(_ index: Int, _ operation: HTTPRequestOperation) {
        let entry = entries[index]
        let status = operation.response?.statusCode
        // By what the transfer did, not by isCancelled: a cancel that came
        // while a finished download was being put in place (Ctrl-C) changed
        // nothing, and forgetting that file would fail every later run.
        let succeeded = operation.error == nil
        let cancelled = (operation.error as NSError?).map { $0.domain == NSURLErrorDomain && $0.code == NSURLErrorCancelled } ?? false
        if succeeded {
            try? updateManifest { $0.done(entry.id, file: self.files[index]) }
        } else if let outputDirectory, let file = files[index] {
            let partial = outputDirectory.path + "/" + file + ".partial"
            let continued = operation.request.value(forHTTPHeaderField: "Range") != nil
            // Part of the entity is worth keeping: an earlier run's bytes, or
            // the entity itself cut short (200, 206).
            let keep = ResumableBatchPaths.exists(partial) && (continued || status == 200 || status == 206)
            if !keep {
                unlink(partial)
                unlink(partial + ".json")
                try? updateManifest { $0.forget(entry.id) }
            }
        }
        let outcome: ResumableBatchOutcome = succeeded ? .done : cancelled ? .cancelled
            : .failed(operation.error ?? NSError(domain: NSURLErrorDomain, code: NSURLErrorUnknown))
        state.withLock { state in
            state.entries[index].statusCode = status
            state.entries[index].bytesReceived = operation.countOfBodyBytesReceived
            if outputDirectory == nil, succeeded { state.entries[index].body = operation.responseData ?? Data() }
            state.entries[index].seconds = state.entries[index].startedAt.map { Date().timeIntervalSince($0) } ?? 0
        }
        announce(index, result(index, outcome))
    }

    /// Every entry has ended: the report, in the entries' order.
    private func graphFinished(_ report: RequestGraphReport, nodes: [RequestGraphNode?]) {
        var results: [ResumableBatchEntryResult] = []
        for index in entries.indices {
            let alreadyDone = state.withLock { $0.entries[index].alreadyDone }
            let outcome: ResumableBatchOutcome
            switch nodes[index].flatMap({ report[$0] }) {
            case .succeeded?: outcome = alreadyDone ? .alreadyDone : .done
            case .failed(let error)?: outcome = .failed(error)
            case .skipped(let because)?: outcome = .skipped(because: because.name)
            case .cancelled?, nil: outcome = .cancelled
            }
            let result = result(index, outcome)
            announce(index, result)
            results.append(result)
        }
        // The graph's nodes hold builders that hold the batch: let both go.
        state.withLock { $0.graph = nil }
        finish(.success(ResumableBatchReport(results: results)))
    }

    private func result(_ index: Int, _ outcome: ResumableBatchOutcome) -> ResumableBatchEntryResult {
        let known = state.withLock { $0.entries[index] }
        return ResumableBatchEntryResult(
            entry: entries[index], outcome: outcome, statusCode: known.statusCode, bytesReceived: known.bytesReceived,
            resumedFrom: known.resumedFrom,
            file: outputDirectory.flatMap { directory in files[index].map { directory.appendingPathComponent($0) } },
            body: known.body, seconds: known.seconds)
    }

    /// Calls `entryFinished` once per entry (on the callback queue).
    private func announce(_ index: Int, _ result: ResumableBatchEntryResult) {
        let block = state.withLock { state -> (@Sendable (ResumableBatchEntryResult) -> Void)? in
            guard !state.entries[index].announced else { return nil }
            state.entries[index].announced = true
            return state.settings.entryFinished
        }
        block?(result)
    }
}
