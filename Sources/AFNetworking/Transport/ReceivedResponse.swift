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

    /// Content-Length, or -1 when absent or unparsable (Foundation's meaning).
    var expectedContentLength: Int64 {
        for (name, value) in fields where name.utf8.count == 14 && name.lowercased() == "content-length" {
            return Int64(value) ?? -1
        }
        return -1
    }

    func makeHTTPURLResponse() -> HTTPURLResponse? {
        HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: ResponseHead.httpVersion(ofStatusLine: statusLine),
                        headerFields: ResponseHead.headerFields(fields))
    }
}
