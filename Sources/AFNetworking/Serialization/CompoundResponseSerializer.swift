import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Tries several serializers in order and returns the first value one of them
/// produces (`AFCompoundResponseSerializer`). When none does, it behaves like a plain
/// `HTTPResponseSerializer`: it validates and returns the raw data.
// @unchecked: its list lives in `serializers` (LockedState); the base class guards the rest.
open class CompoundResponseSerializer: HTTPResponseSerializer, @unchecked Sendable {
    /// `responseSerializers`, behind a lock of its own.
    private let serializers = LockedState<[HTTPResponseSerializer]>([])

    /// The serializers tried, in order.
    open private(set) var responseSerializers: [HTTPResponseSerializer] {
        get { serializers[\.self] } set { serializers.set(\.self, to: newValue) }
    }

    /// Creates a compound serializer with no component serializers.
    public required init() {
        super.init()
    }

    /// Creates a compound serializer (2.7's `compoundSerializerWithResponseSerializers:`).
    public convenience init(responseSerializers: [HTTPResponseSerializer]) {
        self.init()
        self.responseSerializers = responseSerializers
    }

    /// The first non-nil value a component serializer returns without throwing,
    /// otherwise the validated raw data.
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        // A copy of the list: the components run without this serializer's lock held.
        for serializer in responseSerializers {
            if let object = try? serializer.responseObject(for: response, data: data) {
                return object
            }
        }
        return try super.responseObject(for: response, data: data)
    }

    /// Restores a serializer archived with `encode(with:)`, components included.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
        if coder.containsValue(forKey: "responseSerializers"),
           let array = coder.decodeObject(of: [NSArray.self, HTTPResponseSerializer.self, JSONResponseSerializer.self,
                                               XMLParserResponseSerializer.self, XMLDocumentResponseSerializer.self,
                                               PropertyListResponseSerializer.self, ImageResponseSerializer.self,
                                               CompoundResponseSerializer.self],
                                          forKey: "responseSerializers") as? NSArray {
            responseSerializers = array.compactMap { $0 as? HTTPResponseSerializer }
        }
    }

    /// Archives the validation settings and the component serializers.
    open override func encode(with coder: NSCoder) {
        super.encode(with: coder)
        coder.encode(NSArray(array: responseSerializers), forKey: "responseSerializers")
    }

    override func copyConfiguration(to other: HTTPResponseSerializer) {
        super.copyConfiguration(to: other)
        (other as? CompoundResponseSerializer)?.responseSerializers = responseSerializers
    }
}
