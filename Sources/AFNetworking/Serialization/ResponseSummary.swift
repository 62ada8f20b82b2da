@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What validation and text decoding read from a response: the status, the
/// MIME type and charset of its Content-Type, its URL. Made from an
/// `HTTPURLResponse`, or straight from the head the transport received, so
/// that a response that passes validation never needs an `HTTPURLResponse`
/// (swift-corelibs-foundation's initializer costs more than the rest of a
/// small request: it capitalizes every field name and re-parses Content-Type).
struct ResponseSummary {
    let statusCode: Int
    let mimeType: String?
    let textEncodingName: String?
    let url: URL?
    /// The full response, for error `userInfo` (built on demand for a head).
    let response: () -> URLResponse?

    init(_ response: HTTPURLResponse) {
        statusCode = response.statusCode
        // Not `mimeType`/`textEncodingName`: corelibs keeps blanks in the type
        // and matches `charset` case-sensitively.
        (mimeType, textEncodingName) = ContentType.of(response)
        url = response.url
        self.response = { response }
    }

    init(_ head: ReceivedResponse) {
        statusCode = head.statusCode
        url = head.url
        (mimeType, textEncodingName) = ContentType.parse(head.value(forField: "content-type"))
        response = { head.httpURLResponse }
    }
}
