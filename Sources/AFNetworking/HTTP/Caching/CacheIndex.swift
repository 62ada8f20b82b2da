@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The library's in-memory view of a `URLCache`: what to answer a request with
/// never costs a disk read after the first time a URL is asked about.
///
/// Why: swift-corelibs-foundation's `URLCache.cachedResponse(for:)` lists the
/// cache directory and unarchives the entry with `NSKeyedUnarchiver` whenever
/// the entry is not in its memory cache (entries read back from disk never
/// are), and `storeCachedResponse` archives the entry and lists and sizes the
/// whole directory on every call. On the default cache policy that was half
/// the CPU of a request, also for responses that can never be cached.
///
/// Design:
/// - One index per `URLCache` instance (replacing `URLCache.shared` gives a new
///   one; an index keeps its cache alive, so an address is never reused).
/// - Per absolute URL the index knows one of: an entry (the response, its body,
///   the freshness parsed once, the security-policy tag), "absent" (the cache
///   had nothing, or the last answer could not be stored), or nothing yet.
///   Only "nothing yet" reads `URLCache`: once per URL per process, which is
///   how an entry left by an earlier run is found.
/// - Stores go to the index at once, then to `URLCache` behind the request
///   (a serial queue; several stores of one URL in a row write only the
///   last). A response that may not be stored replaces an earlier entry with
///   "absent" and removes the entry from `URLCache` the same way.
/// - Bounded: bodies up to the cache's memory capacity, and a fixed number of
///   URLs; the least recently used go first (an evicted URL is read from
///   `URLCache` again the next time, which is correct, only slower).
/// - Honoured as configured: a cache with no capacity stores nothing; its
///   capacities are read at each store.
///
/// What it cannot see: entries another program, or the app itself through
/// `URLCache`'s own API, adds or removes after the index first looked at a
/// URL. `CacheIndex.forget(_:)` (used by `URLCache`-level resets the library
/// makes) drops what an index knows.
package final class CacheIndex: Sendable {
    /// An entry as the index keeps it.
    struct Entry: @unchecked Sendable {
        // @unchecked: CachedURLResponse and its response are immutable once stored.
        let cached: CachedURLResponse
        let freshness: CacheFreshness
        let policyTag: String
        /// The field names the response's `Vary` lists (`CacheRules.varyNames`),
        /// read once: every lookup compares them, and corelibs' header lookup
        /// lowercases each field name of the response to find one.
        let varyNames: [String]
        /// The hit made last from this entry and the whole-second age it
        /// carries (see `hit(age:)`); copies of the entry share it.
        let lastHit = LockedState<(age: Int, response: CachedURLResponse)?>(nil)

        init(cached: CachedURLResponse, freshness: CacheFreshness, policyTag: String) {
            self.cached = cached
            self.freshness = freshness
            self.policyTag = policyTag
            varyNames = (cached.response as? HTTPURLResponse).map(CacheRules.varyNames(of:)) ?? []
        }
    }

    enum Lookup {
        case entry(Entry)
        case absent
        case unknown
    }

    private enum Slot {
        case entry(Entry, cost: Int)
        case absent
    }

    private struct State {
        var slots: [String: (slot: Slot, lastUse: UInt64)] = [:]
        var clock: UInt64 = 0
        var bodyBytes = 0
        /// Entries whose disk write has not landed: never evicted before it has.
        var unwritten: Set<String> = []
    }

    private let cache: URLCache
    private let state = LockedState(State())
    /// Writes and removals for `URLCache`, latest per URL, drained in order.
    private let writeBehind: WriteBehind

    /// URLs the index remembers at most (entries and "absent" marks together).
    static let capacity = 1024

    private init(cache: URLCache) {
        self.cache = cache
        self.writeBehind = WriteBehind(cache: cache)
    }

    // MARK: - Indexes per cache

    private static let indexes = LockedState<[CacheIndex]>([])

    /// The index of `cache` (the last few caches used keep theirs).
    /// Waits until the writes to `cache` queued so far are made: a short-lived
    /// process (afn) calls it before exiting, or its responses never reach
    /// the disk and the next run finds nothing to revalidate.
    package static func finishWrites(to cache: URLCache) {
        index(for: cache).writeBehind.finish()
    }

    static func index(for cache: URLCache) -> CacheIndex {
        indexes.withLock { indexes in
            if let index = indexes.first(where: { $0.cache === cache }) { return index }
            let index = CacheIndex(cache: cache)
            indexes.insert(index, at: 0)
            if indexes.count > 4 { indexes.removeLast() }
            return index
        }
    }

    // MARK: - Lookups

    /// What the index knows about `key` (an absolute URL string).
    func lookup(_ key: String) -> Lookup {
        state.withLock { state in
            guard var known = state.slots[key] else { return .unknown }
            state.clock += 1
            known.lastUse = state.clock
            state.slots[key] = known
            switch known.slot {
            case .entry(let entry, _): return .entry(entry)
            case .absent: return .absent
            }
        }
    }

    /// The entry for `key`: what the index knows, or (for a URL it has not
    /// seen) what `URLCache` holds for `request` (off the network thread).
    func entry(for request: URLRequest, key: String) -> Entry? {
        switch lookup(key) {
        case .entry(let known): return known
        case .absent: return nil
        case .unknown: return load(request, key: key)
        }
    }

    /// Reads `URLCache` for a URL the index has not seen (off the network
    /// thread: this may read the disk), and remembers the answer.
    func load(_ request: URLRequest, key: String) -> Entry? {
        NetworkThread.assertNotCurrent()
        // corelibs keys entries by host, port and path only: an entry only
        // counts when its response is for exactly this URL.
        // Nor is a partial answer an entry (RFC 9111 §3.3: never stored as one).
        guard let cached = cache.cachedResponse(for: request), cached.response.url?.absoluteString == key,
              let response = cached.response as? HTTPURLResponse, response.statusCode != 206 else {
            remember(key, .absent)
            return nil
        }
        let entry = Entry(cached: cached, freshness: CacheFreshness(response, receivedAt: CacheRules.receivedAt(of: cached)),
                          policyTag: cached.userInfo?[CacheRules.policyKey] as? String ?? CacheRules.standardTag)
        remember(key, .entry(entry, cost: cached.data.count))
        return entry
    }

    // MARK: - Changes

    /// Keeps `cached` for `key` and writes it to `URLCache` behind the request.
    /// An answer too large for the cache replaces what was stored with
    /// nothing: it is newer (RFC 9111 §4.4's spirit), so the older one may
    /// not answer in its place.
    func store(_ answer: CachedURLResponse, for request: URLRequest, key: String, policyTag: String, receivedAt: Date) {
        guard let response = answer.response as? HTTPURLResponse else { return }
        let cost = answer.data.count
        // Honour the cache as configured: nothing fits a cache without capacity.
        // A partial answer (a will-cache hook's) is never an entry (RFC 9111 §3.3).
        guard cost <= max(cache.memoryCapacity, cache.diskCapacity) / 20, response.statusCode != 206 else {
            invalidate(request, key: key)
            return
        }
        // The time it was received goes to the disk with it: a later run
        // ages the entry from then (RFC 9111 §4.2.3), not from its reading.
        let cached = CacheRules.stamped(answer, receivedAt: receivedAt)
        let entry = Entry(cached: cached, freshness: CacheFreshness(response, receivedAt: receivedAt), policyTag: policyTag)
        // Kept in memory even when over the memory capacity until the disk
        // write has landed: a request made after this one must see this
        // answer, not miss it or find an older one on disk.
        remember(key, .entry(entry, cost: cost), unwritten: true)
        writeBehind.store(cached, for: request, key: key) { [weak self] in
            self?.written(key, entry: cached)
        }
    }

    /// A revalidation confirmed the entry: `merged` (the stored response
    /// updated by the 304's fields) replaces it, with its freshness starting over.
    func refresh(key: String, with merged: CachedURLResponse, for request: URLRequest, receivedAt: Date) {
        let policyTag = state.withLock { state -> String? in
            guard case .entry(let entry, _)? = state.slots[key]?.slot else { return nil }
            return entry.policyTag
        }
        guard let policyTag else { return }
        store(merged, for: request, key: key, policyTag: policyTag, receivedAt: receivedAt)
    }

    /// `key`'s disk write landed: if memory still holds that write's answer
    /// and it is over the memory capacity, the disk copy is enough now.
    private func written(_ key: String, entry cached: CachedURLResponse) {
        let memoryCapacity = cache.memoryCapacity
        state.withLock { state in
            guard case .entry(let current, let cost)? = state.slots[key]?.slot, current.cached === cached else { return }
            state.unwritten.remove(key)
            if state.bodyBytes > memoryCapacity {
                state.bodyBytes -= cost
                state.slots[key] = nil
            }
        }
    }

    /// The URL's answer may not be stored: whatever was stored for it is
    /// obsolete. `request` (for `URLCache`'s removal) is made only when there
    /// may be something to remove.
    func invalidate(_ request: @autoclosure () -> URLRequest, key: String) {
        let hadEntry = state.withLock { state -> Bool in
            guard let known = state.slots[key] else { return true }   // unknown: the disk may hold one
            if case .absent = known.slot { return false }
            return true
        }
        // Already known absent (every request of a no-store API): nothing to do.
        guard hadEntry else { return }
        remember(key, .absent)
        writeBehind.remove(for: request(), key: key)
    }

    /// Drops everything the index knows (the cache was emptied).
    func forget() {
        state.withLock { $0 = State() }
    }

    /// Records a slot for `key` (nil: forget the key), evicting the least
    /// recently used when over the bounds.
    private func remember(_ key: String, _ slot: Slot?, unwritten: Bool = false) {
        let memoryCapacity = cache.memoryCapacity
        state.withLock { state in
            if case .entry(_, let cost)? = state.slots[key]?.slot { state.bodyBytes -= cost }
            if unwritten { state.unwritten.insert(key) } else { state.unwritten.remove(key) }
            guard let slot else {
                state.slots[key] = nil
                return
            }
            state.clock += 1
            state.slots[key] = (slot, state.clock)
            if case .entry(_, let cost) = slot { state.bodyBytes += cost }
            while state.slots.count > CacheIndex.capacity || state.bodyBytes > memoryCapacity {
                let unwritten = state.unwritten
                guard let oldest = state.slots.filter({ !unwritten.contains($0.key) })
                    .min(by: { $0.value.lastUse < $1.value.lastUse }) else { break }
                if case .entry(_, let cost) = oldest.value.slot { state.bodyBytes -= cost }
                state.slots[oldest.key] = nil
            }
        }
    }
}

/// Writes to `URLCache` behind the requests, in order, on a serial queue; when
/// several changes of one URL wait, only the last is made.
private final class WriteBehind: Sendable {
    private enum Change: @unchecked Sendable {
        // @unchecked: the request and response are not mutated once queued.
        case store(CachedURLResponse, URLRequest, @Sendable () -> Void)
        case remove(URLRequest)
    }

    private let cache: URLCache
    private let queue = DispatchQueue(label: "com.alamofire.networking.cache-writes", qos: .utility)
    private let pending = LockedState<[String: Change]>([:])

    init(cache: URLCache) { self.cache = cache }

    /// Returns once every change queued before the call is made.
    func finish() { queue.sync {} }

    func store(_ cached: CachedURLResponse, for request: URLRequest, key: String, landed: @escaping @Sendable () -> Void) {
        enqueue(.store(cached, request, landed), key: key)
    }

    func remove(for request: URLRequest, key: String) {
        enqueue(.remove(request), key: key)
    }

    private func enqueue(_ change: Change, key: String) {
        let scheduled = pending.withLock { pending -> Bool in
            defer { pending[key] = change }
            return pending[key] != nil
        }
        guard !scheduled else { return }
        queue.async { [self] in
            guard let change = pending.withLock({ $0.removeValue(forKey: key) }) else { return }
            switch change {
            case .store(let cached, let request, let landed):
                cache.storeCachedResponse(cached, for: request)
                landed()
            case .remove(let request): cache.removeCachedResponse(for: request)
            }
        }
    }
}

/// How long a stored response may be used without asking the server
/// (RFC 9111 §4.2), computed once when the response is stored or loaded.
struct CacheFreshness: Sendable {
    /// Seconds the response is fresh for, from its Date; nil when unknown.
    let lifetime: TimeInterval?
    /// The response's age when it was received (Age header, and the gap
    /// between its Date and the local clock), in seconds; infinite for an
    /// invalid `Age` (§5.1: treated as stale).
    let ageWhenReceived: TimeInterval
    /// When it was received, by the local clock.
    let receivedAt: Date
    /// `no-cache`: always revalidate.
    let mustRevalidate: Bool
    /// `must-revalidate` or `no-cache`: never served stale, whatever the request accepts.
    let forbidsStale: Bool
    let etag: String?
    let lastModified: String?
    /// `stale-while-revalidate=N` (RFC 5861 §3): once stale, the seconds it
    /// may still be served while a background request revalidates it.
    let staleWhileRevalidate: TimeInterval?

    init(_ response: HTTPURLResponse, receivedAt: Date?) {
        self.init(directives: CacheRules.directives(in: response.value(forHTTPHeaderField: "Cache-Control")),
                  date: response.value(forHTTPHeaderField: "Date"), expires: response.value(forHTTPHeaderField: "Expires"),
                  lastModified: response.value(forHTTPHeaderField: "Last-Modified"), age: response.value(forHTTPHeaderField: "Age"),
                  etag: response.value(forHTTPHeaderField: "ETag"), status: response.statusCode, receivedAt: receivedAt)
    }

    init(directives: [String], date: String?, expires: String?, lastModified: String?, age: String?, etag: String?,
         status: Int = 200, receivedAt: Date?) {
        // A missing or invalid Date is the time it was received (RFC 9110 §6.6.1).
        let parsedDate = date.flatMap(HTTPDate.parse)
        // Without a receive time (an entry stored by another program, or
        // before receive times were kept) the Date is the best estimate of
        // it: the entry has been resident since then, and `Age` is its age
        // when received (§4.2.3, with the clocks in step). Never later than now.
        let now = Date()
        let received = receivedAt ?? parsedDate.map { min(Date(timeIntervalSince1970: $0), now) } ?? now
        let dateValue = parsedDate ?? received.timeIntervalSince1970
        var lifetime: TimeInterval?
        if let maxAge = directives.first(where: { $0.hasPrefix("max-age=") }) {
            // Not a number of seconds: stale (§4.2.1).
            lifetime = CacheRules.deltaSeconds(maxAge.dropFirst(8)) ?? 0
        } else if let expires {
            // An invalid Expires means already expired (RFC 9111 §5.3).
            if let expiry = HTTPDate.parse(expires) { lifetime = expiry - dateValue } else { lifetime = 0 }
        } else if CacheRules.heuristicallyCacheable.contains(status) || directives.contains("public"),
                  let modified = lastModified.flatMap(HTTPDate.parse) {
            // The usual heuristic: 10 % of the time since the last change
            // (§4.2.2), for a status heuristically cacheable or a response
            // marked `public` (which makes any status so).
            lifetime = max(0, dateValue - modified) / 10
        }
        self.lifetime = lifetime
        let apparent = parsedDate.map { max(0, received.timeIntervalSince1970 - $0) } ?? 0
        ageWhenReceived = max(apparent, CacheFreshness.ageValue(age))
        self.receivedAt = received
        // Only the plain form: a qualified `no-cache="field"` (§5.2.2.4)
        // keeps the response reusable without those fields (see `withAge`).
        mustRevalidate = directives.contains("no-cache")
        forbidsStale = mustRevalidate || directives.contains("must-revalidate")
        self.etag = etag
        self.lastModified = lastModified
        staleWhileRevalidate = directives.first(where: { $0.hasPrefix("stale-while-revalidate=") })
            .map { $0.dropFirst("stale-while-revalidate=".count) }
            .flatMap(CacheRules.deltaSeconds)
    }

    /// `Age` (RFC 9111 §5.1): a non-negative integer; of a list, the first
    /// member. Anything else (`7200.0`, `-1`, `abc`) is ignored, as the RFC
    /// says: the response is aged by its `Date` alone. A number too large
    /// for a Double's integers still means "very old".
    static func ageValue(_ field: String?) -> TimeInterval {
        guard let field else { return 0 }
        let first = field.split(separator: ",", omittingEmptySubsequences: false).first?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !first.isEmpty, first.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return 0 }
        return TimeInterval(first) ?? .infinity
    }

    /// The response's age now (RFC 9111 §4.2.3), in seconds.
    func currentAge(at now: Date) -> TimeInterval {
        ageWhenReceived + max(0, now.timeIntervalSince(receivedAt))
    }

    /// Whether the response may be used now without asking the server.
    func isFresh(at now: Date) -> Bool {
        guard !mustRevalidate, let lifetime else { return false }
        return currentAge(at: now) < lifetime
    }
}
