import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `async` verbs with `Encodable` parameters (Alamofire's
/// `parameters:encoder:`), built as the callback variants build them and run
/// on the same machinery as the other `async` verbs. A value the encoder
/// cannot represent is thrown (`NSURLErrorCannotDecodeRawData` in
/// `AFURLRequestSerializationErrorDomain`) and nothing is sent.
extension HTTPRequestOperationManager {
    /// GET with `Encodable` parameters; returns the response and the response serializer's object.
    public func get<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                      headers: [String: String]? = nil)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("GET", URLString, .encodable(parameters, encoder), headers)).value
    }

    /// HEAD with `Encodable` parameters; returns the response.
    public func head<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                       headers: [String: String]? = nil) async throws -> HTTPURLResponse {
        try await awaitOperation(try verbRequest("HEAD", URLString, .encodable(parameters, encoder), headers)).value.response
    }

    /// POST with `Encodable` parameters; returns the response and the response serializer's object.
    public func post<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                       headers: [String: String]? = nil)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("POST", URLString, .encodable(parameters, encoder), headers)).value
    }

    /// PUT with `Encodable` parameters; returns the response and the response serializer's object.
    public func put<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                      headers: [String: String]? = nil)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("PUT", URLString, .encodable(parameters, encoder), headers)).value
    }

    /// PATCH with `Encodable` parameters; returns the response and the response serializer's object.
    public func patch<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                        headers: [String: String]? = nil)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("PATCH", URLString, .encodable(parameters, encoder), headers)).value
    }

    /// DELETE with `Encodable` parameters; returns the response and the response serializer's object.
    public func delete<Parameters: Encodable & Sendable>(_ URLString: String, parameters: Parameters?, encoder: any ParameterEncoder,
                                                         headers: [String: String]? = nil)
        async throws -> sending (response: HTTPURLResponse, responseObject: Any?) {
        try await awaitOperation(try verbRequest("DELETE", URLString, .encodable(parameters, encoder), headers)).value
    }

    /// GET with `Encodable` parameters, the body decoded as `type` with `decoder`.
    public func get<Parameters: Encodable & Sendable, T: Decodable>(_ URLString: String, parameters: Parameters?,
                                                                    encoder: any ParameterEncoder, headers: [String: String]? = nil,
                                                                    as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("GET", URLString, .encodable(parameters, encoder), headers))
    }

    /// POST with `Encodable` parameters, the body decoded as `type` with `decoder`.
    public func post<Parameters: Encodable & Sendable, T: Decodable>(_ URLString: String, parameters: Parameters?,
                                                                     encoder: any ParameterEncoder, headers: [String: String]? = nil,
                                                                     as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("POST", URLString, .encodable(parameters, encoder), headers))
    }

    /// PUT with `Encodable` parameters, the body decoded as `type` with `decoder`.
    public func put<Parameters: Encodable & Sendable, T: Decodable>(_ URLString: String, parameters: Parameters?,
                                                                    encoder: any ParameterEncoder, headers: [String: String]? = nil,
                                                                    as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("PUT", URLString, .encodable(parameters, encoder), headers))
    }

    /// PATCH with `Encodable` parameters, the body decoded as `type` with `decoder`.
    public func patch<Parameters: Encodable & Sendable, T: Decodable>(_ URLString: String, parameters: Parameters?,
                                                                      encoder: any ParameterEncoder, headers: [String: String]? = nil,
                                                                      as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("PATCH", URLString, .encodable(parameters, encoder), headers))
    }

    /// DELETE with `Encodable` parameters, the body decoded as `type` with `decoder`.
    public func delete<Parameters: Encodable & Sendable, T: Decodable>(_ URLString: String, parameters: Parameters?,
                                                                       encoder: any ParameterEncoder, headers: [String: String]? = nil,
                                                                       as type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws -> sending T {
        try await decoding(type, decoder, try verbRequest("DELETE", URLString, .encodable(parameters, encoder), headers))
    }
}
