import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Encodes parameters into a request (`AFURLRequestSerialization`).
///
/// `Sendable`: a manager shares one serializer with requests built on any thread.
public protocol URLRequestSerialization: AnyObject, Sendable {
    /// A copy of `request` with default headers applied and `parameters` encoded into it.
    func requestBySerializingRequest(_ request: URLRequest, withParameters parameters: Any?) throws -> URLRequest
}

/// How `HTTPRequestSerializer` turns parameters into a query string
/// (`AFHTTPRequestQueryStringSerializationStyle`).
public enum HTTPRequestQueryStringSerializationStyle: UInt, Sendable {
    /// Nested `a[b]=1`, arrays `a[]=1`, sorted keys, RFC 3986 percent-escaping.
    case defaultStyle = 0
}
