import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The verbs as `async` calls, on the same machinery: the same tasks are made
/// and resumed, with the manager's serializers, policy, notifications and
/// queues. Cancelling the awaiting task cancels the session task and throws
/// `CancellationError`; any other failure is thrown as the failure block
/// would have received it.
extension HTTPSessionManager {
    /// GET; returns the response and the response serializer's object.
    public func get(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask { get(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// HEAD; returns the response.
    public func head(_ URLString: String, parameters: Any? = nil) async throws -> HTTPURLResponse {
        try await awaitTask { success, failure in
            head(URLString, parameters: parameters, success: { success($0, nil) }, failure: failure)
        }.value.response
    }

    /// POST with form-encoded (or the serializer's) parameters.
    public func post(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask { post(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// A multipart POST; an error `block` throws fails the call before anything is sent.
    public func post(_ URLString: String, parameters: [String: Any]? = nil,
                     constructingBodyWith block: @escaping @Sendable (MultipartFormData) throws -> Void)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask { post(URLString, parameters: parameters, constructingBodyWith: block, success: $0, failure: $1) }.value
    }

    /// PUT.
    public func put(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask { put(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// PATCH.
    public func patch(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask { patch(URLString, parameters: parameters, success: $0, failure: $1) }.value
    }

    /// DELETE.
    public func delete(_ URLString: String, parameters: Any? = nil) async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitTask { delete(URLString, parameters: parameters, success: $0, failure: $1) }.value
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

    private typealias Verb = (@escaping @Sendable (URLSessionDataTask, Any?) -> Void,
                              @escaping @Sendable (URLSessionDataTask?, Error) -> Void) -> URLSessionDataTask?
    private typealias Reply = Handover<(response: HTTPURLResponse, responseObject: Any?)>

    private func awaitTask(_ verb: Verb) async throws -> Reply {
        try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Reply, Error>) -> Void) -> (@Sendable () -> Void)? in
            let success: @Sendable (URLSessionDataTask, Any?) -> Void = { task, object in
                guard let response = task.response as? HTTPURLResponse else {
                    return finish(.failure(TransportErrors.make(NSURLErrorBadServerResponse, url: task.originalRequest?.url, underlying: nil)))
                }
                finish(.success(Reply(value: (response, object))))
            }
            let failure: @Sendable (URLSessionDataTask?, Error) -> Void = { _, error in finish(.failure(error)) }
            guard let task = verb(success, failure) else { return nil }
            return { task.cancel() }
        }
    }

    /// Builds the request as the verbs do, runs a task that hands over the
    /// raw body, validates it with the response serializer and decodes it.
    private func decoding<T: Decodable>(_ method: String, _ URLString: String, _ parameters: Any?, _ type: T.Type,
                                        _ decoder: JSONDecoder) async throws -> sending T {
        let request = try requestSerializer.request(withMethod: method, urlString: BaseURL.absoluteString(for: URLString, relativeTo: baseURL),
                                                    parameters: parameters)
        let serializer = responseSerializer
        let body = try await AsyncBridge.request { (finish: @escaping @Sendable (Result<Handover<(Data?, URLResponse?)>, Error>) -> Void)
            -> (@Sendable () -> Void)? in
            let task = factory.makeDataTask(request, completion: .rawData({ data, response, error in
                if let error { return finish(.failure(error)) }
                finish(Result {
                    try serializer.validate(response as? HTTPURLResponse, data: data)
                    return Handover(value: (data, response))
                })
            }))
            task.resume()
            return { task.cancel() }
        }
        // Decoded here, in the awaiting task, not in a completion block.
        return try ResponseDecoding.decode(T.self, from: body.value.0, response: body.value.1, decoder: decoder)
    }
}
