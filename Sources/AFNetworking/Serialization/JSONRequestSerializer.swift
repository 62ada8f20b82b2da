import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a JSON body (`AFJSONRequestSerializer`). Methods in
/// `httpMethodsEncodingParametersInURI` still get a query string.
open class JSONRequestSerializer: HTTPRequestSerializer {
    /// Options passed to `JSONSerialization.data(withJSONObject:options:)`. Defaults to none.
    open var writingOptions: JSONSerialization.WritingOptions = []

    /// Creates a serializer with default settings.
    public required init() {
        super.init()
    }

    /// Creates a serializer with the given writing options (2.7's `serializerWithWritingOptions:`).
    public convenience init(writingOptions: JSONSerialization.WritingOptions) {
        self.init()
        self.writingOptions = writingOptions
    }

    /// Applies default headers and writes `parameters` as JSON, setting
    /// `Content-Type: application/json` unless the request has one.
    ///
    /// An object JSON cannot represent (a `Date`, a NaN, a bare string without
    /// `.fragmentsAllowed`) throws an error (code `NSURLErrorCannotDecodeRawData`) in
    /// `AFURLRequestSerializationErrorDomain` instead of trapping as Foundation would.
    open override func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        if encodesParametersInURI(request) {
            return try super.requestBySerializingRequest(request, withParameters: parameters)
        }
        var mutableRequest = request
        applyDefaultHeaders(to: &mutableRequest)
        guard let parameters = parameters else { return mutableRequest }

        let isContainer = JSONSerialization.isValidJSONObject(parameters)
        let isFragment = !isContainer && writingOptions.contains(.fragmentsAllowed)
            && JSONSerialization.isValidJSONObject([parameters])
        guard isContainer || isFragment else {
            throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                            description: "The parameters cannot be written as JSON: \(type(of: parameters)) contains a value JSON cannot represent, or is not an array or dictionary",
                                            request: request)
        }
        let body: Data
        do {
            body = try JSONSerialization.data(withJSONObject: parameters, options: writingOptions)
        } catch {
            throw requestSerializationError(code: NSURLErrorCannotDecodeRawData,
                                            description: "The parameters cannot be written as JSON",
                                            request: request, underlying: error)
        }
        if mutableRequest.value(forHTTPHeaderField: "Content-Type") == nil {
            mutableRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        mutableRequest.httpBody = body
        return mutableRequest
    }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "writingOptions", with: coder) {
            writingOptions = JSONSerialization.WritingOptions(rawValue: raw)
        }
    }

    /// Archives the base settings and the writing options.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(NSNumber(value: writingOptions.rawValue), forKey: "writingOptions")
    }

    override func copyConfiguration(to other: HTTPRequestSerializer) {
        super.copyConfiguration(to: other)
        (other as? JSONRequestSerializer)?.writingOptions = writingOptions
    }
}
