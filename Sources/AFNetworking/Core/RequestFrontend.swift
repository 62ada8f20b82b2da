@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging

/// What a request's public face — an `Operation` (`URLConnectionOperation`)
/// or a `URLSessionTask` of a session manager (`SessionTaskFrontend`) — tells
/// its `RequestDriver` and is asked by it. The front-end holds the driver;
/// it never sees the machine, the lock or the transfer. The driver calls
/// these without holding its lock.
protocol RequestFrontend: AnyObject, Sendable {
    /// Settings for a hop to `url` about to start (off the network thread).
    func transferEnvironment(for url: URL?) -> TransferEnvironment
    /// At most this many transfers at once to `url`'s host (nil: no limit).
    /// Asked only when a transfer starts: the cache and cookie steps that
    /// also read the environment have no use for it, and finding `url`'s
    /// host, scheme and port costs more than the rest of the environment.
    func hostLimit(for url: URL?) -> HostLimit?
    /// The request a hop sends, its body ready: `consumedBodyStream` says an
    /// earlier hop already read the request's body stream (307/308, a retry
    /// after 401/407), so a fresh copy must be found or the hop fails. Calls
    /// `ready` once, on any thread but the network thread, possibly later
    /// (a session asks its delegate for a new stream).
    func prepareRequest(_ request: URLRequest, consumedBodyStream: Bool,
                        ready: @escaping @Sendable (Result<URLRequest, NSError>) -> Void)
    /// The lifecycle's phase changed (KVO for operations, nothing for tasks).
    func announce(_ change: PhaseChange)
    /// Asks who decides (a block, a delegate); the answer goes back as
    /// `RequestDriver.Event.redirectDecided` with the question's token.
    /// Called on any thread, the engine's included: the front-end hands the
    /// question to the queue its decider runs on.
    func askRedirect(_ question: TransferStateMachine.RedirectQuestion)
    /// As `askRedirect`, answered with `Event.challengeAnswered`.
    func askChallenge(_ question: TransferStateMachine.ChallengeQuestion)
    /// Completion work once the output is final; must end with the driver's
    /// `Event.completionFinished`.
    func runCompletion(_ outcome: TransferStateMachine.Outcome)

    // Reports on the network thread (they must not block):
    /// A head the machine let through to `route` (after the writer was told
    /// to start over if needed).
    func didReceiveHead(_ response: ReceivedResponse, route: TransferStateMachine.BodyRoute, writer: ResponseBodyWriter?)
    /// Whether the transfer may hand over its next piece now; false pauses it
    /// (curl keeps the piece) until the front-end resumes it through the
    /// engine. Asked before the piece is counted.
    func admitsBody(_ transfer: Transfer) -> Bool
    /// A piece of entity body was kept in memory or forwarded to the writer.
    func didReceiveBody(_ bytes: UnsafeRawBufferPointer, progress: TransferStateMachine.Progress, writer: ResponseBodyWriter?)
    func didSendBody(bytes: Int, total: Int64, expected: Int64)

    /// After the writer closed the output, on its queue: the front-end may
    /// turn success into failure (a partial file that cannot be moved into place).
    func outputDidClose(_ outcome: TransferStateMachine.Outcome) -> TransferStateMachine.Outcome
    /// Whether a body kept in memory may move to a writer mid-transfer
    /// (`Event.divertOutput`, a data task becoming a download).
    var outputMayBeDiverted: Bool { get }
    /// Whether bytes still queued for the writer are dropped when the request
    /// is cancelled (true by default: a cancel ends quickly). A download keeps
    /// them: they are part of the file its resume data continues.
    var dropsQueuedBodyOnCancel: Bool { get }
    /// Where this request's activity is logged (nil: nowhere).
    var activityLogger: Logger? { get }
    /// The output is final; the front-end calls the driver's
    /// `outputFinished(_:)` when it is ready for completion work (at once by
    /// default; a session task on its delegate queue, so its `state` shows
    /// `.canceling` until then).
    func outputIsFinal(_ outcome: TransferStateMachine.Outcome, driver: RequestDriver)
}

extension RequestFrontend {
    var outputMayBeDiverted: Bool { false }
    var dropsQueuedBodyOnCancel: Bool { true }
    func hostLimit(for url: URL?) -> HostLimit? { nil }
    func admitsBody(_ transfer: Transfer) -> Bool { true }

    func outputIsFinal(_ outcome: TransferStateMachine.Outcome, driver: RequestDriver) {
        driver.outputFinished(outcome)
    }
}

/// The phases around one event, for front-ends that react to the change.
struct PhaseChange {
    let before: TransferStateMachine.Phase
    let after: TransferStateMachine.Phase
}

/// What a hop about to start needs from its front-end's settings.
struct TransferEnvironment {
    /// `request` with the fields the library adds from its environment (its
    /// cookies), as a stored response's `Vary` compares it.
    func requestAsSent(_ request: URLRequest) -> URLRequest {
        sendsCookies ? CookieHandling.addingCookies(to: request, from: cookieStorage) : request
    }

    /// nil: OpenSSL's standard verification (the default policy).
    var securityPolicy: SecurityPolicy?
    /// Where cookies come from and go to (nil: nowhere).
    var cookieStorage: HTTPCookieStorage? = CookieHandling.sharedStorage
    /// Whether stored cookies go out with requests (a session configuration's
    /// `httpShouldSetCookies`).
    var sendsCookies = true
    /// Whether `Set-Cookie` is stored (false for a configuration's
    /// `httpCookieAcceptPolicy` of `.never`).
    var acceptsCookies = true
    /// Where answered challenges' credentials are remembered.
    var credentialStorage: URLCredentialStorage? = .shared
    /// The cache answers and stores are made with (nil: none).
    var cache: URLCache? = .shared
    var reportsUploadProgress = false
    /// A shorter idle timeout than the request's own, if any.
    var idleTimeout: TimeInterval?
    /// Presented in TLS handshakes (mutual TLS).
    var clientCertificate: ClientCertificate?
    /// A parsed `connectionProxyDictionary` (nil: the environment decides).
    var proxies: Result<ProxyConfiguration, NSError>?
    /// Download rate caps every piece must fit (the operation's, its graph's).
    var receiveLimiters: [TransferRateLimiter] = []
    /// The smallest receive cap (0: none): sizes the transfer's receive buffer.
    var maximumReceiveBytesPerSecond: Int64 = 0
    /// The upload cap (0: none), paced by curl.
    var maximumSendBytesPerSecond: Int64 = 0
    /// The tracer and parent context of the request's spans (nil: no tracer).
    var trace: TraceOrigin?
}
