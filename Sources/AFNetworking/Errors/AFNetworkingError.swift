@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Domain of the error found under `NSUnderlyingErrorKey` of a transport
/// error (an `NSURLErrorDomain` error) that libcurl reported: its `code` is
/// libcurl's `CURLcode`, its description curl's own message.
public let AFNetworkingCurlErrorDomain: String = TransportErrors.curlErrorDomain

/// A `switch`-friendly view of any error this library reports (transport,
/// TLS, HTTP status, serialization, file), derived from the `NSError` without
/// losing it: `nsError` is the error as reported, with its `userInfo`.
///
/// ```swift
/// do { … } catch {
///     switch error.afnetworking.kind {
///     case .timedOut: retryLater()
///     case .http(let status, _) where status == 404: showMissing()
///     default: report(error)
///     }
/// }
/// ```
public struct AFNetworkingError: Error, CustomStringConvertible, @unchecked Sendable {
    // @unchecked: `nsError` is never mutated; NSError is immutable once made.

    /// What went wrong, coarsely.
    public enum Kind: Equatable, Sendable {
        /// The request was cancelled (NSURLErrorCancelled).
        case cancelled
        /// An idle timeout or a deadline passed (NSURLErrorTimedOut).
        case timedOut
        /// The host name did not resolve.
        case cannotFindHost
        /// No connection could be made.
        case cannotConnect
        /// The connection broke before the response was complete.
        case connectionLost
        /// No network at all.
        case notConnectedToInternet
        /// The server's certificate was refused (by the system store or the
        /// `SecurityPolicy`, whose reason is given when it decided).
        case tlsRejected(SecurityPolicyFailureReason?)
        /// The TLS handshake failed for another reason (protocol, cipher).
        case tlsFailed
        /// The server demanded a client certificate and none was sent.
        case clientCertificateRequired
        /// The server refused the client certificate sent, or it could not be used.
        case clientCertificateRejected
        /// The server's answer was not HTTP, or not what a resumed download asked for.
        case badServerResponse
        /// The request could not be built (a bad URL, header or body).
        case badURL
        /// Redirects went on too long.
        case tooManyRedirects
        /// The response serializer refused the status code: the status and the body.
        case http(status: Int, body: Data?)
        /// The response serializer could not decode the body (content type, JSON, …).
        case serialization
        /// A file could not be read, written or moved.
        case file
        /// Anything else: see `nsError`.
        case other
    }

    /// What went wrong, to `switch` over.
    public let kind: Kind
    /// The error as the library reported it.
    public let nsError: NSError

    /// The view of `error` (any error; non-library errors are `.other`,
    /// `CancellationError` is `.cancelled`).
    public init(_ error: Error) {
        let nsError = error as NSError
        self.nsError = nsError
        kind = error is CancellationError ? .cancelled : AFNetworkingError.classify(nsError)
    }

    /// The kind, the localized description, and the domain and code.
    public var description: String {
        "\(kind): \(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))"
    }

    private static func classify(_ error: NSError) -> Kind {
        // A rejected status stays visible under a parse error stacked on it.
        if error.domain != NSURLErrorDomain, let status = statusError(in: error) { return status }
        switch error.domain {
        case NSURLErrorDomain:
            return classifyURLError(error)
        case AFURLResponseSerializationErrorDomain:
            return .serialization
        case AFURLRequestSerializationErrorDomain:
            return error.code == NSURLErrorBadURL ? .badURL : .serialization
        case NSPOSIXErrorDomain:
            return .file
        case NSCocoaErrorDomain:
            // File errors are Foundation's 4…1023 range; the rest (JSON and
            // property-list parsing, coders) come from decoding a body.
            return (4...1023).contains(error.code) ? .file : .serialization
        default:
            return .other
        }
    }

    /// `.http` for the response serializer's status error, found in
    /// `error` or under it (`NSUnderlyingErrorKey`, a few levels deep).
    private static func statusError(in error: NSError) -> Kind? {
        var current: NSError? = error
        for _ in 0..<8 {
            guard let candidate = current else { return nil }
            if candidate.domain == AFURLResponseSerializationErrorDomain, candidate.code == NSURLErrorBadServerResponse,
               let response = candidate.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse {
                return .http(status: response.statusCode,
                             body: candidate.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data)
            }
            current = candidate.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        return nil
    }

    private static func classifyURLError(_ error: NSError) -> Kind {
        switch error.code {
        case NSURLErrorCancelled: return .cancelled
        case NSURLErrorTimedOut: return .timedOut
        case NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed: return .cannotFindHost
        case NSURLErrorCannotConnectToHost: return .cannotConnect
        case NSURLErrorNetworkConnectionLost: return .connectionLost
        case NSURLErrorNotConnectedToInternet: return .notConnectedToInternet
        case NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasBadDate, NSURLErrorServerCertificateHasUnknownRoot,
             NSURLErrorServerCertificateNotYetValid:
            let reason = (error.userInfo[AFNetworkingSecurityPolicyFailureReasonErrorKey] as? String).flatMap(SecurityPolicyFailureReason.init)
            return .tlsRejected(reason)
        case NSURLErrorSecureConnectionFailed: return .tlsFailed
        case NSURLErrorClientCertificateRequired: return .clientCertificateRequired
        case NSURLErrorClientCertificateRejected: return .clientCertificateRejected
        case NSURLErrorBadServerResponse, NSURLErrorZeroByteResource, NSURLErrorCannotDecodeContentData: return .badServerResponse
        case NSURLErrorBadURL, NSURLErrorUnsupportedURL: return .badURL
        case NSURLErrorHTTPTooManyRedirects: return .tooManyRedirects
        case NSURLErrorFileDoesNotExist, NSURLErrorCannotCreateFile, NSURLErrorCannotWriteToFile, NSURLErrorCannotOpenFile,
             NSURLErrorCannotMoveFile, NSURLErrorCannotRemoveFile, NSURLErrorNoPermissionsToReadFile:
            return .file
        default: return .other
        }
    }
}

extension Error {
    /// This error as an `AFNetworkingError`, for `switch`ing over its kind.
    public var afnetworking: AFNetworkingError { AFNetworkingError(self) }
}
