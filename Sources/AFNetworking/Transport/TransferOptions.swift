import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything the engine needs to run one HTTP exchange, decided by the caller
/// on its own thread so the network thread only applies it.
struct TransferOptions {
    /// The request as it goes on the wire (method, URL, headers, body).
    var request: URLRequest
    /// NSURLRequest's `timeoutInterval`: the longest the transfer may go without
    /// progress (connecting, sending or receiving) before it fails as timed out.
    var idleTimeout: TimeInterval
    /// Credentials answering an authentication challenge on this transfer.
    var credentials: TransferCredentials?
    /// Whether upload progress must be reported (costs a callback per tick).
    var reportsUploadProgress = false
    /// How the server's certificate is checked.
    var tls = TLSVerification()

    init(request: URLRequest) {
        self.request = request
        let timeout = request.timeoutInterval
        self.idleTimeout = timeout > 0 && timeout.isFinite ? timeout : 60
    }
}

/// A user name and password for HTTP Basic or Digest authentication (curl
/// performs Digest's own round trip within the transfer).
struct TransferCredentials {
    enum Scheme { case basic, digest }
    var user: String
    var password: String
    var scheme: Scheme
    /// True for a proxy's challenge (407), false for the server's (401).
    var forProxy: Bool
}

/// Certificate verification settings applied to one transfer.
struct TLSVerification {
    var verifiesPeer = true
    var verifiesHost = true
    /// CA bundle and directory; nil keeps libcurl's build-time defaults unless
    /// OpenSSL's SSL_CERT_FILE / SSL_CERT_DIR variables name others.
    var caFile: String? = TLSVerification.environmentCAFile
    var caDirectory: String? = TLSVerification.environmentCADirectory
    /// A policy judged inside the handshake, replacing OpenSSL's own chain
    /// check; nil when OpenSSL's standard verification is exactly the policy.
    var policy: SecurityPolicy?
    /// Connections (and TLS sessions) are only ever reused between transfers
    /// with the same partition: one verified under one policy never carries a
    /// request under another. nil is the partition of the standard policy.
    var partition: String?

    // Read once: the environment is a process-wide setting and building
    // ProcessInfo's dictionary on every request would cost more than the request.
    private static let environmentCAFile = ProcessInfo.processInfo.environment["SSL_CERT_FILE"]
    private static let environmentCADirectory = ProcessInfo.processInfo.environment["SSL_CERT_DIR"]
}
