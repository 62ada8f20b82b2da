import AFNetworking
import Foundation

/// A 2.x-style `SecurityPolicy` subclass that decides by itself (no
/// `copy(with:)` override) and counts how often it was asked.
final class DecidingSecurityPolicy: SecurityPolicy, @unchecked Sendable {
    // @unchecked: `accept` is a let; `asked` is locked.
    let accept: Bool
    let asked = Locked(0)

    init(accept: Bool) {
        self.accept = accept
        super.init()
    }

    required init?(coder: NSCoder) { nil }

    override func evaluateServerTrust(_ trust: ServerTrust, forDomain domain: String?) -> Bool {
        asked.withLock { $0 += 1 }
        return accept
    }
}
