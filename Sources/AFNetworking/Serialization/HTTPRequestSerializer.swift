import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds requests with default headers and form-URL-encoded parameters
/// (`AFHTTPRequestSerializer`). Parameters go into the query string for the methods in
/// `httpMethodsEncodingParametersInURI` and into an `application/x-www-form-urlencoded`
/// body for the others.
open class HTTPRequestSerializer: NSObject, URLRequestSerialization, NSSecureCoding, NSCopying {
    /// Encoding of the form body. Defaults to UTF-8.
    open var stringEncoding: String.Encoding = .utf8

    /// Request properties the caller changed. As in 2.7, only these are copied onto new
    /// requests, so a request keeps Foundation's defaults for everything left alone.
    private var changedRequestProperties: Set<String> = []

    /// Whether created requests may use a cellular connection. Applied once set.
    open var allowsCellularAccess = true { didSet { changedRequestProperties.insert("allowsCellularAccess") } }
    /// Cache policy of created requests. Applied once set.
    open var cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy {
        didSet { changedRequestProperties.insert("cachePolicy") }
    }
    /// Whether created requests send and store cookies. Applied once set.
    open var httpShouldHandleCookies = true { didSet { changedRequestProperties.insert("httpShouldHandleCookies") } }
    /// Whether created requests may be pipelined. Applied once set.
    open var httpShouldUsePipelining = false { didSet { changedRequestProperties.insert("httpShouldUsePipelining") } }
    /// Network service type of created requests. Applied once set.
    open var networkServiceType: URLRequest.NetworkServiceType = .default {
        didSet { changedRequestProperties.insert("networkServiceType") }
    }
    /// Timeout of created requests, in seconds. Applied once set; Foundation's default is 60.
    open var timeoutInterval: TimeInterval = 60 { didSet { changedRequestProperties.insert("timeoutInterval") } }

    /// Default headers, applied to each request that does not set the field itself.
    public private(set) var httpRequestHeaders: [String: String] = [:]

    /// Methods whose parameters go into the URL query rather than the body. Defaults to GET, HEAD, DELETE.
    open var httpMethodsEncodingParametersInURI: Set<String> = ["GET", "HEAD", "DELETE"]

    /// The built-in query string style in use.
    public private(set) var queryStringSerializationStyle: HTTPRequestQueryStringSerializationStyle = .defaultStyle

    /// A caller-supplied query string builder, which replaces the style while set.
    private var queryStringSerialization: ((URLRequest, Any) throws -> String)?

    /// Creates a serializer with `Accept-Language` and `User-Agent` set.
    public required override init() {
        super.init()
        httpRequestHeaders["Accept-Language"] = DefaultHeaders.acceptLanguage()
        httpRequestHeaders["User-Agent"] = DefaultHeaders.userAgent()
    }

    /// Creates a serializer with default settings (2.7's `+serializer`).
    open class func serializer() -> Self {
        return self.init()
    }

    // MARK: Headers

    /// Sets a default header; nil removes it. Field names match case-insensitively, as HTTP's do.
    open func setValue(_ value: String?, forHTTPHeaderField field: String) {
        if let existing = storedHeaderKey(for: field) { httpRequestHeaders[existing] = nil }
        if let value = value { httpRequestHeaders[field] = value }
    }

    /// The default value of `field`, if any.
    open func value(forHTTPHeaderField field: String) -> String? {
        return storedHeaderKey(for: field).flatMap { httpRequestHeaders[$0] }
    }

    private func storedHeaderKey(for field: String) -> String? {
        if httpRequestHeaders[field] != nil { return field }
        let lowered = field.lowercased()
        return httpRequestHeaders.keys.first { $0.lowercased() == lowered }
    }

    /// Sets `Authorization: Basic …` from `username:password` in UTF-8.
    open func setAuthorizationHeaderFieldWithUsername(_ username: String, password: String) {
        let credentials = Data("\(username):\(password)".utf8).base64EncodedString()
        setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
    }

    /// Sets `Authorization: Token token="…"`.
    @available(*, deprecated, message: "Set the Authorization header with setValue(_:forHTTPHeaderField:)")
    open func setAuthorizationHeaderFieldWithToken(_ token: String) {
        setValue("Token token=\"\(token)\"", forHTTPHeaderField: "Authorization")
    }

    /// Removes the default `Authorization` header.
    open func clearAuthorizationHeader() {
        setValue(nil, forHTTPHeaderField: "Authorization")
    }

    // MARK: Query string

    /// Uses a built-in style and drops any custom block.
    open func setQueryStringSerializationWith(_ style: HTTPRequestQueryStringSerializationStyle) {
        queryStringSerializationStyle = style
        queryStringSerialization = nil
    }

    /// Uses `block` to build query strings; an error it throws fails the request.
    open func setQueryStringSerializationWith(_ block: ((URLRequest, Any) throws -> String)?) {
        queryStringSerialization = block
    }

    /// The query string for `parameters`, from the custom block or the style.
    func queryString(for request: URLRequest, parameters: Any) throws -> String {
        if let block = queryStringSerialization {
            return try block(request, parameters)
        }
        switch queryStringSerializationStyle {
        case .defaultStyle: return QueryStringEncoding.queryString(from: parameters)
        }
    }

    // MARK: Building requests

    /// A request for `method` and `urlString` with `parameters` encoded.
    /// Throws `NSURLErrorBadURL` in `AFURLRequestSerializationErrorDomain` for an invalid URL string.
    open func request(withMethod method: String, urlString: String, parameters: Any?) throws -> URLRequest {
        guard let url = URL(string: urlString) else {
            throw requestSerializationError(code: NSURLErrorBadURL, description: "Invalid URL string: \(urlString)")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        applyChangedProperties(to: &request)
        return try requestBySerializingRequest(request, withParameters: parameters)
    }

    private func applyChangedProperties(to request: inout URLRequest) {
        let changed = changedRequestProperties
        if changed.contains("allowsCellularAccess") { request.allowsCellularAccess = allowsCellularAccess }
        if changed.contains("cachePolicy") { request.cachePolicy = cachePolicy }
        if changed.contains("httpShouldHandleCookies") { request.httpShouldHandleCookies = httpShouldHandleCookies }
        if changed.contains("httpShouldUsePipelining") { request.httpShouldUsePipelining = httpShouldUsePipelining }
        if changed.contains("networkServiceType") { request.networkServiceType = networkServiceType }
        if changed.contains("timeoutInterval") { request.timeoutInterval = timeoutInterval }
    }

    /// Copies the default headers the request does not already set.
    func applyDefaultHeaders(to request: inout URLRequest) {
        for (field, value) in httpRequestHeaders where request.value(forHTTPHeaderField: field) == nil {
            request.setValue(value, forHTTPHeaderField: field)
        }
    }

    /// Whether `request`'s method carries its parameters in the URL.
    func encodesParametersInURI(_ request: URLRequest) -> Bool {
        return httpMethodsEncodingParametersInURI.contains((request.httpMethod ?? "GET").uppercased())
    }

    /// Applies default headers, then encodes `parameters` into the URL query or a form body.
    open func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        var mutableRequest = request
        applyDefaultHeaders(to: &mutableRequest)

        var query: String?
        if let parameters = parameters {
            query = try queryString(for: request, parameters: parameters)
        }

        if encodesParametersInURI(request) {
            if let query = query, !query.isEmpty, let url = mutableRequest.url {
                guard let newURL = Self.url(url, appendingQuery: query) else {
                    throw requestSerializationError(code: NSURLErrorBadURL,
                                                    description: "The query string does not form a valid URL",
                                                    request: request)
                }
                mutableRequest.url = newURL
            }
        } else {
            // An empty string is still a valid x-www-form-urlencoded body (2.7's #2864).
            let body = query ?? ""
            guard let data = body.data(using: stringEncoding) else {
                throw requestSerializationError(code: NSURLErrorCannotDecodeContentData,
                                                description: "The parameters cannot be represented in \(TextEncoding.name(of: stringEncoding))",
                                                request: request)
            }
            if mutableRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                mutableRequest.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
            mutableRequest.httpBody = data
        }
        return mutableRequest
    }

    /// `url` with `query` appended after any existing query and before any fragment.
    static func url(_ url: URL, appendingQuery query: String) -> URL? {
        var string = url.absoluteString
        var fragment = ""
        if let hash = string.firstIndex(of: "#") {
            fragment = String(string[hash...])
            string = String(string[..<hash])
        }
        let separator = url.query != nil ? "&" : "?"
        return URL(string: string + separator + query + fragment)
    }

    // MARK: NSSecureCoding

    /// Serializers archive with secure coding.
    public class var supportsSecureCoding: Bool { return true }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init()
        httpRequestHeaders = SecureCodingHelpers.decodeStringDictionary(forKey: "mutableHTTPRequestHeaders", with: coder)
            ?? [:]
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "queryStringSerializationStyle", with: coder),
           let style = HTTPRequestQueryStringSerializationStyle(rawValue: raw) {
            queryStringSerializationStyle = style
        }
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "stringEncoding", with: coder) {
            stringEncoding = String.Encoding(rawValue: raw)
        }
        if let methods = SecureCodingHelpers.decodeStringSet(forKey: "HTTPMethodsEncodingParametersInURI", with: coder) {
            httpMethodsEncodingParametersInURI = methods
        }
    }

    /// Archives headers, query style, encoding and the URI-encoding methods. A custom
    /// query block cannot be archived and is dropped.
    open func encode(with coder: NSCoder) {
        coder.encode(NSDictionary(dictionary: httpRequestHeaders), forKey: "mutableHTTPRequestHeaders")
        coder.encode(NSNumber(value: queryStringSerializationStyle.rawValue), forKey: "queryStringSerializationStyle")
        coder.encode(NSNumber(value: stringEncoding.rawValue), forKey: "stringEncoding")
        SecureCodingHelpers.encode(httpMethodsEncodingParametersInURI, forKey: "HTTPMethodsEncodingParametersInURI",
                                   with: coder)
    }

    // MARK: NSCopying

    /// A new serializer of the same class with the same headers, query serialization and settings.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init()
        copyConfiguration(to: copy)
        return copy
    }

    /// Copies settings onto `other`; subclasses add their own after calling super.
    func copyConfiguration(to other: HTTPRequestSerializer) {
        other.httpRequestHeaders = httpRequestHeaders
        other.queryStringSerializationStyle = queryStringSerializationStyle
        other.queryStringSerialization = queryStringSerialization
        other.stringEncoding = stringEncoding
        other.httpMethodsEncodingParametersInURI = httpMethodsEncodingParametersInURI
        other.allowsCellularAccess = allowsCellularAccess
        other.cachePolicy = cachePolicy
        other.httpShouldHandleCookies = httpShouldHandleCookies
        other.httpShouldUsePipelining = httpShouldUsePipelining
        other.networkServiceType = networkServiceType
        other.timeoutInterval = timeoutInterval
        other.changedRequestProperties = changedRequestProperties
    }
}
