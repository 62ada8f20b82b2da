import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response head as the network thread read it. Turning it into an
/// `HTTPURLResponse` costs more than the rest of a small request in
/// swift-corelibs-foundation, so that happens on first use, on whichever
/// thread asks, never on the network thread, and only once.
package final class ReceivedResponse: Sendable {
    package let url: URL
    package let statusCode: Int
    package let statusLine: String
    package let fields: [(name: String, value: String)]
    /// Where a 3xx response points, resolved against the request URL by curl
    /// (known once the transfer has completed).
    package let redirectURL: URL?
    private let built = LockedState<HTTPURLResponse?>(nil)

    package init(url: URL, statusCode: Int, statusLine: String, fields: [(name: String, value: String)], redirectURL: URL? = nil) {
        self.url = url
        self.statusCode = statusCode
        self.statusLine = statusLine
        self.fields = fields
        self.redirectURL = redirectURL
    }

    /// The same head with the redirect target curl resolved.
    package func withRedirectURL(_ target: URL?) -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: statusCode, statusLine: statusLine, fields: fields, redirectURL: target)
    }

    /// The first value of a header field, compared without case.
    package func value(forField wanted: String) -> String? {
        let count = wanted.utf8.count
        for (name, value) in fields where name.utf8.count == count && name.lowercased() == wanted.lowercased() {
            return value
        }
        return nil
    }

    /// Every value of a header field, in order (for repeated fields).
    package func values(forField wanted: String) -> [String] {
        let lowered = wanted.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// Content-Length, or -1 when absent or unparsable (Foundation's meaning).
    package var expectedContentLength: Int64 {
        value(forField: "content-length").flatMap { Int64($0) } ?? -1
    }

    /// The `HTTPURLResponse`, built on first use and kept.
    package var httpURLResponse: HTTPURLResponse? {
        NetworkThread.assertNotCurrent()
        return built.withLock { cached in
            if let cached { return cached }
            cached = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: ResponseHead.httpVersion(ofStatusLine: statusLine),
                                     headerFields: ResponseHead.headerFields(fields))
            return cached
        }
    }
}
