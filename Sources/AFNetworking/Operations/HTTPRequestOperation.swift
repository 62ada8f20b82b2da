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
    private var _responseSerializer: HTTPResponseSerializer = HTTPResponseSerializer()
    private var serialized: Result<Any?, Error>?
    private var success: ((HTTPRequestOperation, Any?) -> Void)?
    private var failure: ((HTTPRequestOperation, Error) -> Void)?
    /// Serializes `responseObject` without holding the state lock, so readers
    /// of other properties never wait on a slow parser.
    private let serializationLock = NSLock()

    /// Creates an operation for `request` with an `HTTPResponseSerializer`.
    public required init(request: URLRequest) {
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
        resumableFile = file
    }

    /// The HTTP response, once its head has arrived.
    public override var response: HTTPURLResponse? { super.response as? HTTPURLResponse }

    /// Validates the response and builds `responseObject`. Setting it discards
    /// an object already computed.
    public var responseSerializer: HTTPResponseSerializer {
        get { locked { _responseSerializer } }
        set {
            serializationLock.lock()
            locked {
                _responseSerializer = newValue
                serialized = nil
            }
            serializationLock.unlock()
        }
    }

    /// The serialized response: computed once, after the transfer ended without
    /// a transport error; nil before that or when serialization failed.
    public var responseObject: Any? {
        guard case .success(let object)? = serializeIfNeeded() else { return nil }
        return object
    }

    /// The transport error, else the serializer's error (status code, content
    /// type, parse failure), else nil.
    public override var error: Error? {
        if let transportError = transportError { return transportError }
        if case .failure(let serializationError)? = locked({ serialized }) { return serializationError }
        return nil
    }

    /// Sets the blocks called on `completionQueue` when the operation ends:
    /// `success` with the response object, or `failure` with the error
    /// (cancellation included). Exactly one of them runs, once.
    public func setCompletionBlockWithSuccess(_ success: ((HTTPRequestOperation, Any?) -> Void)?,
                                              failure: ((HTTPRequestOperation, Error) -> Void)?) {
        locked {
            self.success = success
            self.failure = failure
        }
    }

    private func serializeIfNeeded() -> Result<Any?, Error>? {
        serializationLock.lock()
        defer { serializationLock.unlock() }
        let (cached, ready, serializer, response, data) = locked {
            (serialized, isDelivering && transportError == nil, _responseSerializer, materializedResponse(), responseData)
        }
        if let cached { return cached }
        guard ready else { return nil }
        let result = Result { try serializer.responseObject(for: response, data: data) }
        locked { serialized = result }
        return result
    }

    override func deliverCompletion(_ done: @escaping () -> Void) {
        let (success, failure) = locked { () -> (((HTTPRequestOperation, Any?) -> Void)?, ((HTTPRequestOperation, Error) -> Void)?) in
            defer {
                // Released once delivered: blocks commonly capture the operation.
                self.success = nil
                self.failure = nil
            }
            return (self.success, self.failure)
        }
        let queue = effectiveCompletionQueue
        let group = effectiveCompletionGroup
        // Parsing happens off the network thread and off the main thread: on
        // the caller's own completion queue when it is not the main queue
        // (saving a thread hop), else on the shared processing queue.
        let parsesOnCompletionQueue = queue !== DispatchQueue.main
        let workQueue = parsesOnCompletionQueue ? queue : CompletionDefaults.processingQueue
        let storesInCache = mayStoreInCache
        group.enter()
        workQueue.async { [self] in
            if storesInCache { storeInCache() }
            let outcome: Result<Any?, Error>
            if let transportError = transportError {
                outcome = .failure(transportError)
            } else {
                outcome = serializeIfNeeded() ?? .success(nil)
            }
            let deliver: (() -> Void)?
            switch outcome {
            case .success(let object) where success != nil:
                deliver = { success?(self, object) }
            case .failure(let error) where failure != nil:
                deliver = { failure?(self, error) }
            default:
                deliver = nil
            }
            guard let deliver else {
                done()
                group.leave()
                return
            }
            if parsesOnCompletionQueue {
                deliver()
                done()
                group.leave()
            } else {
                queue.async { deliver(); done(); group.leave() }
            }
        }
    }

    override func didPause() {
        // Ask for the rest: from the bytes already written, and only if the
        // entity is still the one they came from.
        let offset = bytesWrittenToOutput
        locked {
            var request = self.request
            // If-Range with the ETag, else (beyond 2.7) with Last-Modified, so a
            // changed entity is sent whole instead of spliced.
            if let validator = response?.value(forHTTPHeaderField: "ETag") ?? response?.value(forHTTPHeaderField: "Last-Modified") {
                request.setValue(validator, forHTTPHeaderField: "If-Range")
            }
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            self.request = request
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
