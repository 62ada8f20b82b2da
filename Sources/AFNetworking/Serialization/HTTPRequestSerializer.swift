import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Builds requests with default headers and form-URL-encoded parameters
/// (`AFHTTPRequestSerializer`). Parameters go into the query string for the methods in
/// `httpMethodsEncodingParametersInURI` and into an `application/x-www-form-urlencoded`
/// body for the others.
///
/// A manager shares one serializer with every request it builds, so its settings may be
/// changed from any thread while requests are being built on others.
// @unchecked: every mutable stored property lives in `state` (LockedState); subclasses guard their own.
open class HTTPRequestSerializer: NSObject, URLRequestSerialization, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// Everything the serializer can be told, behind one lock.
    private struct State {
        var stringEncoding: String.Encoding = .utf8
        /// Request properties the caller changed. As in 2.7, only these are copied onto new
        /// requests, so a request keeps Foundation's defaults for everything left alone.
        var changedRequestProperties: Set<String> = []
        var allowsCellularAccess = true
        var cachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
        var httpShouldHandleCookies = true
        var httpShouldUsePipelining = false
        var networkServiceType: URLRequest.NetworkServiceType = .default
        var timeoutInterval: TimeInterval = 60
        var httpRequestHeaders: [String: String] = [:]
        /// The `Authorization` values the Basic setter made from user names
        /// holding ":" (see `setAuthorizationHeaderFieldWithUsername`): while
        /// one is the field's value, building a request throws.
        var basicValuesWithColonUser: Set<String> = []
        var httpMethodsEncodingParametersInURI: Set<String> = ["GET", "HEAD", "DELETE"]
        var queryStringSerializationStyle: HTTPRequestQueryStringSerializationStyle = .defaultStyle
        /// A caller-supplied query string builder, which replaces the style while set.
        var queryStringSerialization: (@Sendable (URLRequest, Any) throws -> String)?
    }

    private let state = LockedState(State())

    /// Sets a request property and records it as changed, in one locked step.
    private func setRequestProperty<Value>(_ key: String, _ path: WritableKeyPath<State, Value>, _ value: Value) {
        state.withLock {
            $0[keyPath: path] = value
            $0.changedRequestProperties.insert(key)
        }
    }

    /// Encoding of the form body. Defaults to UTF-8.
    open var stringEncoding: String.Encoding {
        get { state[\.stringEncoding] } set { state.set(\.stringEncoding, to: newValue) }
    }

    /// Whether created requests may use a cellular connection. Applied once set.
    open var allowsCellularAccess: Bool {
        get { state[\.allowsCellularAccess] }
        set { setRequestProperty("allowsCellularAccess", \.allowsCellularAccess, newValue) }
    }
    /// Cache policy of created requests. Applied once set.
    open var cachePolicy: URLRequest.CachePolicy {
        get { state[\.cachePolicy] }
        set { setRequestProperty("cachePolicy", \.cachePolicy, newValue) }
    }
    /// Whether created requests send and store cookies. Applied once set.
    open var httpShouldHandleCookies: Bool {
        get { state[\.httpShouldHandleCookies] }
        set { setRequestProperty("httpShouldHandleCookies", \.httpShouldHandleCookies, newValue) }
    }
    /// Whether created requests may be pipelined. Applied once set.
    open var httpShouldUsePipelining: Bool {
        get { state[\.httpShouldUsePipelining] }
        set { setRequestProperty("httpShouldUsePipelining", \.httpShouldUsePipelining, newValue) }
    }
    /// Network service type of created requests. Applied once set.
    open var networkServiceType: URLRequest.NetworkServiceType {
        get { state[\.networkServiceType] }
        set { setRequestProperty("networkServiceType", \.networkServiceType, newValue) }
    }
    /// Timeout of created requests, in seconds. Applied once set; Foundation's default is 60.
    open var timeoutInterval: TimeInterval {
        get { state[\.timeoutInterval] }
        set { setRequestProperty("timeoutInterval", \.timeoutInterval, newValue) }
    }

    /// Default headers, applied to each request that does not set the field itself.
    public private(set) var httpRequestHeaders: [String: String] {
        get { state[\.httpRequestHeaders] } set { state.set(\.httpRequestHeaders, to: newValue) }
    }

    /// Methods whose parameters go into the URL query rather than the body. Defaults to GET, HEAD, DELETE.
    open var httpMethodsEncodingParametersInURI: Set<String> {
        get { state[\.httpMethodsEncodingParametersInURI] } set { state.set(\.httpMethodsEncodingParametersInURI, to: newValue) }
    }

    /// The built-in query string style in use.
    public private(set) var queryStringSerializationStyle: HTTPRequestQueryStringSerializationStyle {
        get { state[\.queryStringSerializationStyle] } set { state.set(\.queryStringSerializationStyle, to: newValue) }
    }

    /// Creates a serializer with `Accept-Language` and `User-Agent` set.
    public required override init() {
        super.init()
        let headers = ["Accept-Language": DefaultHeaders.acceptLanguage(), "User-Agent": DefaultHeaders.userAgent()]
        state.set(\.httpRequestHeaders, to: headers)
    }

    /// Creates a serializer with default settings (2.7's `+serializer`).
    open class func serializer() -> Self {
        return self.init()
    }

    // MARK: Headers

    /// Sets a default header; nil removes it. Field names match case-insensitively, as HTTP's do.
    /// A value holding CR, LF or NUL, or a name that is not an RFC 9110 token, is kept, and
    /// building a request that would carry it throws `NSURLErrorBadURL` naming the field
    /// (corelibs' `URLRequest` would drop such a value, and the request go out without it).
    open func setValue(_ value: String?, forHTTPHeaderField field: String) {
        state.withLock { state in
            if let existing = Self.storedHeaderKey(for: field, in: state.httpRequestHeaders) {
                state.httpRequestHeaders[existing] = nil
            }
            if let value = value { state.httpRequestHeaders[field] = value }
        }
    }

    /// The default value of `field`, if any.
    open func value(forHTTPHeaderField field: String) -> String? {
        let headers = httpRequestHeaders
        return Self.storedHeaderKey(for: field, in: headers).flatMap { headers[$0] }
    }

    private static func storedHeaderKey(for field: String, in headers: [String: String]) -> String? {
        if headers[field] != nil { return field }
        let lowered = field.lowercased()
        return headers.keys.first { $0.lowercased() == lowered }
    }

    /// Sets `Authorization: Basic …` from `username:password` in UTF-8.
    ///
    /// A user name holding ":" cannot be sent this way (RFC 7617 §2: the server
    /// splits at the first colon, so it would read another user name and
    /// password). The setter cannot throw (2.7's signature), so the field is
    /// kept and building a request that would carry it throws `NSURLErrorBadURL`
    /// in `NSURLErrorDomain`, as for any field that cannot be sent as it is.
    open func setAuthorizationHeaderFieldWithUsername(_ username: String, password: String) {
        let value = "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
        // Marked before it is set, and never unmarked (such a value is never
        // sendable): concurrent calls cannot leave it set and unmarked.
        if username.contains(":") { state.withLock { _ = $0.basicValuesWithColonUser.insert(value) } }
        setValue(value, forHTTPHeaderField: "Authorization")
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
        state.withLock {
            $0.queryStringSerializationStyle = style
            $0.queryStringSerialization = nil
        }
    }

    /// Uses `block` to build query strings; an error it throws fails the request.
    /// `@Sendable` because requests may be built on any thread.
    @preconcurrency
    open func setQueryStringSerializationWith(_ block: (@Sendable (URLRequest, Any) throws -> String)?) {
        state.set(\.queryStringSerialization, to: block)
    }

    /// The query string for `parameters`, from the custom block or the style.
    func queryString(for request: URLRequest, parameters: Any) throws -> String {
        // Copied out: the caller's block runs without the lock held.
        let (block, style) = state.withLock { ($0.queryStringSerialization, $0.queryStringSerializationStyle) }
        if let block = block {
            return try block(request, parameters)
        }
        switch style {
        case .defaultStyle:
            // Refused rather than sent as some `description` the server cannot read.
            if let reason = QueryStringEncoding.unrepresentable(parameters) {
                throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                                description: "The parameters cannot be written as a query string or form: \(reason)",
                                                request: request)
            }
            return QueryStringEncoding.queryString(from: parameters)
        }
    }

    // MARK: Building requests

    /// A request for `method` and `urlString` with `parameters` encoded.
    /// Throws `NSURLErrorBadURL` in `AFURLRequestSerializationErrorDomain` for an invalid URL string,
    /// and `NSURLErrorCannotDecodeRawData` in that domain for parameters with no query-string form
    /// (not a dictionary, array or set, or a leaf such as a struct whose text would be its `description`).
    /// A method that is not an RFC 9110 token (a CR, LF or space in it), and a default header that
    /// cannot be sent (a CR, LF or NUL in its value, or a name that is not a token), throw
    /// `NSURLErrorBadURL` in `NSURLErrorDomain` naming it, the error the transport gives such a request.
    open func request(withMethod method: String, urlString: String, parameters: Any?) throws -> URLRequest {
        guard let url = URL(string: urlString) else {
            throw requestSerializationError(code: NSURLErrorBadURL, description: "Invalid URL string: \(urlString)")
        }
        // The transport refuses it too; refused here, a verb fails before it makes an operation or task.
        if let problem = RequestValidation.methodProblem(method, url: url) { throw problem }
        var request = URLRequest(url: url)
        request.httpMethod = method
        applyChangedProperties(to: &request)
        return try requestBySerializingRequest(request, withParameters: parameters)
    }

    private func applyChangedProperties(to request: inout URLRequest) {
        // The values are read through the (overridable) properties, outside the lock.
        let changed = state[\.changedRequestProperties]
        if changed.contains("allowsCellularAccess") { request.allowsCellularAccess = allowsCellularAccess }
        if changed.contains("cachePolicy") { request.cachePolicy = cachePolicy }
        if changed.contains("httpShouldHandleCookies") { request.httpShouldHandleCookies = httpShouldHandleCookies }
        if changed.contains("httpShouldUsePipelining") { Self.setPipelining(httpShouldUsePipelining, on: &request) }
        if changed.contains("networkServiceType") { request.networkServiceType = networkServiceType }
        if changed.contains("timeoutInterval") { request.timeoutInterval = timeoutInterval }
    }

    /// Sets `URLRequest.httpShouldUsePipelining`, which FoundationNetworking deprecates;
    /// 2.7 copies it onto requests, so we still do, through a protocol that reaches it
    /// without the deprecation warning.
    private static func setPipelining<Request: PipeliningConfigurable>(_ value: Bool, on request: inout Request) {
        request.httpShouldUsePipelining = value
    }

    /// Copies the default headers the request does not already set. One that
    /// cannot be sent as it is (a CR, LF or NUL in its value, a name that is
    /// not a token) throws `NSURLErrorBadURL` naming it: corelibs'
    /// `URLRequest.setValue` would drop it without a word, and the request
    /// would go out without it (`"Bearer token\n"`: no Authorization at all).
    func applyDefaultHeaders(to request: inout URLRequest) throws {
        let (headers, unsendableBasic) = state.withLock { ($0.httpRequestHeaders, $0.basicValuesWithColonUser) }
        for (field, value) in headers where request.value(forHTTPHeaderField: field) == nil {
            if let problem = HeaderFieldValidation.problem(name: field, value: value, url: request.url, role: "default header field") {
                throw problem
            }
            if !unsendableBasic.isEmpty, unsendableBasic.contains(value), field.caseInsensitiveCompare("Authorization") == .orderedSame {
                throw HeaderFieldValidation.basicUserWithColon(url: request.url)
            }
            request.setValue(value, forHTTPHeaderField: field)
        }
    }

    /// Whether `request`'s method carries its parameters in the URL.
    func encodesParametersInURI(_ request: URLRequest) -> Bool {
        return httpMethodsEncodingParametersInURI.contains((request.httpMethod ?? "GET").uppercased())
    }

    /// Applies default headers, then encodes `parameters` into the URL query or a form body.
    /// A default header that cannot be sent (see `setValue(_:forHTTPHeaderField:)`) throws
    /// `NSURLErrorBadURL` in `NSURLErrorDomain` naming the field.
    open func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        var mutableRequest = request
        try applyDefaultHeaders(to: &mutableRequest)

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

    // MARK: Multipart forms

    // Declared here so that subclasses can override them; the work is in
    // HTTPRequestSerializer+Multipart.swift.

    /// A `multipart/form-data` request: `parameters` become form fields (flattened as
    /// for query strings), then `block` appends further parts. The body is a stream
    /// with an exact `Content-Length`. GET and HEAD cannot carry a body and throw, as
    /// does any error `block` throws (for example a missing file). `block` runs on the
    /// calling thread before this returns; it is `@Sendable` because callers may build
    /// requests from any thread.
    @preconcurrency
    open func multipartFormRequest(withMethod method: String, urlString: String, parameters: [String: Any]?,
                                   constructingBodyWith block: (@Sendable (MultipartFormData) throws -> Void)?) throws -> URLRequest {
        try makeMultipartFormRequest(withMethod: method, urlString: urlString, parameters: parameters, constructingBodyWith: block)
    }

    /// Writes the multipart body of `request` to `fileURL` in the background and returns
    /// the request without its body stream, for uploading from a file instead.
    /// `handler` runs on the main queue with nil or the error that stopped the copy.
    /// The body goes to a temporary file beside `fileURL` that replaces it once
    /// complete: a copy that fails leaves an existing file unchanged and no partial one.
    @preconcurrency
    open func request(withMultipartForm request: URLRequest, writingStreamContentsToFile fileURL: URL,
                      completionHandler handler: (@Sendable (Error?) -> Void)?) -> URLRequest {
        makeRequest(withMultipartForm: request, writingStreamContentsToFile: fileURL, completionHandler: handler)
    }

    // MARK: AFNetworking 2.x spellings

    // Deprecated with `renamed:` and forwarding to the methods above. Declared
    // here, in the class body, rather than in Compatibility+RequestSerialization.swift:
    // Swift cannot override a member declared in an extension.

    /// 2.7's `-valueForHTTPHeaderField:`.
    @available(*, deprecated, renamed: "value(forHTTPHeaderField:)")
    open func valueForHTTPHeaderField(_ field: String) -> String? {
        value(forHTTPHeaderField: field)
    }

    /// 2.7's `-setQueryStringSerializationWithStyle:`.
    @available(*, deprecated, renamed: "setQueryStringSerializationWith(_:)")
    open func setQueryStringSerializationWithStyle(_ style: HTTPRequestQueryStringSerializationStyle) {
        setQueryStringSerializationWith(style)
    }

    /// 2.7's `-setQueryStringSerializationWithBlock:` (the block throws instead of filling an `NSError **`).
    @available(*, deprecated, renamed: "setQueryStringSerializationWith(_:)")
    @preconcurrency
    open func setQueryStringSerializationWithBlock(_ block: (@Sendable (URLRequest, Any) throws -> String)?) {
        setQueryStringSerializationWith(block)
    }

    /// 2.7's `-requestWithMethod:URLString:parameters:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "request(withMethod:urlString:parameters:)")
    open func requestWithMethod(_ method: String, URLString: String, parameters: Any?) throws -> URLRequest {
        try request(withMethod: method, urlString: URLString, parameters: parameters)
    }

    /// 2.7's `-multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:error:` as Swift 2 imported it.
    @available(*, deprecated, renamed: "multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:)")
    @preconcurrency
    open func multipartFormRequestWithMethod(_ method: String, URLString: String, parameters: [String: Any]?,
                                             constructingBodyWithBlock block: (@Sendable (MultipartFormData) throws -> Void)?) throws -> URLRequest {
        try multipartFormRequest(withMethod: method, urlString: URLString, parameters: parameters, constructingBodyWith: block)
    }

    /// 2.7's `-requestWithMultipartFormRequest:writingStreamContentsToFile:completionHandler:`.
    @available(*, deprecated, renamed: "request(withMultipartForm:writingStreamContentsToFile:completionHandler:)")
    @preconcurrency
    open func requestWithMultipartFormRequest(_ request: URLRequest, writingStreamContentsToFile fileURL: URL,
                                              completionHandler handler: (@Sendable (Error?) -> Void)?) -> URLRequest {
        self.request(withMultipartForm: request, writingStreamContentsToFile: fileURL, completionHandler: handler)
    }

    // MARK: NSSecureCoding

    /// Serializers archive with secure coding.
    public class var supportsSecureCoding: Bool { return true }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init()
        let headers = SecureCodingHelpers.decodeStringDictionary(forKey: "mutableHTTPRequestHeaders", with: coder) ?? [:]
        var style: HTTPRequestQueryStringSerializationStyle?
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "queryStringSerializationStyle", with: coder) {
            style = HTTPRequestQueryStringSerializationStyle(rawValue: raw)
        }
        let encoding = SecureCodingHelpers.decodeUInt(forKey: "stringEncoding", with: coder).map(String.Encoding.init(rawValue:))
        let methods = SecureCodingHelpers.decodeStringSet(forKey: "HTTPMethodsEncodingParametersInURI", with: coder)
        let unsendableBasic = SecureCodingHelpers.decodeStringSet(forKey: Self.unsendableBasicKey, with: coder) ?? []
        state.withLock { state in
            state.httpRequestHeaders = headers
            state.basicValuesWithColonUser = unsendableBasic
            if let style { state.queryStringSerializationStyle = style }
            if let encoding { state.stringEncoding = encoding }
            if let methods { state.httpMethodsEncodingParametersInURI = methods }
        }
    }

    /// Archives headers, query style, encoding and the URI-encoding methods. A custom
    /// query block cannot be archived and is dropped.
    open func encode(with coder: NSCoder) {
        let (headers, style, unsendableBasic) = state.withLock {
            ($0.httpRequestHeaders, $0.queryStringSerializationStyle, $0.basicValuesWithColonUser)
        }
        coder.encode(NSDictionary(dictionary: headers), forKey: "mutableHTTPRequestHeaders")
        // So a restored serializer still refuses to send them (2.7 has no such key).
        if !unsendableBasic.isEmpty { SecureCodingHelpers.encode(unsendableBasic, forKey: Self.unsendableBasicKey, with: coder) }
        coder.encode(NSNumber(value: style.rawValue), forKey: "queryStringSerializationStyle")
        coder.encode(NSNumber(value: stringEncoding.rawValue), forKey: "stringEncoding")
        SecureCodingHelpers.encode(httpMethodsEncodingParametersInURI, forKey: "HTTPMethodsEncodingParametersInURI",
                                   with: coder)
    }

    /// The archive key of `basicValuesWithColonUser`.
    private static let unsendableBasicKey = "AFNBasicAuthorizationWithColonUser"

    // MARK: NSCopying

    /// A new serializer of the same class with the same headers, query serialization and settings.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init()
        copyConfiguration(to: copy)
        return copy
    }

    /// Copies settings onto `other`; subclasses add their own after calling super.
    /// One snapshot, taken under this serializer's lock and written under the other's
    /// (never both at once), so a copy made while another thread changes settings is
    /// never a mix of old and new.
    func copyConfiguration(to other: HTTPRequestSerializer) {
        let snapshot = state.withLock { $0 }
        other.state.withLock { $0 = snapshot }
    }
}

/// `URLRequest.httpShouldUsePipelining` as a requirement: the conformance reaches the
/// deprecated property without a deprecation warning at each use.
private protocol PipeliningConfigurable {
    var httpShouldUsePipelining: Bool { get set }
}

extension URLRequest: PipeliningConfigurable {}
