import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--max-redirs N` for one request (an operation's or a download task's
/// redirect block): up to N redirects are followed; with 0 none is, and the
/// 3xx is the response (as curl without -L). A redirect past N > 0 is not
/// followed either, and the tool exits 47 as curl does.
final class RedirectLimit: @unchecked Sendable {
    // @unchecked: `followed` and `refused` are only touched under `lock`.
    let maximum: Int
    private let lock = NSLock()
    private var followed = 0
    private var refused = false

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// The request to send for one more redirect, or nil once the limit is reached.
    func follow(_ proposed: URLRequest) -> URLRequest? {
        lock.lock()
        defer { lock.unlock() }
        guard followed < maximum else {
            refused = true
            return nil
        }
        followed += 1
        return proposed
    }

    /// A redirect beyond a limit above zero came (and was not followed): curl's error 47.
    var exceeded: Bool {
        lock.lock()
        defer { lock.unlock() }
        return refused && maximum > 0
    }
}
