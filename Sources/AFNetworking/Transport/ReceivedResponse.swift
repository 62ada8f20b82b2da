import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The parts of a response head as the network thread read them. Turning them
/// into an `HTTPURLResponse` costs more than the rest of a small request in
/// swift-corelibs-foundation, so that happens later, on whichever thread first
/// asks for the response, never on the network thread.
struct ReceivedResponse {
    let url: URL
    let statusCode: Int
    let statusLine: String
    let fields: [(name: String, value: String)]
    /// Where a 3xx response points, resolved against the request URL by curl.
    let redirectURL: URL?

    /// The first value of a header field, compared without case.
    func value(forField wanted: String) -> String? {
        for (name, value) in fields where name.utf8.count == wanted.utf8.count && name.lowercased() == wanted.lowercased() {
            return value
        }
        return nil
    }

    /// Every value of a header field, in order (for repeated fields).
    func values(forField wanted: String) -> [String] {
        fields.filter { $0.name.lowercased() == wanted.lowercased() }.map(\.value)
    }

    /// Content-Length, or -1 when absent or unparsable (Foundation's meaning).
    var expectedContentLength: Int64 {
        value(forField: "content-length").flatMap { Int64($0) } ?? -1
    }

    func makeHTTPURLResponse() -> HTTPURLResponse? {
        HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: ResponseHead.httpVersion(ofStatusLine: statusLine),
                        headerFields: ResponseHead.headerFields(fields))
    }
}
