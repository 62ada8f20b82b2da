import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as `application/x-www-form-urlencoded` fields
/// (Alamofire's `URLEncodedFormParameterEncoder`), in the query string or the
/// body, with 2.x's flattening: `a[b]=` for a nested field, `a[]=` for each
/// element of an array, keys sorted, booleans `1`/`0`.
///
/// What the form cannot carry unambiguously is refused, not guessed at: a
/// top level that is not keyed (an array or a lone value), a collection
/// inside an array (`a[][x]=1&a[][y]=2` reads back as one element or two),
/// a key containing `[` or `]`, and numbers JSON cannot hold (NaN, infinity).
/// Empty arrays and dictionaries, like nil optionals, send no field.
public final class URLEncodedFormParameterEncoder: ParameterEncoder, @unchecked Sendable {
    // @unchecked: `encoder` is only read after init (configure it before sharing the encoder).

    /// Where the fields go.
    public enum Destination: Sendable, Equatable {
        /// The query string for the methods the manager's request serializer
        /// lists in `httpMethodsEncodingParametersInURI` (GET, HEAD, DELETE by
        /// default; those three when used outside a manager), the body otherwise.
        case methodDependent
        /// Always the query string.
        case queryString
        /// Always the body.
        case httpBody
    }

    /// `destination` `.methodDependent`, a `JSONEncoder()` with its defaults.
    public static var `default`: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// Turns the value into fields first: its date, data and key strategies
    /// apply (dates default to seconds since 2001, data to Base64).
    public let encoder: JSONEncoder

    /// Where the fields go.
    public let destination: Destination

    /// An encoder writing to `destination`, encoding values with `encoder`.
    public init(encoder: JSONEncoder = JSONEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// `request` with `parameters` as form fields in its query string or body
    /// (then `Content-Type: application/x-www-form-urlencoded; charset=utf-8`
    /// unless it has one). A value the form cannot represent throws
    /// `NSURLErrorCannotDecodeRawData` in `AFURLRequestSerializationErrorDomain`.
    public func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        try encode(parameters, into: request, methodsEncodingParametersInURI: ["GET", "HEAD", "DELETE"])
    }

    func encode<Parameters: Encodable>(_ parameters: Parameters?, into request: URLRequest,
                                       methodsEncodingParametersInURI methods: Set<String>) throws -> URLRequest {
        guard let parameters else { return request }
        let query = try fields(of: parameters, request: request)
        let inQuery: Bool
        switch destination {
        case .methodDependent: inQuery = methods.contains((request.httpMethod ?? "GET").uppercased())
        case .queryString: inQuery = true
        case .httpBody: inQuery = false
        }
        var request = request
        if inQuery {
            guard !query.isEmpty, let url = request.url else { return request }
            guard let withQuery = HTTPRequestSerializer.url(url, appendingQuery: query) else {
                throw requestSerializationError(code: NSURLErrorBadURL, description: "The query string does not form a valid URL",
                                                request: request)
            }
            request.url = withQuery
        } else {
            request.httpBody = Data(query.utf8)
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
        }
        return request
    }

    /// The escaped `field=value` pairs joined by `&`.
    private func fields<Parameters: Encodable>(of parameters: Parameters, request: URLRequest) throws -> String {
        let tree: Any
        do {
            // The value's own Encodable conformance and the encoder's strategies
            // decide its shape; the JSON tree is what the form is flattened from.
            tree = try JSONSerialization.jsonObject(with: encoder.encode(parameters), options: [.fragmentsAllowed])
        } catch {
            throw ParameterEncodingError.unrepresentable(ParameterEncodingError.reason(for: error), format: "a form",
                                                         request: request, underlying: error)
        }
        guard let fields = tree as? [String: Any] else {
            throw ParameterEncodingError.unrepresentable("\(Parameters.self) does not encode as keyed fields (a struct or a dictionary)",
                                                         format: "a form", request: request)
        }
        if let reason = Self.ambiguity(in: fields, path: nil) {
            throw ParameterEncodingError.unrepresentable(reason, format: "a form", request: request)
        }
        return QueryStringEncoding.queryString(from: fields)
    }

    /// Why `value` (under `path`) has no unambiguous form, or nil.
    private static func ambiguity(in value: Any, path: String?, insideArray: Bool = false) -> String? {
        if let dictionary = value as? [String: Any] {
            if insideArray { return "\(path ?? "")[] holds a keyed value; an array of collections has no unambiguous form" }
            for (key, nested) in dictionary {
                if key.contains("[") || key.contains("]") { return "the key \"\(key)\" contains a bracket, which the form uses for nesting" }
                if let reason = ambiguity(in: nested, path: path.map { "\($0)[\(key)]" } ?? key) { return reason }
            }
            return nil
        }
        if let array = value as? [Any] {
            if insideArray { return "\(path ?? "")[] holds an array; an array of collections has no unambiguous form" }
            for element in array {
                if let reason = ambiguity(in: element, path: path, insideArray: true) { return reason }
            }
        }
        return nil
    }
}
