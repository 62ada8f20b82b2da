import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Parses the body into an `XMLDocument` (`AFXMLDocumentResponseSerializer`).
/// Accepts `application/xml` and `text/xml`; malformed XML is a thrown error.
// @unchecked: its one setting lives in `documentOptions` (LockedState); the base class guards the rest.
open class XMLDocumentResponseSerializer: HTTPResponseSerializer, @unchecked Sendable {
    /// `options`, behind a lock of its own: the serializer is shared across threads.
    private let documentOptions = LockedState<XMLNode.Options>([])

    /// Options passed to `XMLDocument(data:options:)`. Defaults to none. External entities
    /// and DTDs are never loaded: `nodeLoadExternalEntitiesAlways` and `…SameOriginOnly` are ignored.
    open var options: XMLNode.Options {
        get { documentOptions[\.self] } set { documentOptions.set(\.self, to: newValue) }
    }

    /// Creates a serializer accepting the XML content types.
    public required init() {
        super.init()
        acceptableContentTypes = ["application/xml", "text/xml"]
    }

    /// Creates a serializer with the given document options (2.7's `serializerWithXMLDocumentOptions:`).
    public convenience init(xmlDocumentOptions: XMLNode.Options) {
        self.init()
        options = xmlDocumentOptions
    }

    /// Validates the response and parses its body; nil when there is no body.
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        let validationError = try validationErrorAllowingBody(response, data: data)
        var document: XMLDocument?
        var parseError: NSError?
        if let data = data, !data.isEmpty {
            do {
                try Self.checkWellFormed(data)
                // External entities and DTDs stay unloaded whatever the options ask.
                let parseOptions = options.subtracting(XMLExternalEntityGuard.loadingOptions)
                document = try XMLExternalEntityGuard.run { try XMLDocument(data: data, options: parseOptions) }
            } catch let error as NSError {
                parseError = error
            }
        }
        if let error = chainError(parseError, underlying: validationError) { throw error }
        return document
    }

    /// Foundation on Linux builds `XMLDocument` in libxml2's recovery mode, which turns
    /// malformed input into a partial tree instead of an error. A strict SAX pass first
    /// makes malformed XML a thrown error, as it is on Apple platforms.
    static func checkWellFormed(_ data: Data) throws {
        // Bytes XML cannot hold (NUL, text invalid in its encoding) are refused
        // first: libxml2 takes a leading NUL for an empty document, and
        // FoundationXML's XMLDocument then crashes on the missing root.
        try XMLInputValidation.validate(data)
        // No delegate on purpose: FoundationXML's delegate callbacks crash on
        // some valid input (a processing instruction without data, found by
        // `make fuzz`); without one they are never called.
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        // On Linux `parse()` can report success after an error, so `parserError` decides.
        let succeeded = parser.parse()
        if let error = parser.parserError { throw error }
        if !succeeded {
            throw NSError(domain: XMLParser.errorDomain, code: XMLParser.ErrorCode.internalError.rawValue,
                          userInfo: [NSLocalizedDescriptionKey: "The XML document is not well-formed"])
        }
    }

    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "options", with: coder) {
            options = XMLNode.Options(rawValue: raw)
        }
    }

    /// Archives the validation settings and document options.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(NSNumber(value: options.rawValue), forKey: "options")
    }

    override func copyConfiguration(to other: HTTPResponseSerializer) {
        super.copyConfiguration(to: other)
        (other as? XMLDocumentResponseSerializer)?.options = options
    }
}
