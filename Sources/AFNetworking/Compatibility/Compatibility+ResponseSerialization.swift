import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

// AFNetworking 2.x spellings of the response serializers, deprecated with
// `renamed:` and forwarding to the current API.

// MARK: - Response serialization

extension URLResponseSerialization {
    /// 2.7's `-responseObjectForResponse:data:error:` with its error
    /// out-parameter (2.7 declared it `NS_SWIFT_NOTHROW`): nil and `error` set on failure.
    @available(*, deprecated, renamed: "responseObject(for:data:)")
    public func responseObjectForResponse(_ response: URLResponse?, data: Data?,
                                          error: UnsafeMutablePointer<NSError?>?) -> Any? {
        do {
            return try responseObject(for: response, data: data)
        } catch let thrown {
            error?.pointee = thrown as NSError
            return nil
        }
    }
}

// 2.7's -validateResponse:data:error: is declared `open` in the class body
// (Serialization/HTTPResponseSerializer.swift), so that a subclass can override
// it: Swift cannot override a member declared in an extension.

extension JSONResponseSerializer {
    /// 2.7's `+serializerWithReadingOptions:`.
    @available(*, deprecated, renamed: "init(readingOptions:)")
    public static func serializerWithReadingOptions(_ readingOptions: JSONSerialization.ReadingOptions) -> JSONResponseSerializer {
        JSONResponseSerializer(readingOptions: readingOptions)
    }
}

extension XMLDocumentResponseSerializer {
    /// 2.7's `+serializerWithXMLDocumentOptions:`.
    @available(*, deprecated, renamed: "init(xmlDocumentOptions:)")
    public static func serializerWithXMLDocumentOptions(_ mask: XMLNode.Options) -> XMLDocumentResponseSerializer {
        XMLDocumentResponseSerializer(xmlDocumentOptions: mask)
    }
}

extension PropertyListResponseSerializer {
    /// 2.7's `+serializerWithFormat:readOptions:`.
    @available(*, deprecated, renamed: "init(format:readOptions:)")
    public static func serializerWithFormat(_ format: PropertyListSerialization.PropertyListFormat,
                                            readOptions: PropertyListSerialization.ReadOptions) -> PropertyListResponseSerializer {
        PropertyListResponseSerializer(format: format, readOptions: readOptions)
    }
}

extension CompoundResponseSerializer {
    /// 2.7's `+compoundSerializerWithResponseSerializers:`.
    @available(*, deprecated, renamed: "init(responseSerializers:)")
    public static func compoundSerializerWithResponseSerializers(_ responseSerializers: [HTTPResponseSerializer]) -> CompoundResponseSerializer {
        CompoundResponseSerializer(responseSerializers: responseSerializers)
    }
}
