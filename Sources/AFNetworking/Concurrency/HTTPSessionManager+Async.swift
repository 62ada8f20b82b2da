@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs as `async` calls, on the same machinery: the same requests are
/// built and the same tasks made (by the factory `dataTask(with:…)` and
/// `uploadTask(withStreamedRequest:…)` use) and resumed, with the manager's
/// serializers, policy, notifications and completion group. Cancelling the
/// awaiting task cancels the session task and throws `CancellationError`; any
/// other failure is thrown as the failure block would have received it. The
/// awaiting task is resumed where the response was serialized (the manager's
/// own `completionQueue` if one is set, else a processing queue), never
/// through the main queue, so a program whose main queue is not served gets
/// its answers.
extension HTTPSessionManager {
    /// GET; returns the response and the response serializer's object.
    public func get(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask(try verbRequest("GET", URLString, .untyped(parameters), nil)).value
    }

    /// HEAD; returns the response.
    public func head(_ URLString: String, parameters: Any? = nil) async throws -> HTTPURLResponse {
        try await awaitTask(try verbRequest("HEAD", URLString, .untyped(parameters), nil)).value.response
    }

    /// POST with form-encoded (or the serializer's) parameters.
    public func post(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask(try verbRequest("POST", URLString, .untyped(parameters), nil)).value
    }

    /// A multipart POST; an error `block` throws fails the call before anything is sent.
    public func post(_ URLString: String, parameters: [String: Any]? = nil,
                     constructingBodyWith block: @escaping @Sendable (MultipartFormData) throws -> Void)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        let request = try verbRequest("POST", URLString, .multipart(fields: parameters, block: block), nil)
        // Streamed from an upload task, as the callback verb does.
        return try await awaitTask(request, streamed: true).value
    }

    /// PUT.
    public func put(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask(try verbRequest("PUT", URLString, .untyped(parameters), nil)).value
    }

    /// PATCH.
    public func patch(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask(try verbRequest("PATCH", URLString, .untyped(parameters), nil)).value
    }

    /// DELETE.
    public func delete(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask(try verbRequest("DELETE", URLString, .untyped(parameters), nil)).value
    }

    // MARK: - Decodable

    /// GET, the body decoded as `type` with `decoder` (the response
    /// serializer's validation of status code and content type still applies).
    public func get<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding("GET", URLString, parameters, type, decoder)
    }

    /// POST, the body decoded as `type`.
    public func post<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                   decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding("POST", URLString, parameters, type, decoder)
    }

    /// PUT, the body decoded as `type`.
    public func put<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding("PUT", URLString, parameters, type, decoder)
    }

    /// PATCH, the body decoded as `type`.
    public func patch<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                    decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding("PATCH", URLString, parameters, type, decoder)
    }

    /// DELETE, the body decoded as `type`.
    public func delete<T: Decodable>(_ URLString: String, parameters: Any? = nil, as type: T.Type,
                                     decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding("DELETE", URLString, parameters, type, decoder)
    }

    // MARK: - Helpers

    typealias Reply = Handover<(response: HTTPURLResponse, responseObject: Any?)>

    /// The one way an `async` verb is sent: runs the task for `request` (an
    /// upload task streaming the body when `streamed`, as the callback verb's
    /// multipart POST) and hands over (response, object), or throws its error.
    func awaitTask(_ request: URLRequest, streamed: Bool = false) async throws -> Reply {
        try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Reply, Error>) -> Void) -> (@Sendable () -> Void)? in
            let completion = SessionTaskCompletion.serialized { response, object, error in
                if let error { return finish(.failure(error)) }
                guard let response = response as? HTTPURLResponse else {
                    return finish(.failure(TransportErrors.make(NSURLErrorBadServerResponse, url: request.url, underlying: nil)))
                }
                finish(.success(Reply(value: (response, object))))
            }
            let task: URLSessionTask = streamed
                ? factory.makeUploadTask(request, body: .stream, completion: completion, delivery: .inPlace)
                : factory.makeDataTask(request, completion: completion, delivery: .inPlace)
            task.resume()
            return { task.cancel() }
        }
    }

    /// Builds the request as the verbs do, runs a task that hands over the
    /// raw body, validates it with the response serializer and decodes it.
    private func decoding<T: Decodable>(_ method: String, _ URLString: String, _ parameters: Any?, _ type: T.Type,
                                        _ decoder: JSONDecoder) async throws -> sending T {
        try await decoding(try verbRequest(method, URLString, .untyped(parameters), nil), type, decoder)
    }

    /// Runs a task for a built `request` that hands over the raw body,
    /// validates it with the response serializer and decodes it.
    func decoding<T: Decodable>(_ request: URLRequest, _ type: T.Type, _ decoder: JSONDecoder) async throws -> sending T {
        let serializer = responseSerializer
        let body = try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Handover<(Data?, URLResponse?)>, Error>) -> Void)
            -> (@Sendable () -> Void)? in
            let task = factory.makeDataTask(request, completion: .rawData({ data, response, error in
                if let error { return finish(.failure(error)) }
                finish(Result {
                    try serializer.validate(response as? HTTPURLResponse, data: data)
                    return Handover(value: (data, response))
                })
            }), delivery: .inPlace)
            task.resume()
            return { task.cancel() }
        }
        // Decoded here, in the awaiting task, not in a completion block.
        return try ResponseDecoding.decode(T.self, from: body.value.0, response: body.value.1, decoder: decoder)
    }
}
