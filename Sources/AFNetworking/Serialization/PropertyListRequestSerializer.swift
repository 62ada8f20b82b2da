import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters as a property-list body (`AFPropertyListRequestSerializer`).
/// Methods in `httpMethodsEncodingParametersInURI` still get a query string.
open class PropertyListRequestSerializer: HTTPRequestSerializer {
    /// Output format. Defaults to XML.
    open var format: PropertyListSerialization.PropertyListFormat = .xml

    /// Options passed to `PropertyListSerialization.data(fromPropertyList:format:options:)`.
    open var writeOptions: PropertyListSerialization.WriteOptions = 0

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
        return try requestWithBody(request, parameters: parameters, contentType: "application/x-plist", format: "a property list",
                                   invalid: { parameters in
                                       PropertyListSerialization.propertyList(parameters, isValidFor: self.format) ? nil
                                           : "\(type(of: parameters)) contains a value a property list cannot hold"
                                   },
                                   encode: { try PropertyListSerialization.data(fromPropertyList: $0, format: self.format, options: self.writeOptions) })
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
