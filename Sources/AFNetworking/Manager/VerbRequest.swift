@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a verb method encodes into its request: 2.x's untyped parameters
/// (through the manager's request serializer), an `Encodable` value through
/// a `ParameterEncoder`, or a multipart form.
enum VerbParameters {
    case untyped(Any?)
    /// Encodes the value into the request it is given (the encoder and the
    /// value captured; run once, synchronously, while the verb builds).
    case encoded((URLRequest, HTTPRequestSerializer) throws -> URLRequest)
    /// A multipart form: `fields` (a dictionary, or nil) become form fields,
    /// `block` appends the parts; the body streams.
    case multipart(fields: Any?, block: (@Sendable (MultipartFormData) throws -> Void)?)

    /// `parameters` encoded by `encoder`.
    static func encodable<Parameters: Encodable>(_ parameters: Parameters?, _ encoder: any ParameterEncoder) -> VerbParameters {
        .encoded { request, serializer in
            try encoder.encode(parameters, into: request, methodsEncodingParametersInURI: serializer.httpMethodsEncodingParametersInURI)
        }
    }
}

/// The one place every verb of both managers builds its request — callback
/// and `async`, plain, with `headers:`, with `Encodable` parameters,
/// multipart, `bytes` and the unenqueued operation: a new per-call option is
/// read here (from `RequestOptions.current`) and nowhere else.
enum VerbRequest {
    /// The request for `method` on `URLString` (relative to `baseURL`): the
    /// serializer's defaults, the parameters, then `headers` over them (for
    /// this request only: the shared serializer is never changed), then the
    /// per-call options in scope. Headers and options are checked first, so a
    /// bad one fails before anything else is built or sent.
    static func build(_ serializer: HTTPRequestSerializer, baseURL: URL?, method: String, URLString: String,
                      parameters: VerbParameters, headers: [String: String]?) throws -> URLRequest {
        let absoluteURL = try BaseURL.absoluteString(for: URLString, relativeTo: baseURL)
        let options = RequestOptions.current
        if headers != nil || options != RequestOptions() {
            let url = URL(string: absoluteURL)
            try HeaderFieldValidation.check(headers, url: url)
            try options.check(url: url)
        }
        var request: URLRequest
        switch parameters {
        case .untyped(let parameters):
            request = try serializer.request(withMethod: method, urlString: absoluteURL, parameters: parameters)
        case .encoded(let encode):
            request = try encode(try bareRequest(serializer, method: method, absoluteURL: absoluteURL), serializer)
        case .multipart(let fields, let block):
            request = try serializer.multipartFormRequest(withMethod: method, urlString: absoluteURL,
                                                          parameters: serializer.formFields(from: fields), constructingBodyWith: block)
        }
        for (field, value) in headers ?? [:] { request.setValue(value, forHTTPHeaderField: field) }
        options.apply(to: &request)
        return request
    }

    /// The serializer's request without parameters: its URL, method, default
    /// headers and request properties, but not the empty form body (and its
    /// `Content-Type`) it gives a body method without parameters, which would
    /// otherwise stand in for the encoder's.
    private static func bareRequest(_ serializer: HTTPRequestSerializer, method: String, absoluteURL: String) throws -> URLRequest {
        var request = try serializer.request(withMethod: method, urlString: absoluteURL, parameters: nil)
        if !serializer.httpMethodsEncodingParametersInURI.contains(method.uppercased()) {
            request.httpBody = nil
            request.setValue(serializer.value(forHTTPHeaderField: "Content-Type"), forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}

extension HTTPRequestOperationManager {
    /// The request a verb sends (see `VerbRequest.build`).
    func verbRequest(_ method: String, _ URLString: String, _ parameters: VerbParameters,
                     _ headers: [String: String]?) throws -> URLRequest {
        try VerbRequest.build(requestSerializer, baseURL: baseURL, method: method, URLString: URLString, parameters: parameters, headers: headers)
    }

    /// The request a callback verb sends, or nil after `failure(nil, error)`
    /// on the completion queue when it cannot be built.
    func verbRequest(_ method: String, _ URLString: String, _ parameters: VerbParameters, _ headers: [String: String]?,
                     reportingTo failure: FailureBlock?) -> URLRequest? {
        do {
            return try verbRequest(method, URLString, parameters, headers)
        } catch {
            reportFailure(error, to: failure)
            return nil
        }
    }
}

extension HTTPSessionManager {
    /// The request a verb sends (see `VerbRequest.build`).
    func verbRequest(_ method: String, _ URLString: String, _ parameters: VerbParameters,
                     _ headers: [String: String]?) throws -> URLRequest {
        try VerbRequest.build(requestSerializer, baseURL: baseURL, method: method, URLString: URLString, parameters: parameters, headers: headers)
    }
}
