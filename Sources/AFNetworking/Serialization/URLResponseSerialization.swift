import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a response and its body into a value (`AFURLResponseSerialization`).
///
/// Implementations validate the response first and throw an `NSError` when it is not
/// acceptable or the body cannot be decoded. Returning nil means "no content".
/// `Sendable`: a manager shares one serializer with every operation it runs, and those
/// serialize their responses on other threads.
public protocol URLResponseSerialization: AnyObject, Sendable {
    /// The value decoded from `data`, or nil when there is nothing to decode.
    func responseObject(for response: URLResponse?, data: Data?) throws -> Any?
}
