import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Encodes parameters as a property-list body (`AFPropertyListRequestSerializer`).
/// Methods in `httpMethodsEncodingParametersInURI` still get a query string.
// @unchecked: its settings live in `settings` (LockedState); the base class guards the rest.
open class PropertyListRequestSerializer: HTTPRequestSerializer, @unchecked Sendable {
    /// `format` and `writeOptions`, behind a lock of their own: the serializer is shared across threads.
    private struct Settings {
        var format: PropertyListSerialization.PropertyListFormat = .xml
        var writeOptions: PropertyListSerialization.WriteOptions = 0
    }

    private let settings = LockedState(Settings())

    /// Output format. Defaults to XML.
    open var format: PropertyListSerialization.PropertyListFormat {
        get { settings[\.format] } set { settings.set(\.format, to: newValue) }
    }

    /// Options passed to `PropertyListSerialization.data(fromPropertyList:format:options:)`.
    open var writeOptions: PropertyListSerialization.WriteOptions {
        get { settings[\.writeOptions] } set { settings.set(\.writeOptions, to: newValue) }
    }

    /// Creates a serializer writing XML property lists.
    public required init() {
        super.init()
    }

    /// Creates a serializer with a format and write options (2.7's `serializerWithFormat:writeOptions:`).
    public convenience init(format: PropertyListSerialization.PropertyListFormat,
                            writeOptions: PropertyListSerialization.WriteOptions) {
        self.init()
        self.format = format
        self.writeOptions = writeOptions
    }

    /// Applies default headers and writes `parameters` as a property list, setting
    /// `Content-Type: application/x-plist` unless the request has one. A value a
    /// property list cannot hold throws in `AFURLRequestSerializationErrorDomain`.
    open override func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?) throws -> URLRequest {
        if encodesParametersInURI(request) {
            return try super.requestBySerializingRequest(request, withParameters: parameters)
        }
        // Read once, so the check and the encoding agree even if the settings change meanwhile.
        let format = self.format, writeOptions = self.writeOptions
        return try requestWithBody(request, parameters: parameters, contentType: "application/x-plist", format: "a property list",
                                   invalid: { parameters in
                                       PropertyListSerialization.propertyList(parameters, isValidFor: format) ? nil
                                           : "\(type(of: parameters)) contains a value a property list cannot hold"
                                   },
                                   encode: { try PropertyListSerialization.data(fromPropertyList: $0, format: format, options: writeOptions) })
    }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "format", with: coder),
           let format = PropertyListSerialization.PropertyListFormat(rawValue: raw) {
            self.format = format
        }
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "writeOptions", with: coder) {
            writeOptions = PropertyListSerialization.WriteOptions(raw)
        }
    }

    /// Archives the base settings, format and write options.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(NSNumber(value: format.rawValue), forKey: "format")
        coder.encode(NSNumber(value: writeOptions), forKey: "writeOptions")
    }

    override func copyConfiguration(to other: HTTPRequestSerializer) {
        super.copyConfiguration(to: other)
        guard let other = other as? PropertyListRequestSerializer else { return }
        other.format = format
        other.writeOptions = writeOptions
    }
}
