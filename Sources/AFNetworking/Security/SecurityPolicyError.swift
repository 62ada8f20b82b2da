@_spi(AFNetworkingInternal) import AFNetworkingTransport
import CAFOpenSSL
import Foundation

/// `userInfo` key of a rejection's `SecurityPolicyFailureReason.rawValue`.
public let AFNetworkingSecurityPolicyFailureReasonErrorKey = "AFNetworkingSecurityPolicyFailureReason"

/// `userInfo` key of OpenSSL's `X509_V_ERR_*` code (an `Int`) when OpenSSL reported one.
public let AFNetworkingSecurityPolicyVerifyResultErrorKey = "AFNetworkingSecurityPolicyVerifyResult"

/// A rejected server trust: the reason plus OpenSSL's own diagnosis.
///
/// Bridged to `NSError` it is in `NSURLErrorDomain` with code
/// `NSURLErrorServerCertificateUntrusted`, the reason under
/// `AFNetworkingSecurityPolicyFailureReasonErrorKey`.
public struct SecurityPolicyError: Error, CustomNSError, LocalizedError, Sendable, Equatable {
    /// Why the trust was refused.
    public var reason: SecurityPolicyFailureReason
    /// OpenSSL's `X509_V_ERR_*` code, when the failure came from chain verification.
    public var verifyResult: Int?
    /// A human-readable detail (OpenSSL's message, the host, …).
    public var detail: String

    /// Creates an error.
    public init(_ reason: SecurityPolicyFailureReason, verifyResult: Int? = nil, detail: String = "") {
        self.reason = reason
        self.verifyResult = verifyResult
        self.detail = detail
    }

    /// Maps an OpenSSL verification outcome onto a reason.
    init(verifyResult result: cafssl_verify_result) {
        let reason: SecurityPolicyFailureReason
        switch result.kind {
        case CAFSSL_VERIFY_EXPIRED: reason = .expired
        case CAFSSL_VERIFY_NOT_YET_VALID: reason = .notYetValid
        case CAFSSL_VERIFY_UNTRUSTED: reason = .untrustedRoot
        case CAFSSL_VERIFY_MALFORMED: reason = .malformedCertificate
        default: reason = .invalidChain
        }
        let message = cafssl_verify_error_string(result.code).map { String(cString: $0) } ?? "error \(result.code)"
        // The same words libcurl's path uses for the same code, then OpenSSL's own.
        let detail = TLSRejectionReason.phrase(forVerifyResult: Int(result.code))
            .map { "\($0) (OpenSSL: \(message), depth \(result.depth))" } ?? "\(message) (depth \(result.depth))"
        self.init(reason, verifyResult: Int(result.code), detail: detail)
    }

    /// `NSURLErrorDomain`, like the error a refused handshake reports.
    public static var errorDomain: String { NSURLErrorDomain }

    /// `NSURLErrorServerCertificateUntrusted`.
    public var errorCode: Int { NSURLErrorServerCertificateUntrusted }

    /// The description, the reason and, when known, OpenSSL's code.
    public var errorUserInfo: [String: Any] {
        var info: [String: Any] = [
            NSLocalizedDescriptionKey: errorDescription ?? "",
            AFNetworkingSecurityPolicyFailureReasonErrorKey: reason.rawValue,
        ]
        if let verifyResult {
            info[AFNetworkingSecurityPolicyVerifyResultErrorKey] = verifyResult
        }
        return info
    }

    /// "The server certificate was refused (reason): detail".
    public var errorDescription: String? {
        detail.isEmpty
            ? "The server certificate was refused (\(reason.rawValue))."
            : "The server certificate was refused (\(reason.rawValue)): \(detail)."
    }

    /// The `NSError` an operation reports for this rejection of a request to `failingURL`.
    public func nsError(failingURL: URL?) -> NSError {
        var info = errorUserInfo
        if let failingURL {
            info[NSURLErrorFailingURLErrorKey] = failingURL
            info[Self.failingURLStringKey] = failingURL.absoluteString
        }
        return NSError(domain: Self.errorDomain, code: errorCode, userInfo: info)
    }

    /// The value of Foundation's deprecated `NSURLErrorFailingURLStringErrorKey`:
    /// code ported from Apple platforms still reads the failing URL's string
    /// there, and the literal avoids the deprecation warning.
    private static let failingURLStringKey = "NSErrorFailingURLStringKey"
}
