import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Decodes JSON bodies with `JSONSerialization` (`AFJSONResponseSerializer`).
///
/// Accepts `application/json`, `text/json` and `text/javascript`. The body is read in
/// the charset of its `Content-Type` (UTF-8 by default); an empty or whitespace-only
/// body yields nil without an error.
// @unchecked: its settings live in `settings` (LockedState); the base class guards the rest.
open class JSONResponseSerializer: HTTPResponseSerializer, @unchecked Sendable {
    /// `readingOptions` and `removesKeysWithNullValues`, behind a lock of their own.
    private struct Settings {
        var readingOptions: JSONSerialization.ReadingOptions = []
        var removesKeysWithNullValues = false
    }

    private let settings = LockedState(Settings())

    /// Options passed to `JSONSerialization.jsonObject(with:options:)`. Defaults to none.
    open var readingOptions: JSONSerialization.ReadingOptions {
        get { settings[\.readingOptions] } set { settings.set(\.readingOptions, to: newValue) }
    }

    /// Whether dictionary entries with `NSNull` values are removed, recursively. Defaults to false.
    open var removesKeysWithNullValues: Bool {
        get { settings[\.removesKeysWithNullValues] } set { settings.set(\.removesKeysWithNullValues, to: newValue) }
    }

    /// Creates a serializer accepting the JSON content types.
    public required init() {
        super.init()
        acceptableContentTypes = ["application/json", "text/json", "text/javascript"]
    }

    /// Creates a serializer with the given reading options (2.7's `serializerWithReadingOptions:`).
    public convenience init(readingOptions: JSONSerialization.ReadingOptions) {
        self.init()
        self.readingOptions = readingOptions
    }

    /// Validates the response and decodes its JSON body.
    ///
    /// A bad status code still lets the body be parsed, as in 2.7; the thrown error is
    /// then the parse error with the validation error underneath, or the validation error.
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        let validationError = try validationErrorAllowingBody(response, data: data)
        return try decode(data, encodingName: ContentType.of(response).charset, response: { response }, validationError: validationError)
    }

    override func responseObject(forReceived response: ResponseSummary, data: Data?) throws -> Any? {
        let failure = validationError(response, data: data)
        // As validationErrorAllowingBody: a content-type failure ends it here.
        if let failure, errorChainContains(failure, code: NSURLErrorCannotDecodeContentData, domain: AFURLResponseSerializationErrorDomain) {
            throw failure
        }
        return try decode(data, encodingName: response.textEncodingName, response: response.response, validationError: failure)
    }

    /// Parses the body after validation; a status failure lets the body be
    /// parsed, the two errors chained.
    private func decode(_ data: Data?, encodingName: String?, response: () -> URLResponse?, validationError: NSError?) throws -> Any? {
        let (options, removesNulls) = settings.withLock { ($0.readingOptions, $0.removesKeysWithNullValues) }
        var object: Any?
        var parseError: NSError?
        if let data = data {
            do {
                if let payload = try TextEncoding.utf8Payload(data, encodingName: encodingName, response: response, fallback: stringEncoding) {
                    object = try JSONSerialization.jsonObject(with: payload, options: options)
                }
            } catch let error as NSError {
                parseError = error
            }
        }

        if let error = chainError(parseError, underlying: validationError) { throw error }

        if removesNulls, let value = object {
            object = JSONNullRemoval.removingNulls(from: value)
        }
        return object
    }

    // MARK: NSSecureCoding

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "readingOptions", with: coder) {
            readingOptions = JSONSerialization.ReadingOptions(rawValue: raw)
        }
        if coder.containsValue(forKey: "removesKeysWithNullValues") {
            removesKeysWithNullValues = coder.decodeBool(forKey: "removesKeysWithNullValues")
        }
    }

    /// Archives the validation settings, reading options and null handling.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(NSNumber(value: readingOptions.rawValue), forKey: "readingOptions")
        coder.encode(removesKeysWithNullValues, forKey: "removesKeysWithNullValues")
    }

    override func copyConfiguration(to other: HTTPResponseSerializer) {
        super.copyConfiguration(to: other)
        guard let other = other as? JSONResponseSerializer else { return }
        other.readingOptions = readingOptions
        other.removesKeysWithNullValues = removesKeysWithNullValues
    }
}
