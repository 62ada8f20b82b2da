@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What libcurl measured for a request's final hop: when each phase ended,
/// counted from the start of that hop, and what was exchanged. Read it from
/// `URLConnectionOperation.metrics` or `URLSessionTask.transferMetrics` once
/// the request has finished; the finish line of `NetworkActivityLogger`
/// carries it too.
public struct TransferMetrics: Sendable, Equatable, CustomStringConvertible {
    /// Seconds until the host name was resolved (0 for an address or a reused connection).
    public var domainLookup: TimeInterval
    /// Seconds until the TCP connection was made.
    public var connect: TimeInterval
    /// Seconds until the TLS handshake was done (0 without TLS).
    public var secureConnection: TimeInterval
    /// Seconds until the first byte of the response arrived.
    public var timeToFirstByte: TimeInterval
    /// Seconds the hop took in all.
    public var total: TimeInterval
    /// Request body bytes sent.
    public var bytesSent: Int64
    /// Response body bytes received (as sent, before any decoding).
    public var bytesReceived: Int64
    /// The hop reused a connection an earlier request had opened.
    public var reusedConnection: Bool
    /// "HTTP/1.1", "HTTP/2", … (empty when no response was exchanged).
    public var httpVersion: String
    /// The server's address, when a connection was made.
    public var remoteAddress: String?
    /// Redirects followed before the final hop.
    public var redirectCount: Int

    /// Metrics as given (for tests and custom reporting).
    public init(domainLookup: TimeInterval = 0, connect: TimeInterval = 0, secureConnection: TimeInterval = 0,
                timeToFirstByte: TimeInterval = 0, total: TimeInterval = 0, bytesSent: Int64 = 0, bytesReceived: Int64 = 0,
                reusedConnection: Bool = false, httpVersion: String = "", remoteAddress: String? = nil, redirectCount: Int = 0) {
        self.domainLookup = domainLookup
        self.connect = connect
        self.secureConnection = secureConnection
        self.timeToFirstByte = timeToFirstByte
        self.total = total
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.reusedConnection = reusedConnection
        self.httpVersion = httpVersion
        self.remoteAddress = remoteAddress
        self.redirectCount = redirectCount
    }

    init(_ timings: TransferTimings, redirects: Int) {
        self.init(domainLookup: timings.domainLookup, connect: timings.connect, secureConnection: timings.secureConnection,
                  timeToFirstByte: timings.firstByte, total: timings.total, bytesSent: timings.bytesSent,
                  bytesReceived: timings.bytesReceived, reusedConnection: timings.reusedConnection,
                  httpVersion: timings.httpVersion, remoteAddress: timings.remoteAddress, redirectCount: redirects)
    }

    /// One line: "HTTP/1.1 127.0.0.1 dns 0.1ms connect 0.3ms tls 0ms ttfb 1.2ms total 1.5ms sent 0 B received 1024 B reused".
    public var description: String {
        func ms(_ seconds: TimeInterval) -> String { String(format: "%.1fms", seconds * 1000) }
        var parts = [httpVersion.isEmpty ? "-" : httpVersion]
        if let remoteAddress { parts.append(remoteAddress) }
        parts += ["dns \(ms(domainLookup))", "connect \(ms(connect))", "tls \(ms(secureConnection))", "ttfb \(ms(timeToFirstByte))",
                  "total \(ms(total))", "sent \(bytesSent) B", "received \(bytesReceived) B"]
        if reusedConnection { parts.append("reused") }
        if redirectCount > 0 { parts.append("redirects \(redirectCount)") }
        return parts.joined(separator: " ")
    }
}
