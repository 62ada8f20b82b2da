import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response head as the network thread read it: its bytes and field
/// positions, with Strings made only for what is asked. Turning it into an
/// `HTTPURLResponse` costs more than the rest of a small request in
/// swift-corelibs-foundation, so that happens on first use, on whichever
/// thread asks, never on the network thread, and only once.
package final class ReceivedResponse: Sendable {
    package let url: URL
    package let statusCode: Int
    let head: HeadBytes
    /// Where a 3xx response points, resolved against the request URL by curl
    /// (known once the transfer has completed).
    package let redirectURL: URL?
    /// Trailer fields that followed the body (known once the transfer has
    /// completed), in order; repeated names are kept apart.
    package let trailerFields: [(name: String, value: String)]
    /// The proxy whose own answer this may be (nil: the origin's). Only a
    /// head through an HTTP proxy that forwards the request (plain http), and
    /// the proxy's refusal of CONNECT, name one: a head through a CONNECT
    /// tunnel or a SOCKS proxy is the origin's, a 407 included (RFC 9110
    /// §15.5.8). A 407's protection space names it; a CONNECT answer is
    /// never reported as a head.
    package let proxy: ProxyEndpoint?
    /// The proxy's own refusal to open a CONNECT tunnel (its 407): a proxy's
    /// head, handed over only so that a challenge can answer it, never to be
    /// presented as the origin's response or to set the origin's cookies.
    package let isTunnelRefusal: Bool
    /// A proxy's own answer to the client: its refusal of CONNECT, or a 407
    /// from the HTTP proxy that forwards this request. Its `Set-Cookie` is the
    /// proxy's, never stored as the origin's cookies.
    package var isProxysOwnAnswer: Bool { isTunnelRefusal || (proxy != nil && statusCode == 407) }
    private let built = LockedState<HTTPURLResponse?>(nil)

    package init(url: URL, statusCode: Int, head: HeadBytes, redirectURL: URL? = nil,
                 trailerFields: [(name: String, value: String)] = [], proxy: ProxyEndpoint? = nil, isTunnelRefusal: Bool = false) {
        self.isTunnelRefusal = isTunnelRefusal
        self.url = url
        self.statusCode = statusCode
        self.head = head
        self.redirectURL = redirectURL
        self.trailerFields = trailerFields
        self.proxy = proxy
    }

    /// A response made from Strings (tests, and heads built by hand).
    package convenience init(url: URL, statusCode: Int, statusLine: String, fields: [(name: String, value: String)], redirectURL: URL? = nil) {
        self.init(url: url, statusCode: statusCode, head: HeadBytes(statusLine: statusLine, fields: fields), redirectURL: redirectURL)
    }

    /// The same head with the redirect target curl resolved.
    package func withRedirectURL(_ target: URL?) -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: statusCode, head: head, redirectURL: target, trailerFields: trailerFields, proxy: proxy,
                         isTunnelRefusal: isTunnelRefusal)
    }

    /// The same head with the trailer fields that followed its body.
    package func withTrailerFields(_ fields: [(name: String, value: String)]) -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: statusCode, head: head, redirectURL: redirectURL, trailerFields: fields, proxy: proxy,
                         isTunnelRefusal: isTunnelRefusal)
    }

    /// The same head, marked as the proxy's refusal of CONNECT.
    package func asTunnelRefusal() -> ReceivedResponse {
        ReceivedResponse(url: url, statusCode: statusCode, head: head, redirectURL: redirectURL, trailerFields: trailerFields, proxy: proxy,
                         isTunnelRefusal: true)
    }

    /// The trailer fields with repeated names joined by ", " (as header fields).
    package var trailerDictionary: [String: String] { ResponseHead.headerFields(trailerFields) }

    /// The status line as received ("HTTP/1.1 200 OK").
    package var statusLine: String { head.statusLine }

    /// The protocol version the status line names ("HTTP/1.1", "HTTP/2").
    package var httpVersion: String { head.httpVersion }

    /// Every field, in order, as Strings (made on each call).
    package var fields: [(name: String, value: String)] {
        head.spans.map { (head.name($0), head.value($0)) }
    }

    /// The first value of a header field, compared without case.
    package func value(forField wanted: String) -> String? {
        head.firstSpan(named: wanted).map(head.value)
    }

    /// Every value of a header field, in order (for repeated fields).
    package func values(forField wanted: String) -> [String] {
        head.spans(named: wanted).map(head.value)
    }

    /// Whether the head has a field of this name (no String made).
    package func hasField(_ wanted: String) -> Bool {
        head.firstSpan(named: wanted) != nil
    }

    /// The length of the body as delivered, for progress: Content-Length, or
    /// -1 when absent or unparsable (Foundation's meaning), and -1 as well
    /// when the field does not count the delivered bytes — the library
    /// decodes a coded body, so its decoded bytes would be counted against
    /// the coded length (920,000 of 50,170), and any Transfer-Encoding makes
    /// Content-Length meaningless (RFC 9112 §6.3). The resume data says
    /// unknown for a coded body already.
    package var expectedContentLength: Int64 {
        if hasField("transfer-encoding") { return -1 }
        let contentEncoding = hasField("content-encoding") ? values(forField: "content-encoding").joined(separator: ",") : nil
        if case .decode = ContentDecoder.plan(forContentEncoding: contentEncoding) { return -1 }
        return head.firstSpan(named: "content-length").flatMap(head.integer) ?? -1
    }

    /// The `HTTPURLResponse`, built on first use and kept.
    package var httpURLResponse: HTTPURLResponse? {
        NetworkThread.assertNotCurrent()
        return built.withLock { cached in
            if let cached { return cached }
            cached = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion,
                                     headerFields: ResponseHead.headerFields(fields))
            return cached
        }
    }
}
