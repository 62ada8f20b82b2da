import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential an `Authenticator` applies to requests (Alamofire's name): an
/// OAuth token pair, an API key with an expiry …
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before it is used (it has
    /// expired, or is about to). Requests wait while it is refreshed.
    var requiresRefresh: Bool { get }
}

/// What `AuthenticationInterceptor` needs to know about one kind of
/// credential (Alamofire's name and shape): how to put it on a request, how to
/// get a fresh one, and how to tell an answer that refused it.
///
/// Every method is called off the network thread, under no lock of the
/// library, possibly from several threads at once.
public protocol Authenticator: AnyObject, Sendable {
    /// The credential this authenticator applies and refreshes.
    associatedtype Credential: AuthenticationCredential

    /// Puts `credential` on `urlRequest` (an `Authorization` header field, say).
    func apply(_ credential: Credential, to urlRequest: inout URLRequest)

    /// Gets a fresh credential for `credential` and hands it (or the error) to
    /// `completion`, once, from any thread. The interceptor calls it once for
    /// however many requests are waiting: they are parked meanwhile and go
    /// out with the new credential. Alamofire passes its `Session` too; here
    /// the refresh request goes through whatever manager the authenticator
    /// keeps (one without this interceptor, or it would wait for itself).
    func refresh(_ credential: Credential, completion: @escaping @Sendable (Result<Credential, Error>) -> Void)

    /// Whether `response` refused `urlRequest`'s credential (usually a 401):
    /// then the credential is refreshed and the request sent again.
    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: Error) -> Bool

    /// Whether `urlRequest` was sent with `credential` (and not an older one
    /// that has been refreshed since: then it is simply sent again).
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool
}

/// Why `AuthenticationInterceptor` failed a request.
///
/// Failure blocks receive it as an `NSError` in `AuthenticationError.errorDomain`
/// (code 1 or 2); `AuthenticationError(error)` turns such an error back.
public enum AuthenticationError: Int, Error, Sendable, Equatable, CustomNSError {
    /// The interceptor has no credential: set `credential` first.
    case missingCredential = 1
    /// More refreshes within the refresh window than it allows: the server
    /// keeps refusing fresh credentials, so requests fail instead of looping.
    case excessiveRefresh = 2

    /// "AFNetworking.AuthenticationError".
    public static var errorDomain: String { "AFNetworking.AuthenticationError" }

    /// 1 for `missingCredential`, 2 for `excessiveRefresh`.
    public var errorCode: Int { rawValue }

    /// A description a log can show.
    public var errorUserInfo: [String: Any] {
        switch self {
        case .missingCredential:
            return [NSLocalizedDescriptionKey: "The request was not sent: the authentication interceptor has no credential."]
        case .excessiveRefresh:
            return [NSLocalizedDescriptionKey: "The credential was refreshed more often than the refresh window allows; the server keeps refusing it."]
        }
    }

    /// The authentication error `error` is, in either form (Swift or `NSError`).
    public init?(_ error: any Error) {
        if let error = error as? AuthenticationError {
            self = error
            return
        }
        let bridged = error as NSError
        guard bridged.domain == AuthenticationError.errorDomain, let known = AuthenticationError(rawValue: bridged.code) else { return nil }
        self = known
    }
}
