import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Encodes parameters as a JSON body (`AFJSONRequestSerializer`). Methods in
/// `httpMethodsEncodingParametersInURI` still get a query string.
// @unchecked: its one setting lives in `options` (LockedState); the base class guards the rest.
open class JSONRequestSerializer: HTTPRequestSerializer, @unchecked Sendable {
    /// `writingOptions`, behind a lock of its own: the serializer is shared across threads.
    private let options = LockedState<JSONSerialization.WritingOptions>([])

    /// Options passed to `JSONSerialization.data(withJSONObject:options:)`. Defaults to none.
    open var writingOptions: JSONSerialization.WritingOptions {
        get { options[\.self] } set { options.set(\.self, to: newValue) }
    }

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
        // Read once, so the check and the encoding agree even if the options change meanwhile.
        let writingOptions = self.writingOptions
        return try requestWithBody(request, parameters: parameters, contentType: "application/json", format: "JSON",
                                   invalid: { parameters in
                                       let isContainer = JSONSerialization.isValidJSONObject(parameters)
                                       let isFragment = !isContainer && writingOptions.contains(.fragmentsAllowed)
                                           && JSONSerialization.isValidJSONObject([parameters])
                                       return isContainer || isFragment ? nil
                                           : "\(type(of: parameters)) contains a value JSON cannot represent, or is not an array or dictionary"
                                   },
                                   encode: { try JSONSerialization.data(withJSONObject: $0, options: writingOptions) })
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
