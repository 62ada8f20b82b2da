@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs as `async` calls, on the same machinery: the same requests are
/// built and the same operations made (by `httpRequestOperation(with:success:failure:)`,
/// with the manager's serializers, policy, completion queue and group) and
/// enqueued on `operationQueue`. Cancelling the awaiting task cancels the
/// operation and throws `CancellationError`; any other failure is thrown as
/// the failure block would have received it. The operations carry no success
/// or failure block: the awaiting task is resumed once the operation has
/// finished, which needs the manager's `completionQueue` only when one is set
/// (the response is serialized there), never the main queue.
extension HTTPRequestOperationManager {
    /// GET; returns the response and the response serializer's object.
    public func get(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("GET", URLString, .untyped(parameters), nil)).value
    }

    /// HEAD; returns the response.
    public func head(_ URLString: String, parameters: Any? = nil) async throws -> HTTPURLResponse {
        try await awaitOperation(try verbRequest("HEAD", URLString, .untyped(parameters), nil)).value.response
    }

    /// POST with form-encoded (or the serializer's) parameters.
    public func post(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("POST", URLString, .untyped(parameters), nil)).value
    }

    /// A multipart POST; an error `block` throws fails the call before anything is sent.
    public func post(_ URLString: String, parameters: [String: Any]? = nil,
                     constructingBodyWith block: @escaping @Sendable (MultipartFormData) throws -> Void)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("POST", URLString, .multipart(fields: parameters, block: block), nil)).value
    }

    /// PUT.
    public func put(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("PUT", URLString, .untyped(parameters), nil)).value
    }

    /// PATCH.
    public func patch(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("PATCH", URLString, .untyped(parameters), nil)).value
    }

    /// DELETE.
    public func delete(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("DELETE", URLString, .untyped(parameters), nil)).value
    }

    // MARK: - Decodable

    /// GET, the body decoded as `type` with `decoder` (the response
    /// serializer's validation of status code and content type still applies).
    public func get<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("GET", URLString, .untyped(parameters), nil))
    }

    /// POST, the body decoded as `type`.
    public func post<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                   decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("POST", URLString, .untyped(parameters), nil))
    }

    /// PUT, the body decoded as `type`.
    public func put<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("PUT", URLString, .untyped(parameters), nil))
    }

    /// PATCH, the body decoded as `type`.
    public func patch<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                    decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("PATCH", URLString, .untyped(parameters), nil))
    }

    /// DELETE, the body decoded as `type`.
    public func delete<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                     decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("DELETE", URLString, .untyped(parameters), nil))
    }

    // MARK: - Helpers

    typealias Reply = Handover<(response: HTTPURLResponse, responseObject: Any?)>

    /// Enqueues an operation for `request` and waits until it has finished.
    private func finishedOperation(_ request: URLRequest, validatingOnly: Bool = false) async throws -> HTTPRequestOperation {
        try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Handover<HTTPRequestOperation>, Error>) -> Void)
            -> (@Sendable () -> Void)? in
            let operation = enqueue(request, success: nil, failure: nil) { operation in
                if validatingOnly, let plain = ResponseDecoding.validatingOnly(operation.responseSerializer) {
                    operation.responseSerializer = plain
                }
                operation.whenResolved { finish(.success(Handover(value: operation))) }
            }
            return { operation.cancel() }
        }.value
    }

    /// Runs an operation and hands over (response, object), or throws its error.
    func awaitOperation(_ request: URLRequest) async throws -> Reply {
        let reply = try await finishedOperation(request).finishedResult()
        do {
            let (response, object) = try reply.get().value
            return Reply(value: (response, object))
        } catch {
            throw AsyncBridge.thrown(error)
        }
    }

    /// Runs an operation, then decodes the validated body (the decoding
    /// happens here, in the awaiting task).
    func decoding<T: Decodable>(_ type: T.Type, _ decoder: JSONDecoder, _ request: URLRequest) async throws -> sending T {
        let operation = try await finishedOperation(request, validatingOnly: true)
        if let error = operation.error { throw AsyncBridge.thrown(error) }
        return try ResponseDecoding.decode(T.self, from: operation.responseData, response: operation.response, decoder: decoder)
    }
}

/// Decoding a validated body for the `as:decoder:` variants.
enum ResponseDecoding {
    /// A serializer that validates as `serializer` does (status codes,
    /// content types) and keeps the body as it came, for an operation whose
    /// body the decoder reads: the JSON serializer's own parse would build a
    /// tree of the whole body (several times its size) only to be thrown away.
    /// Only for the library's plain and JSON serializers, exactly those
    /// classes: a subclass may check or refuse more in `responseObject`, so it
    /// runs as it is (nil). The session manager's typed verbs validate the same way.
    static func validatingOnly(_ serializer: HTTPResponseSerializer) -> HTTPResponseSerializer? {
        let kind = type(of: serializer)
        guard kind == JSONResponseSerializer.self || kind == HTTPResponseSerializer.self else { return nil }
        let plain = HTTPResponseSerializer()
        plain.acceptableStatusCodes = serializer.acceptableStatusCodes
        plain.acceptableContentTypes = serializer.acceptableContentTypes
        plain.stringEncoding = serializer.stringEncoding
        return plain
    }

    /// `data` decoded as `T`; a failure is an NSError in
    /// `AFURLResponseSerializationErrorDomain` (`NSURLErrorCannotDecodeContentData`)
    /// with the `DecodingError` underneath, as `DecodableResponseSerializer` reports it.
    static func decode<T: Decodable>(_ type: T.Type, from data: Data?, response: URLResponse?, decoder: JSONDecoder) throws -> sending T {
        do {
            // A value decoded from bytes shares nothing with anyone; the
            // compiler cannot see that through `T.Type`.
            nonisolated(unsafe) let value = try decoder.decode(T.self, from: data ?? Data())
            return value
        } catch {
            var info: [String: Any] = [
                NSLocalizedDescriptionKey: "The response body could not be decoded as \(T.self).",
                NSUnderlyingErrorKey: error as NSError,
            ]
            if let response { info[AFNetworkingOperationFailingURLResponseErrorKey] = response }
            if let data { info[AFNetworkingOperationFailingURLResponseDataErrorKey] = data }
            throw NSError(domain: AFURLResponseSerializationErrorDomain, code: NSURLErrorCannotDecodeContentData, userInfo: info)
        }
    }
}
