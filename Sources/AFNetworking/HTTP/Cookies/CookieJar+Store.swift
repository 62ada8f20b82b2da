import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CookieJar {
    /// Stores, replaces or deletes per `Set-Cookie` field of a response to
    /// `url`, in the order received (§5.3 steps 11–12 and eviction).
    static func store(_ fields: [String], for url: URL, in storage: HTTPCookieStorage, now: Date = Date()) {
        guard !fields.isEmpty, storage.cookieAcceptPolicy != .never, let host = CookieDomain.canonicalHost(of: url) else { return }
        CookiePersistence.restoreOnce(storage)
        var existing = storage.cookies ?? []
        // Decided first, against the storage as it was: within one response
        // no field's decision depends on another's (one origin, one scheme).
        let decisions = fields.compactMap { field in
            SetCookieParser.parse(field).flatMap { decide($0, for: url, host: host, now: now, existing: existing) }
        }
        for decision in effective(decisions, existing: existing, now: now) {
            store(decision, in: storage, existing: &existing, now: now)
        }
    }

    /// The decisions that change the end state, in order: for one cookie
    /// (name, domain, path) only the last field counts (§5.3 step 11 would
    /// replace the earlier ones) — after the last deletion before it, which
    /// makes it a new cookie rather than a replacement keeping the old one's
    /// place; a deletion only of a cookie that exists; and of a domain's new
    /// cookies only the last `maximumCookiesPerDomain` (eviction would remove
    /// the others). Each storage change may rewrite a file, so a response with
    /// thousands of `Set-Cookie` fields costs at most a few hundred of them,
    /// not one per field.
    private static func effective(_ decisions: [Decision], existing: [HTTPCookie], now: Date) -> [Decision] {
        struct Key: Hashable { let name: String, domain: String, path: String }
        func key(_ decision: Decision) -> Key { Key(name: decision.name, domain: decision.domain, path: decision.path) }
        func deletes(_ decision: Decision) -> Bool { decision.expiry.map { $0 <= now } ?? false }
        var last: [Key: Int] = [:]
        var lastDeletion: [Key: Int] = [:]
        // Where the cookie that ends up stored was first set: a replacement
        // keeps that place (and creation order), so it is stored there.
        var firstSet: [Key: Int] = [:]
        for (index, decision) in decisions.enumerated() {
            last[key(decision)] = index
            if deletes(decision) {
                lastDeletion[key(decision)] = index
                firstSet[key(decision)] = nil
            } else if firstSet[key(decision)] == nil {
                firstSet[key(decision)] = index
            }
        }
        let stored = Set(existing.map { Key(name: $0.name, domain: domainKey($0), path: $0.path) })
        var kept: [(position: Int, index: Int)] = []
        var newPerDomain: [String: Int] = [:]
        // From the last field back, so a domain's newest cookies are the ones counted.
        for (index, decision) in decisions.enumerated().reversed() where last[key(decision)] == index {
            let deletion = lastDeletion[key(decision)].flatMap { stored.contains(key(decision)) ? $0 : nil }
            if deletes(decision) {
                if let deletion { kept.append((deletion, deletion)) }
                continue
            }
            let count = newPerDomain[decision.domain, default: 0]
            if count < maximumCookiesPerDomain {
                newPerDomain[decision.domain] = count + 1
                kept.append((firstSet[key(decision)] ?? index, index))
            }
            if let deletion { kept.append((deletion, deletion)) }
        }
        return kept.sorted { $0.position < $1.position }.map { decisions[$0.index] }
    }

    private static func store(_ decision: Decision, in storage: HTTPCookieStorage, existing: inout [HTTPCookie], now: Date) {
        // Step 11: the same name, domain and path (host-only or not) is the
        // same cookie: the new one replaces it and keeps its creation time.
        let isSame = { (cookie: HTTPCookie) in
            cookie.name == decision.name && domainKey(cookie) == decision.domain && cookie.path == decision.path
        }
        // corelibs' HTTPCookieStorage files a cookie under its domain, path
        // and name run together, so another cookie ("b" at "/a" and "ab" at
        // "/") takes the same place: storing this one replaces it, and both
        // cannot be kept. An insecure origin never so removes a live Secure
        // cookie (6265bis: it may not overwrite one; `_Host-sid` at `/_` would
        // remove `__Host-sid` at `/`): refused. Otherwise the other goes, as
        // corelibs would have it, and is forgotten properly. (A deletion
        // touches only its own cookie.)
        let deletes = decision.expiry.map { $0 <= now } ?? false
        let storageKey = decision.storedDomain + decision.path + decision.name
        let colliding = deletes ? [] : existing.filter { $0.domain + $0.path + $0.name == storageKey && !isSame($0) }
        if !decision.fromSecureOrigin,
           colliding.contains(where: { $0.isSecure && ($0.expiresDate.map { $0 > now } ?? true) }) { return }
        for cookie in colliding { remove(cookie, from: storage) }
        existing.removeAll { cookie in colliding.contains { $0 === cookie } }
        let replaced = existing.filter(isSame)
        let created = replaced.map { creation(of: $0, in: storage) }.min { $0.0 < $1.0 }
        for cookie in replaced { remove(cookie, from: storage) }
        existing.removeAll { cookie in replaced.contains { $0 === cookie } }

        // An expiry in the past (Max-Age <= 0 among them) only deletes.
        if let expiry = decision.expiry, expiry <= now { return }

        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: decision.name, .value: decision.value, .domain: decision.storedDomain, .path: decision.path,
        ]
        if decision.secure { properties[.secure] = "TRUE" }
        if let expiry = decision.expiry { properties[.expires] = expiry }
        if decision.httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        guard let cookie = HTTPCookie(properties: properties) else { return }
        storage.setCookie(cookie)
        let entry = CookieLedger.Entry(created: created?.0 ?? now, sequence: created?.1 ?? CookieLedger.shared.nextSequence(),
                                       stamp: CookieLedger.stamp(of: cookie), sameSite: decision.sameSite)
        CookieLedger.shared.record(entry, for: ledgerKey(cookie), in: storage)
        existing.append(cookie)
        evictOldest(ofDomain: decision.domain, keeping: cookie, in: storage, existing: &existing, now: now)
    }

    /// At most `maximumCookiesPerDomain` per domain: expired ones go first
    /// (RFC 6265 §5.3: they may still be in the storage, never sent), then
    /// the oldest.
    private static func evictOldest(ofDomain domain: String, keeping newest: HTTPCookie, in storage: HTTPCookieStorage,
                                    existing: inout [HTTPCookie], now: Date) {
        let sameDomain = existing.filter { domainKey($0) == domain }
        guard sameDomain.count > maximumCookiesPerDomain else { return }
        let oldest = sameDomain.filter { $0 !== newest }
            .map { (cookie: $0, live: ($0.expiresDate.map { $0 > now } ?? true) ? 1 : 0, created: creation(of: $0, in: storage)) }
            .sorted { ($0.live, $0.created.0, $0.created.1) < ($1.live, $1.created.0, $1.created.1) }
            .prefix(sameDomain.count - maximumCookiesPerDomain)
            .map(\.cookie)
        for cookie in oldest { remove(cookie, from: storage) }
        existing.removeAll { cookie in oldest.contains { $0 === cookie } }
    }

    static func remove(_ cookie: HTTPCookie, from storage: HTTPCookieStorage) {
        storage.deleteCookie(cookie)
        CookieLedger.shared.forget(ledgerKey(cookie), in: storage)
    }

    static func ledgerKey(_ cookie: HTTPCookie) -> CookieLedger.Key {
        CookieLedger.Key(name: cookie.name, domain: cookie.domain, path: cookie.path)
    }
}
