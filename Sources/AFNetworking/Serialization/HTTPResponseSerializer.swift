import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
/// TEMPORARY until the serialization module lands.
public protocol URLResponseSerialization: AnyObject {
    func responseObject(for response: URLResponse?, data: Data?) throws -> Any?
}
open class HTTPResponseSerializer: NSObject, URLResponseSerialization, NSCopying, NSSecureCoding {
    public static var supportsSecureCoding: Bool { true }
    public required init?(coder: NSCoder) {}
    public func encode(with coder: NSCoder) {}
    public var acceptableStatusCodes: IndexSet? = IndexSet(integersIn: 200..<300)
    public override init() {}
    open func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        if let http = response as? HTTPURLResponse, let codes = acceptableStatusCodes, !codes.contains(http.statusCode) {
            throw NSError(domain: "AFURLResponseSerializationErrorDomain", code: NSURLErrorBadServerResponse, userInfo: [NSLocalizedDescriptionKey: "Request failed: (\(http.statusCode))"])
        }
        return data
    }
    open func copy(with zone: NSZone? = nil) -> Any { let c = HTTPResponseSerializer(); c.acceptableStatusCodes = acceptableStatusCodes; return c }
}
