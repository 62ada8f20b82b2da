import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Decodes property-list bodies (`AFPropertyListResponseSerializer`). Accepts `application/x-plist`.
// @unchecked: its settings live in `settings` (LockedState); the base class guards the rest.
open class PropertyListResponseSerializer: HTTPResponseSerializer, @unchecked Sendable {
    /// `format` and `readOptions`, behind a lock of their own.
    private struct Settings {
        var format: PropertyListSerialization.PropertyListFormat = .xml
        var readOptions: PropertyListSerialization.ReadOptions = []
    }

    private let settings = LockedState(Settings())

    /// The format the caller expects; kept for parity with 2.7, which reads any format.
    open var format: PropertyListSerialization.PropertyListFormat {
        get { settings[\.format] } set { settings.set(\.format, to: newValue) }
    }

    /// Options passed to `PropertyListSerialization.propertyList(from:options:format:)`.
    open var readOptions: PropertyListSerialization.ReadOptions {
        get { settings[\.readOptions] } set { settings.set(\.readOptions, to: newValue) }
    }

    /// Creates a serializer accepting `application/x-plist`.
    public required init() {
        super.init()
        acceptableContentTypes = ["application/x-plist"]
    }

    /// Creates a serializer with a format and read options (2.7's `serializerWithFormat:readOptions:`).
    public convenience init(format: PropertyListSerialization.PropertyListFormat,
                            readOptions: PropertyListSerialization.ReadOptions) {
        self.init()
        self.format = format
        self.readOptions = readOptions
    }

    /// Validates the response and decodes its property list; nil for no body
    /// (a 204, or an empty body as the Linux transport delivers it).
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        let validationError = try validationErrorAllowingBody(response, data: data)
        var object: Any?
        var parseError: NSError?
        if let data = data, !data.isEmpty {
            if let problem = BinaryPropertyListBounds.problem(in: data) {
                // Refused before Foundation expands it (see BinaryPropertyListBounds).
                parseError = responseDecodingError(description: "The property list could not be read: \(problem).",
                                                   reason: problem, response: response, data: data)
            } else {
                do {
                    object = try PropertyListSerialization.propertyList(from: data, options: readOptions, format: nil)
                } catch let error as NSError {
                    parseError = error
                }
            }
        }
        if let error = chainError(parseError, underlying: validationError) { throw error }
        return object
    }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "format", with: coder),
           let format = PropertyListSerialization.PropertyListFormat(rawValue: raw) {
            self.format = format
        }
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "readOptions", with: coder) {
            readOptions = PropertyListSerialization.ReadOptions(rawValue: raw)
        }
    }

    /// Archives the validation settings, format and read options.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(NSNumber(value: format.rawValue), forKey: "format")
        coder.encode(NSNumber(value: readOptions.rawValue), forKey: "readOptions")
    }

    override func copyConfiguration(to other: HTTPResponseSerializer) {
        super.copyConfiguration(to: other)
        guard let other = other as? PropertyListResponseSerializer else { return }
        other.format = format
        other.readOptions = readOptions
    }
}
