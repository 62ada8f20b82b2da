import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Returns an `XMLParser` over the body (`AFXMLParserResponseSerializer`); parsing is
/// left to the caller's delegate, as in 2.7. Accepts `application/xml` and `text/xml`.
// @unchecked: no stored state of its own; the base class guards its settings.
open class XMLParserResponseSerializer: HTTPResponseSerializer, @unchecked Sendable {
    /// Creates a serializer accepting the XML content types.
    public required init() {
        super.init()
        acceptableContentTypes = ["application/xml", "text/xml"]
    }

    /// Validates the response and wraps the body in an `XMLParser`; nil when there is no body.
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        let validationError = try validationErrorAllowingBody(response, data: data)
        if let error = validationError { throw error }
        guard let data = data, !data.isEmpty else { return nil }
        // The caller will parse with a delegate: bytes that would crash
        // FoundationXML's callbacks are refused here.
        try XMLInputValidation.validate(data)
        let parser = XMLParser(data: data)
        // Stated, not inherited: external entities are never loaded unless the caller opts in on this parser.
        parser.externalEntityResolvingPolicy = .never
        parser.shouldResolveExternalEntities = false
        return parser
    }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
    }
}
