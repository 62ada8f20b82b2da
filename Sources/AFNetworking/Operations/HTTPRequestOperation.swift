@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `URLConnectionOperation` for HTTP(S) whose response is validated and
/// turned into an object by a `responseSerializer` (AFNetworking 2.7's
/// `AFHTTPRequestOperation`).
///
/// Beyond 2.7: the response object is computed once on a processing queue,
/// never on the network thread or the main thread (2.x serialized under a lock
/// the main thread could wait on, issue 1655), and the operation only becomes
/// finished after its success or failure block has returned, so a dependent
/// operation never starts early (2.x issue 2929).
open class HTTPRequestOperation: URLConnectionOperation, @unchecked Sendable {
    // @unchecked: the fields below live in `http` (LockedState).

    /// The success block's type.
    public typealias SuccessBlock = @Sendable (HTTPRequestOperation, Any?) -> Void
    /// The failure block's type.
    public typealias FailureBlock = @Sendable (HTTPRequestOperation, Error) -> Void

    private struct HTTPState {
        /// nil until set or read: the default serializer's work needs no
        /// object of its own (`defaultSerializer`).
        var responseSerializer: HTTPResponseSerializer?
        /// The serializer's result, computed once (nil: not yet).
        var serialized: Result<SerializedObject, Error>?
        var success: SuccessBlock?
        var failure: FailureBlock?
        /// Whether the outcome the blocks get is final (see `whenSettled`).
        var settled = false
        var settleWaiters: [@Sendable () -> Void] = []
    }

    private let http = LockedState(HTTPState())

    /// Never handed out: mutations go to an operation's own serializer.
    private static let defaultSerializer = HTTPResponseSerializer()

    /// Creates an operation for `request` with an `HTTPResponseSerializer`.
    public override init(request: URLRequest) {
        super.init(request: request)
    }

    /// A download into `destination` that survives the process: the body goes
    /// to `<destination>.partial`, with a small sidecar (`.partial.json`)
    /// holding the URL, the entity's ETag or Last-Modified and its length. An
    /// operation created later, even by another process, continues from the
    /// partial file with `Range` and `If-Range`; if the entity changed meanwhile
    /// (the server answers 200) or the partial file is longer than the entity,
    /// it starts from zero. On success the partial file becomes `destination`.
    /// Throws if the partial file cannot be opened.
    public convenience init(request: URLRequest, resumingDownloadTo destination: URL) throws {
        let file = ResumableFile(destination: destination, url: request.url ?? destination)
        let (ranged, stream) = try file.prepare(request)
        self.init(request: ranged)
        outputStream = stream
        settings.withLock { $0.resumableFile = file }
    }

    /// The serializer's statuses: one it would reject fails the attempt, so
    /// the interceptor's retrier is asked about it.
    override var serializerAcceptableStatusCodes: IndexSet? { responseSerializer.acceptableStatusCodes }

    /// The HTTP response, once its head has arrived.
    public override var response: HTTPURLResponse? { super.response as? HTTPURLResponse }

    /// Validates the response and builds `responseObject`. The manager shares
    /// one serializer with its operations (as 2.7); serializers are
    /// thread-safe. Setting it discards an object already computed.
    public var responseSerializer: HTTPResponseSerializer {
        get {
            http.withLock { http in
                if let serializer = http.responseSerializer { return serializer }
                let serializer = HTTPResponseSerializer()
                http.responseSerializer = serializer
                return serializer
            }
        }
        set {
            http.withLock { http in
                http.responseSerializer = newValue
                http.serialized = nil
            }
        }
    }

    /// The serialized response: computed once, after the transfer ended without
    /// a transport error; nil before that or when serialization failed.
    public var responseObject: Any? {
        guard case .success(let object)? = serializeIfNeeded() else { return nil }
        return object.value
    }

    /// The transport error, else the serializer's error (status code, content
    /// type, parse failure), else nil.
    public override var error: Error? {
        if let transportError { return transportError }
        if case .failure(let serializationError)? = http.withLock({ $0.serialized }) { return serializationError }
        return nil
    }

    /// Sets the blocks called on `completionQueue` when the operation ends:
    /// `success` with the response object, or `failure` with the error
    /// (cancellation included). Exactly one of them runs, once. They are
    /// `@Sendable`: they run on the completion queue, not where they were written.
    @preconcurrency
    open func setCompletionBlockWithSuccess(_ success: SuccessBlock?, failure: FailureBlock?) {
        http.withLock { http in
            http.success = success
            http.failure = failure
        }
    }

    /// The serializer's result, computed on first use once the output is final.
    /// The serializer (caller code) runs without any lock held; if two threads
    /// race, the first result stored wins and both return it.
    private func serializeIfNeeded() -> Result<SerializedObject, Error>? {
        if let cached = http.withLock({ $0.serialized }) { return cached }
        // Only once the output is final and the transport succeeded.
        guard let outcome = driver.finalOutcome, outcome.error == nil else { return nil }
        // An operation whose serializer nobody set or read validates as a
        // fresh HTTPResponseSerializer would; one shared instance does that.
        let serializer = http.withLock { $0.responseSerializer } ?? HTTPRequestOperation.defaultSerializer
        let result = CompletionPipeline.serialize(outcome, with: serializer, data: outcome.memoryBody) { self.response }
            .map { SerializedObject(value: $0) }
        return http.withLock { http in
            if http.serialized == nil { http.serialized = result }
            return http.serialized
        }
    }

    /// Runs `body` once the outcome is final — the transfer ended and the
    /// response was serialized — even while the success or failure block
    /// still waits for its completion queue (at once if that is past). An
    /// awaiting task needs the outcome, not the caller's blocks: it must not
    /// depend on a main queue nobody serves.
    func whenSettled(_ body: @escaping @Sendable () -> Void) {
        let now = http.withLock { http -> Bool in
            if http.settled { return true }
            http.settleWaiters.append(body)
            return false
        }
        if now { body() }
    }

    /// Marks the outcome final and hands out who waited for it.
    private func settle() -> [@Sendable () -> Void] {
        http.withLock { http in
            http.settled = true
            defer { http.settleWaiters = [] }
            return http.settleWaiters
        }
    }

    override func runCompletion(_ outcome: TransferStateMachine.Outcome) {
        let (success, failure) = http.withLock { http -> (SuccessBlock?, FailureBlock?) in
            // Released once delivered: blocks commonly capture the operation.
            defer {
                http.success = nil
                http.failure = nil
            }
            return (http.success, http.failure)
        }
        let pipeline = CompletionPipeline(queue: effectiveCompletionQueue, group: effectiveCompletionGroup) { [driver] in
            driver.handle(.completionFinished)
        }
        // Waiters for the outcome (`result()`) go before blocks that wait for
        // the main queue, else once the operation has finished, as `result()` promises.
        let releaseWaiters: @Sendable () -> Void = { [self] in
            for waiter in settle() { waiter() }
        }
        pipeline.run(beforeHop: releaseWaiters) { [self] in
            recordAndCacheResponse(outcome)
            let result: Result<Any?, Error>
            if let transportError = outcome.error {
                result = .failure(transportError)
            } else {
                result = (serializeIfNeeded() ?? .success(SerializedObject(value: nil))).map(\.value)
            }
            switch result {
            case .success(let object) where success != nil:
                let box = SerializedObject(value: object)
                return .init(deliver: { success?(self, box.value) }, after: releaseWaiters)
            case .failure(let error) where failure != nil:
                return .init(deliver: { failure?(self, error) }, after: releaseWaiters)
            default:
                return .init(deliver: nil, after: releaseWaiters)
            }
        }
    }

    override func didPause() {
        let rewrite = continuation()
        settings.withLock { rewrite(&$0.request) }
    }

    override func continuing(_ request: URLRequest) -> URLRequest {
        var continuing = request
        continuation()(&continuing)
        return continuing
    }

    /// How a request asks for the rest: from the bytes already received, and
    /// only if the entity is still the one they came from. Read while paused,
    /// when those bytes no longer change.
    ///
    /// Before the head of an entity has arrived (paused before the start, or
    /// before the first answer) the request stays exactly as it is: the
    /// `Range` it carries still names what is wanted — a restart-proof
    /// download's, whose partial file already holds the bytes before that
    /// offset (2.7 too resumed from its output stream's offset), or the
    /// caller's own. Stripped, the server would send the whole entity, and it
    /// would be written after those bytes.
    private func continuation() -> @Sendable (inout URLRequest) -> Void {
        let (head, offset) = driver.entityInOutput
        guard let head else { return { _ in } }
        guard ResumeRules.canContinue(head) else {
            // Decoded bytes in the output, a Range counts coded ones: resume starts over.
            return { request in
                request.setValue(nil, forHTTPHeaderField: "Range")
                request.setValue(nil, forHTTPHeaderField: "If-Range")
            }
        }
        // If-Range with the (strong) ETag, else (beyond 2.7) with
        // Last-Modified, so a changed entity is sent whole instead of spliced.
        // Without either, nothing could tell a changed entity apart: the
        // resume starts over (2.7 appended whatever came). Read from the
        // entity's own head, not from `response`: a redirect followed since
        // may have replaced that.
        guard let validator = ResumeRules.ifRangeValidator(etag: head.value(forField: "etag"),
                                                           lastModified: head.value(forField: "last-modified")) else {
            return { request in
                request.setValue(nil, forHTTPHeaderField: "Range")
                request.setValue(nil, forHTTPHeaderField: "If-Range")
            }
        }
        return { request in
            request.setValue(validator, forHTTPHeaderField: "If-Range")
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
        }
    }

    /// Also copies the response serializer, as 2.7 does.
    open override func copy(with zone: NSZone? = nil) -> Any {
        let copy = super.copy(with: zone)
        if let operation = copy as? HTTPRequestOperation, let serializer = responseSerializer.copy() as? HTTPResponseSerializer {
            operation.responseSerializer = serializer
        }
        return copy
    }
}
