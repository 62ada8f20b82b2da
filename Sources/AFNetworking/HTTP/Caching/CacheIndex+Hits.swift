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
        if let reused = lastHit.response(forAge: seconds) { return reused }
        let made = CacheRules.withAge(cached, seconds: age)
        lastHit.keep(made, forAge: seconds)
        return made
    }
}

/// The last hit made from one stored entry and the age it says.
final class LastHit: Sendable {
    private struct Made: @unchecked Sendable {
        // @unchecked: a CachedURLResponse and its response are immutable once made.
        let age: Int
        let response: CachedURLResponse
    }

    private let made = LockedState<Made?>(nil)

    /// The response made for `age`, if that was the last one.
    func response(forAge age: Int) -> CachedURLResponse? {
        made.withLock { made in made.flatMap { $0.age == age ? $0.response : nil } }
    }

    /// Keeps `response` as the one for `age` (two requests that made one at
    /// the same time both keep theirs; either is right).
    func keep(_ response: CachedURLResponse, forAge age: Int) {
        made.withLock { $0 = Made(age: age, response: response) }
    }
}
