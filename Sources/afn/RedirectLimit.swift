import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--max-redirs N` for one request (an operation's or a download task's
/// redirect block): up to N redirects are followed; with 0 none is, and the
/// 3xx is the response (as curl without -L). A redirect past N > 0 is not
/// followed either, and the tool exits 47 as curl does.
final class RedirectLimit: Sendable {
    let maximum: Int
    /// Redirects followed so far, and whether one was refused.
    private let counts = LockedState((followed: 0, refused: false))

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// The request to send for one more redirect, or nil once the limit is reached.
    func follow(_ proposed: URLRequest) -> URLRequest? {
        let allowed = counts.withLock { counts in
            guard counts.followed < maximum else {
                counts.refused = true
                return false
            }
            counts.followed += 1
            return true
        }
        return allowed ? proposed : nil
    }

    /// A redirect beyond a limit above zero came (and was not followed): curl's error 47.
    var exceeded: Bool {
        counts[\.refused] && maximum > 0
    }
}
