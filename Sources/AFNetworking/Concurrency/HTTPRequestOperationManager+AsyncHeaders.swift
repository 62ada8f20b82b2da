import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `async` verbs with per-call header fields (AFNetworking 4.x's
/// `headers:`), on the same machinery as the other `async` verbs: each field
/// is set over the request serializer's default headers for this request
/// only. A field whose name is not a token or whose value holds a CR, LF or
/// NUL is thrown (`NSURLErrorBadURL`) before anything is sent.
extension HTTPRequestOperationManager {
    /// GET with per-call header fields; returns the response and the response serializer's object.
    public func get(_ URLString: String, parameters: Any? = nil, headers: [String: String]?)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("GET", URLString, .untyped(parameters), headers)).value
    }

    /// HEAD with per-call header fields; returns the response.
    public func head(_ URLString: String, parameters: Any? = nil, headers: [String: String]?) async throws -> HTTPURLResponse {
        try await awaitOperation(try verbRequest("HEAD", URLString, .untyped(parameters), headers)).value.response
    }

    /// POST with per-call header fields; returns the response and the response serializer's object.
    public func post(_ URLString: String, parameters: Any? = nil, headers: [String: String]?)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("POST", URLString, .untyped(parameters), headers)).value
    }

    /// A multipart POST with per-call header fields (leave `Content-Type` out:
    /// it would replace the multipart one and its boundary).
    public func post(_ URLString: String, parameters: [String: Any]? = nil, headers: [String: String]?,
                     constructingBodyWith block: @escaping @Sendable (MultipartFormData) throws -> Void)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("POST", URLString, .multipart(fields: parameters, block: block), headers)).value
    }

    /// PUT with per-call header fields; returns the response and the response serializer's object.
    public func put(_ URLString: String, parameters: Any? = nil, headers: [String: String]?)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("PUT", URLString, .untyped(parameters), headers)).value
    }

    /// PATCH with per-call header fields; returns the response and the response serializer's object.
    public func patch(_ URLString: String, parameters: Any? = nil, headers: [String: String]?)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("PATCH", URLString, .untyped(parameters), headers)).value
    }

    /// DELETE with per-call header fields; returns the response and the response serializer's object.
    public func delete(_ URLString: String, parameters: Any? = nil, headers: [String: String]?)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("DELETE", URLString, .untyped(parameters), headers)).value
    }

    /// GET with per-call header fields, the body decoded as `type` with `decoder`.
    public func get<T: Decodable>(_ URLString: String, parameters: Any? = nil, headers: [String: String]?, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("GET", URLString, .untyped(parameters), headers))
    }

    /// POST with per-call header fields, the body decoded as `type` with `decoder`.
    public func post<T: Decodable>(_ URLString: String, parameters: Any? = nil, headers: [String: String]?, as type: T.Type,
                                   decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("POST", URLString, .untyped(parameters), headers))
    }

    /// PUT with per-call header fields, the body decoded as `type` with `decoder`.
    public func put<T: Decodable>(_ URLString: String, parameters: Any? = nil, headers: [String: String]?, as type: T.Type,
                                  decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("PUT", URLString, .untyped(parameters), headers))
    }

    /// PATCH with per-call header fields, the body decoded as `type` with `decoder`.
    public func patch<T: Decodable>(_ URLString: String, parameters: Any? = nil, headers: [String: String]?, as type: T.Type,
                                    decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("PATCH", URLString, .untyped(parameters), headers))
    }

    /// DELETE with per-call header fields, the body decoded as `type` with `decoder`.
    public func delete<T: Decodable>(_ URLString: String, parameters: Any? = nil, headers: [String: String]?, as type: T.Type,
                                     decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("DELETE", URLString, .untyped(parameters), headers))
    }
}
