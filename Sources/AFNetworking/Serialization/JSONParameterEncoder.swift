import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a JSON body with a `JSONEncoder` (Alamofire's
/// `JSONParameterEncoder`), for every method, and sets
/// `Content-Type: application/json` unless the request already has one.
public final class JSONParameterEncoder: ParameterEncoder, @unchecked Sendable {
    // @unchecked: `encoder` is only read after init (configure it before sharing the encoder).

    /// A `JSONEncoder()` with its default settings.
    public static var `default`: JSONParameterEncoder { JSONParameterEncoder() }

    /// Output `.prettyPrinted`.
    public static var prettyPrinted: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        return JSONParameterEncoder(encoder: encoder)
    }

    /// Output with `.sortedKeys`, so the same value always gives the same bytes.
    public static var sortedKeys: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return JSONParameterEncoder(encoder: encoder)
    }

    /// The encoder used; its strategies (dates, keys, output formatting) apply.
    public let encoder: JSONEncoder

    /// An encoder using `encoder`.
    public init(encoder: JSONEncoder = JSONEncoder()) {
        self.encoder = encoder
    }

    /// `request` with the JSON of `parameters` as its body. A value JSON
    /// cannot represent (a NaN or infinite number) throws
    /// `NSURLErrorCannotDecodeRawData` in `AFURLRequestSerializationErrorDomain`.
    public func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }
        var request = request
        do {
            request.httpBody = try encoder.encode(parameters)
        } catch {
            throw ParameterEncodingError.unrepresentable(ParameterEncodingError.reason(for: error), format: "JSON",
                                                         request: request, underlying: error)
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}
