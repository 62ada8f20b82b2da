import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs as `async` calls, on the same machinery: the same operations
/// are made and enqueued, with the manager's serializers, policy and queues.
/// Cancelling the awaiting task cancels the operation and throws
/// `CancellationError`; any other failure is thrown as the failure block
/// would have received it.
extension HTTPRequestOperationManager {
    /// GET; returns the response and the response serializer's object.
    public func get(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation { get(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// HEAD; returns the response.
    public func head(_ URLString: String, parameters: Any? = nil) async throws -> HTTPURLResponse {
        try await awaitOperation { success, failure in
            head(URLString, parameters: parameters, success: { success($0, nil) }, failure: failure)
        }.value.response
    }

    /// POST with form-encoded (or the serializer's) parameters.
    public func post(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation { post(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// A multipart POST; an error `block` throws fails the call before anything is sent.
    public func post(_ URLString: String, parameters: [String: Any]? = nil,
                     constructingBodyWith block: @escaping @Sendable (MultipartFormData) throws -> Void)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation { post(URLString, parameters: parameters, constructingBodyWith: block, success: $0, failure: $1) }.value
    }

    /// PUT.
    public func put(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation { put(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// PATCH.
    public func patch(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation { patch(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// DELETE.
    public func delete(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation { delete(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    // MARK: - Decodable

    /// GET, the body decoded as `type` with `decoder` (the response
    /// serializer's validation of status code and content type still applies).
    public func get<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder) { get(URLString, parameters: parameters, success: $0, failure: $1) }
    }

    /// POST, the body decoded as `type`.
    public func post<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                   decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder) { post(URLString, parameters: parameters, success: $0, failure: $1) }
    }

    /// PUT, the body decoded as `type`.
    public func put<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder) { put(URLString, parameters: parameters, success: $0, failure: $1) }
    }

    /// PATCH, the body decoded as `type`.
    public func patch<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                    decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder) { patch(URLString, parameters: parameters, success: $0, failure: $1) }
    }

    /// DELETE, the body decoded as `type`.
    public func delete<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                     decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder) { delete(URLString, parameters: parameters, success: $0, failure: $1) }
    }

    // MARK: - Helpers

    private typealias Verb = (@escaping HTTPRequestOperation.SuccessBlock, @escaping FailureBlock) -> HTTPRequestOperation?
    private typealias Reply = Handover<(response: HTTPURLResponse, responseObject: Any?)>

    /// Runs a verb and hands over (response, object) from its success block.
    private func awaitOperation(_ verb: Verb) async throws -> Reply {
        try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Reply, Error>) -> Void) -> (@Sendable () -> Void)? in
            let success: HTTPRequestOperation.SuccessBlock = { operation, object in
                guard let response = operation.response else {
                    return finish(.failure(TransportErrors.make(NSURLErrorBadServerResponse, url: operation.request.url, underlying: nil)))
                }
                finish(.success(Reply(value: (response, object))))
            }
            let failure: FailureBlock = { _, error in finish(.failure(error)) }
            guard let operation = verb(success, failure) else { return nil }
            return { operation.cancel() }
        }
    }

    /// Runs a verb, then decodes the validated body (the decoding happens
    /// here, in the awaiting task, not in a completion block).
    private func decoding<T: Decodable>(_ type: T.Type, _ decoder: JSONDecoder, _ verb: Verb) async throws -> sending T {
        let body = try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Handover<(Data?, URLResponse?)>, Error>) -> Void)
            -> (@Sendable () -> Void)? in
            let success: HTTPRequestOperation.SuccessBlock = { operation, _ in
                finish(.success(Handover(value: (operation.responseData, operation.response))))
            }
            let failure: FailureBlock = { _, error in finish(.failure(error)) }
            guard let operation = verb(success, failure) else { return nil }
            return { operation.cancel() }
        }
        return try ResponseDecoding.decode(T.self, from: body.value.0, response: body.value.1, decoder: decoder)
    }
}

/// Decoding a validated body for the `as:decoder:` variants.
enum ResponseDecoding {
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
