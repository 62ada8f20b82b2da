import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes an `Encodable` value into a request (Alamofire's `ParameterEncoder`):
/// the manager verbs' `parameters:encoder:` variants build the request with
/// their request serializer (URL, method, default headers), without
/// parameters, and hand it to the encoder.
public protocol ParameterEncoder: Sendable {
    /// `request` with `parameters` encoded into it (nil: unchanged). Throws
    /// an error in `AFURLRequestSerializationErrorDomain` for a value the
    /// encoding cannot represent; nothing is sent then.
    func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest
}

extension ParameterEncoder where Self == JSONParameterEncoder {
    /// `JSONParameterEncoder.default`, so that a verb can say `encoder: .json`.
    public static var json: JSONParameterEncoder { .default }
}

extension ParameterEncoder where Self == URLEncodedFormParameterEncoder {
    /// `URLEncodedFormParameterEncoder.default`, so that a verb can say `encoder: .urlEncodedForm`.
    public static var urlEncodedForm: URLEncodedFormParameterEncoder { .default }
}

extension ParameterEncoder {
    /// As `encode(_:into:)`; a form encoder whose destination depends on the
    /// method asks the manager's serializer (`httpMethodsEncodingParametersInURI`).
    func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest,
                                       methodsEncodingParametersInURI methods: Set<String>) throws -> URLRequest {
        if let form = self as? URLEncodedFormParameterEncoder {
            return try form.encode(parameters, into: request, methodsEncodingParametersInURI: methods)
        }
        return try encode(parameters, into: request)
    }
}

/// The error an encoder throws for a value it cannot represent: the code the
/// request serializers use for unrepresentable parameters
/// (`NSURLErrorCannotDecodeRawData` in `AFURLRequestSerializationErrorDomain`),
/// the reason in the description and an `EncodingError` underneath when there is one.
enum ParameterEncodingError {
    static func unrepresentable(_ reason: String, format: String, request: URLRequest, underlying: Error? = nil) -> NSError {
        requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                  description: "The parameters cannot be written as \(format): \(reason)",
                                  request: request, underlying: underlying)
    }

    /// A readable reason for an `EncodingError` (which value, where).
    static func reason(for error: Error) -> String {
        guard let encoding = error as? EncodingError, case .invalidValue(let value, let context) = encoding else {
            return "\(error)"
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        return "\(value) at \(path.isEmpty ? "the top level" : path): \(context.debugDescription)"
    }
}
