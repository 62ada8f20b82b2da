@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A list of downloads that survives the process: entries with ids and
/// dependencies run as a `RequestGraph`, bodies go to files under an output
/// directory, and a manifest says which entries are done and which partial
/// file belongs to which, so a batch killed at any moment (`kill -9`, a crash,
/// a reboot) continues where it stopped when run again with the same list,
/// directory and manifest.
///
/// ```swift
/// let batch = try ResumableBatch(
///     entries: [
///         ResumableBatchEntry(id: "index", url: URL(string: "https://example.org/index.json")!),
///         ResumableBatchEntry(id: "data", url: URL(string: "https://example.org/data.tar")!,
///                             dependencies: ["index"], outputPath: "dist/data.tar"),
///     ],
///     outputDirectory: URL(fileURLWithPath: "downloads"),
///     manifest: URL(fileURLWithPath: "downloads.manifest"))
/// batch.maximumDownloadBytesPerSecond = 1_000_000     // all the batch's transfers together
/// let report = try await batch.run()
/// ```
///
/// - Each entry is a node of a `RequestGraph` (`.cancel` policy): it starts
///   once its dependencies succeeded; a failed, cancelled or skipped
///   dependency skips it (nothing is sent).
/// - A body goes through `HTTPRequestOperation(request:resumingDownloadTo:)`
///   (`FILE.partial` and its `FILE.partial.json` sidecar, renamed to FILE when
///   complete), so a continued entry asks for the rest with `Range` and
///   `If-Range`, and the result is byte-identical.
/// - The manifest is written atomically (temporary file, fsync, rename, fsync
///   of the directory) when the batch starts, before an entry's partial file
///   is made, and as each entry ends. It records the SHA-256 of the list's
///   content and the output directory: `init` refuses, touching nothing, a
///   corrupt manifest, one written for another list, or for another directory.
///   Entries done in it are not sent again (`.alreadyDone`) while their file
///   is there. A missing manifest file starts the batch afresh. A write
///   that fails once the batch runs does not stop it: the next run tells from
///   the files what happened (a file whose partial file is gone was completed).
///   One batch at a time per manifest: two processes sharing one overwrite
///   each other's state (their partial files are locked, so they never
///   write the same file at once).
/// - Paths stay inside the output directory: an output path that is absolute
///   or has `..`, `.` or empty components is refused by `init`; a directory on
///   the way that is a symbolic link fails the entry. A file the batch did not
///   make is never written over (`.outputExists`) and a partial file without
///   its sidecar is never emptied (`.foreignPartialFile`).
/// - Without an output directory, bodies are kept in memory (`body` of each result).
///
/// A batch runs once: `start` or `run()` a second time reports the same run.
public final class ResumableBatch: @unchecked Sendable {
    // @unchecked: every mutable field is in `state` (a LockedState); the rest
    // is set by init and never changes.

    /// The entries, in the order given.
    public let entries: [ResumableBatchEntry]
    /// Where bodies go (absolute, symbolic links resolved); nil: kept in memory.
    public let outputDirectory: URL?
    /// The manifest file, if the batch keeps one.
    public let manifestURL: URL?

    /// Each entry's output path relative to `outputDirectory`.
    let files: [String?]
    /// Entry indexes, each after its dependencies.
    let order: [Int]

    struct Settings {
        var maximumDownloadBytesPerSecond: Int64 = 0
        var maxConcurrentRequestCount = 6
        var configureOperation: (@Sendable (HTTPRequestOperation, ResumableBatchEntry) -> Void)?
        var entryFinished: (@Sendable (ResumableBatchEntryResult) -> Void)?
    }

    /// What the batch knows of one entry while it runs.
    struct EntryState {
        var alreadyDone = false
        var statusCode: Int?
        var bytesReceived: Int64 = 0
        var resumedFrom: Int64?
        var body: Data?
        var startedAt: Date?
        var seconds: TimeInterval = 0
        /// `entryFinished` was called for it.
        var announced = false
    }

    struct State {
        var settings = Settings()
        var manifest: ResumableBatchManifest
        var entries: [EntryState]
        var graph: RequestGraph?
        /// `cancel()` came before the graph was made: it is cancelled as soon as it is.
        var cancelled = false
        var report: ResumableBatchReport?
        var failure: ResumableBatchError?
        var waiters: [(queue: DispatchQueue, block: @Sendable (Result<ResumableBatchReport, ResumableBatchError>) -> Void)] = []
    }

    let state: LockedState<State>
    /// Manifest writes, one at a time, each of the latest state.
    let manifestQueue = DispatchQueue(label: "AFNetworking.ResumableBatch.manifest")
    /// The operations' completion blocks and the graph's completion.
    let callbackQueue = DispatchQueue(label: "AFNetworking.ResumableBatch.callbacks")

    /// Checks the entries and the manifest without touching anything.
    ///
    /// - Parameters:
    ///   - entries: the downloads; ids unique, dependencies on ids of this list.
    ///   - outputDirectory: where bodies go (made when the batch starts); nil: bodies are kept in memory.
    ///   - manifest: the file that keeps the batch's state; nil: none (nothing survives the process
    ///     but the partial files). An existing one is continued.
    ///   - listContent: the list as the user wrote it (a file's bytes), whose SHA-256 the manifest
    ///     records; nil: a canonical text of `entries`.
    /// - Throws: `ResumableBatchError` (`duplicateID`, `unknownDependency`, `cycle`,
    ///   `unsafeOutputPath`, `noFileName`, `sameOutputFile`, `corruptManifest`, `foreignManifest`,
    ///   `manifestForAnotherDirectory`).
    public init(entries: [ResumableBatchEntry], outputDirectory: URL? = nil, manifest: URL? = nil, listContent: Data? = nil) throws {
        let directory = outputDirectory.map { ResumableBatchPaths.canonical($0.path) }
        let manifestPath = manifest.map { ResumableBatchPaths.canonical($0.path) }
        order = try Self.dependencyOrder(of: entries)
        // The manifest inside the output directory must not be one of the entries' files.
        let manifestInside = directory.flatMap { directory in
            manifestPath.flatMap { $0.hasPrefix(directory + "/") ? String($0.dropFirst(directory.count + 1)) : nil }
        }
        files = try Self.outputFiles(of: entries, hasDirectory: directory != nil, manifest: manifestInside)
        let digest = Self.sha256Hex(listContent ?? Self.canonicalContent(of: entries))
        var recorded = ResumableBatchManifest(listSHA256: digest, outputDirectory: directory)
        if let manifestPath, let existing = try ResumableBatchManifest.load(from: manifestPath) {
            var filesByID: [String: String?] = [:]
            for (entry, file) in zip(entries, files) { filesByID[entry.id] = .some(file) }
            try existing.check(path: manifestPath, listSHA256: digest, outputDirectory: directory, files: filesByID)
            recorded = existing
        }
        self.entries = entries
        self.outputDirectory = directory.map { URL(fileURLWithPath: $0) }
        self.manifestURL = manifestPath.map { URL(fileURLWithPath: $0) }
        state = LockedState(State(manifest: recorded, entries: Array(repeating: EntryState(), count: entries.count)))
    }

    // MARK: - Settings (before start)

    /// The cap on the download rate of all the batch's transfers together
    /// (bytes per second; the graph's `maximumDownloadBytesPerSecond`); 0: none.
    public var maximumDownloadBytesPerSecond: Int64 {
        get { state.withLock { $0.settings.maximumDownloadBytesPerSecond } }
        set { state.withLock { $0.settings.maximumDownloadBytesPerSecond = max(newValue, 0) } }
    }

    /// Entries running at once (the graph's `maxConcurrentRequestCount`), default 6.
    public var maxConcurrentRequestCount: Int {
        get { state.withLock { $0.settings.maxConcurrentRequestCount } }
        set { state.withLock { $0.settings.maxConcurrentRequestCount = max(newValue, 1) } }
    }

    /// Called with each entry's operation before it is queued (security
    /// policy, credentials, caps of its own…). The batch then sets the
    /// operation's completion queue and blocks, and requires a status in
    /// 200–299 (its serializer's `acceptableStatusCodes`).
    public var configureOperation: (@Sendable (HTTPRequestOperation, ResumableBatchEntry) -> Void)? {
        get { state.withLock { $0.settings.configureOperation } }
        set { state.withLock { $0.settings.configureOperation = newValue } }
    }

    /// Called once per entry as it ends (skipped and cancelled entries at the
    /// latest when the batch ends), on a serial queue of the batch.
    public var entryFinished: (@Sendable (ResumableBatchEntryResult) -> Void)? {
        get { state.withLock { $0.settings.entryFinished } }
        set { state.withLock { $0.settings.entryFinished = newValue } }
    }

    // MARK: - Running

    /// Makes the output directory, writes the manifest and starts the
    /// entries; `completion` gets the report when every entry has ended, on
    /// `queue` (nil: the main queue), or `.manifestNotWritable` /
    /// `.cannotMakeOutputDirectory` when the batch could not begin (then
    /// nothing was sent).
    public func start(queue: DispatchQueue? = nil,
                      completion: @escaping @Sendable (Result<ResumableBatchReport, ResumableBatchError>) -> Void) {
        let queue = queue ?? .main
        let (first, finished) = state.withLock { state -> (Bool, Result<ResumableBatchReport, ResumableBatchError>?) in
            if let report = state.report { return (false, .success(report)) }
            if let failure = state.failure { return (false, .failure(failure)) }
            state.waiters.append((queue, completion))
            return (state.graph == nil && state.waiters.count == 1, nil)
        }
        if let finished { return queue.async { completion(finished) } }
        guard first else { return }
        do {
            try prepare()
        } catch {
            return finish(.failure(ResumableBatchError(error) ?? .manifestNotWritable(path: manifestURL?.path ?? "", reason: "\(error)")))
        }
        runGraph()
    }

    /// Starts the batch if needed and returns its report; cancelling the Task
    /// cancels the batch. Throws `.manifestNotWritable` or
    /// `.cannotMakeOutputDirectory` when the batch could not begin (then
    /// nothing was sent).
    public func run() async throws -> ResumableBatchReport {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ResumableBatchReport, Error>) in
                start(queue: callbackQueue) { continuation.resume(with: $0.mapError { $0 as Error }) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Cancels every entry not yet ended (their partial files stay, to be continued).
    public func cancel() {
        state.withLock { state -> RequestGraph? in
            state.cancelled = true
            return state.graph
        }?.cancel()
    }

    /// The output directory exists and the manifest is on disk before anything is sent.
    private func prepare() throws {
        if let outputDirectory {
            do {
                try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
            } catch {
                throw ResumableBatchError.cannotMakeOutputDirectory(path: outputDirectory.path, reason: error.localizedDescription)
            }
        }
        try updateManifest { _ in }
    }

    /// Changes the manifest and writes it (when the batch keeps one), in the
    /// order of the changes.
    func updateManifest(_ change: @escaping (inout ResumableBatchManifest) -> Void) throws {
        try manifestQueue.sync {
            let snapshot = state.withLock { state -> ResumableBatchManifest in
                change(&state.manifest)
                return state.manifest
            }
            if let manifestURL { try snapshot.write(to: manifestURL.path) }
        }
    }

    /// Hands the outcome to everyone waiting, once.
    func finish(_ result: Result<ResumableBatchReport, ResumableBatchError>) {
        let waiters = state.withLock { state in
            switch result {
            case .success(let report): state.report = report
            case .failure(let error): state.failure = error
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.queue.async { waiter.block(result) } }
    }
}

extension ResumableBatchError {
    /// `error` as a batch error, if it is one.
    init?(_ error: any Error) {
        guard let error = error as? ResumableBatchError else { return nil }
        self = error
    }
}
