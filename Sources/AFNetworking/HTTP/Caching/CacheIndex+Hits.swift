@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheIndex.Entry {
    /// The entry as a hit delivers it when it is `age` seconds old (see
    /// `CacheRules.withAge`). A hot entry is served many times a second, and
    /// making the `HTTPURLResponse` (its header dictionary) is most of what a
    /// hit costs, so the last one made is reused while the `Age` it carries
    /// — whole seconds — is the same. Responses are immutable, so requests
    /// may share one.
    func hit(age: TimeInterval) -> CachedURLResponse {
        let seconds = CacheRules.ageSeconds(age)
        if let last = lastHit.withLock({ $0 }), last.age == seconds { return last.response }
        let made = CacheRules.withAge(cached, seconds: age)
        // Two requests that made one at the same time both keep theirs; either is right.
        lastHit.withLock { $0 = (seconds, made) }
        return made
    }
}
