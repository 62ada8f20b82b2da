import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything the engine needs to run one HTTP exchange, decided by the caller
/// on its own thread so the network thread only applies it.
package struct TransferOptions: Sendable {
    /// The request as it goes on the wire (method, URL, headers, body).
    package var request: URLRequest
    /// NSURLRequest's `timeoutInterval`: the longest the transfer may go without
    /// progress (connecting, sending or receiving) before it fails as timed out.
    /// Time spent paused (back-pressure, suspension) does not count. Longer
    /// than `longestIdleTimeout` (`.infinity`, `Date.distantFuture`'s interval,
    /// `.greatestFiniteMagnitude`): no idle timeout at all.
    package var idleTimeout: TimeInterval

    /// Past this an idle timeout means "none": a year, far beyond any real
    /// wait, and small enough that its nanoseconds and curl's milliseconds
    /// never overflow.
    package static let longestIdleTimeout: TimeInterval = 365 * 24 * 3600

    /// `idleTimeout` in nanoseconds; nil when there is none.
    package var idleTimeoutNanoseconds: UInt64? {
        guard idleTimeout <= Self.longestIdleTimeout else { return nil }
        return UInt64(max(0, idleTimeout) * 1_000_000_000)
    }

    /// What bounds connection setup, in curl's milliseconds (at least 1).
    package var connectTimeoutMilliseconds: Int {
        max(1, Int(min(max(0, idleTimeout), Self.longestIdleTimeout) * 1000))
    }
    /// Credentials answering an authentication challenge on this transfer.
    package var credentials: TransferCredentials?
    /// Whether upload progress must be reported (costs a callback per tick).
    package var reportsUploadProgress = false
    /// How the server's certificate is checked.
    package var tls = TLSVerification()
    /// The creator's name for this transfer, echoed back in every report so a
    /// report from a transfer that is no longer current can be told apart.
    package var tag: UInt64 = 0
    /// At most `maximum` transfers with the same `key` run at once; the rest
    /// wait in the engine, in order (a session's `httpMaximumConnectionsPerHost`).
    package var hostLimit: HostLimit?
    /// A client certificate to present in TLS handshakes (mutual TLS).
    package var clientIdentity: ClientIdentity?
    /// The proxies to use (a parsed `connectionProxyDictionary`); nil: the
    /// environment decides (`ProxyEnvironment`).
    package var proxies: ProxyConfiguration?
    /// Rate caps in bytes per second (0: none). The receive cap is kept by
    /// the delegate, which pauses the transfer when a piece would exceed it
    /// (here it only sizes the receive buffer); curl paces the send cap.
    package var maximumReceiveBytesPerSecond: Int64 = 0
    package var maximumSendBytesPerSecond: Int64 = 0

    /// The upload buffer for a capped upload: a fraction of a second's
    /// budget per send (curl's smallest is 16 KiB).
    package var sendBufferSize: Int? {
        guard maximumSendBytesPerSecond > 0 else { return nil }
        return Int(min(max(maximumSendBytesPerSecond / 4, 16 * 1024), 512 * 1024))
    }

    /// The receive buffer for a capped transfer: small enough that one
    /// delivery is a fraction of a second's budget (curl 7.88 reads a whole
    /// buffer at a time, whatever the cap).
    package var receiveBufferSize: Int? {
        guard maximumReceiveBytesPerSecond > 0 else { return nil }
        return Int(min(max(maximumReceiveBytesPerSecond / 4, 1024), 64 * 1024))
    }

    /// Connections are reused only between transfers of the same partition:
    /// the security policy's, and the client identity's when there is one.
    /// nil is the partition of the standard policy without an identity. The
    /// transfer adds the proxy credentials it hands its proxy
    /// (`Transfer.connectionPartition`).
    package var connectionPartition: String? {
        guard let identity = clientIdentity else { return tls.partition }
        return "\(tls.partition ?? "standard")|client:\(identity.fingerprint)"
    }

    package init(request: URLRequest) {
        self.request = request
        let timeout = request.timeoutInterval
        // 0, negative and NaN: the default; +infinity: none.
        self.idleTimeout = timeout > 0 ? timeout : 60
    }
}

/// A user name and password for HTTP Basic or Digest authentication (curl
/// performs Digest's own round trip within the transfer).
package struct TransferCredentials: Sendable, Equatable {
    package enum Scheme: Sendable { case basic, digest }
    package var user: String
    package var password: String
    package var scheme: Scheme
    /// True for a proxy's challenge (407), false for the server's (401).
    package var forProxy: Bool

    package init(user: String, password: String, scheme: Scheme, forProxy: Bool) {
        self.user = user
        self.password = password
        self.scheme = scheme
        self.forProxy = forProxy
    }
}

/// Judges a server's certificate chain inside the TLS handshake. The engine
/// knows nothing of security policies; the library hands it one of these.
package protocol PeerTrustEvaluator: Sendable {
    /// `peerChainDER` is the chain as the server sent it, leaf first; `host`
    /// is the name this connection is for. nil accepts; an error rejects the
    /// server and becomes the transfer's error. Called on the network thread:
    /// it must not block (no trust-store loading from disk, no user code).
    func evaluate(peerChainDER: [Data], host: String) -> (any PeerRejection)?
}

/// Why an evaluator refused a server, as the error the request fails with.
package protocol PeerRejection: Error, Sendable {
    func nsError(failingURL: URL?) -> NSError
}

/// Certificate verification settings applied to one transfer.
package struct TLSVerification: Sendable {
    package var verifiesPeer = true
    package var verifiesHost = true
    /// CA bundle and directory; nil keeps libcurl's build-time defaults unless
    /// OpenSSL's SSL_CERT_FILE / SSL_CERT_DIR variables name others.
    package var caFile: String? = TLSVerification.environmentCAFile
    package var caDirectory: String? = TLSVerification.environmentCADirectory
    /// A policy judged inside the handshake, replacing OpenSSL's own chain
    /// check; nil when OpenSSL's standard verification is exactly the policy.
    package var evaluator: (any PeerTrustEvaluator)?
    /// Connections (and TLS sessions) are only ever reused between transfers
    /// with the same partition: one verified under one policy never carries a
    /// request under another. nil is the partition of the standard policy.
    package var partition: String?

    package init() {}

    // Read once: the environment is a process-wide setting and building
    // ProcessInfo's dictionary on every request would cost more than the request.
    private static let environmentCAFile = ProcessInfo.processInfo.environment["SSL_CERT_FILE"]
    private static let environmentCADirectory = ProcessInfo.processInfo.environment["SSL_CERT_DIR"]
}

/// A limit on concurrent transfers that share a key (a session and a host:port).
package struct HostLimit: Sendable, Equatable {
    package var key: String
    package var maximum: Int

    package init(key: String, maximum: Int) {
        self.key = key
        self.maximum = max(1, maximum)
    }
}
