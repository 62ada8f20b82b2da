@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// swift-corelibs-foundation persists a cookie's `Secure` flag as a Bool and
/// reads it back only as a String, so every Secure cookie a persistent
/// storage loads from its file is not Secure in the next process: it would
/// go out over plain http, and an http response could replace it. The flag
/// is restored from that same file once per storage, before the library
/// first reads or writes the storage's cookies.
enum CookiePersistence {
    /// Storages other than the shared one that were restored (or need none:
    /// ephemeral ones), by identity; weak, so a freed storage's reused
    /// address is told apart.
    private struct Seen {
        weak var storage: HTTPCookieStorage?
    }

    private static let seen = LockedState<[ObjectIdentifier: Seen]>([:])

    /// Restores the flags of `storage` the first time it is seen. The shared
    /// storage is restored when the library first takes it
    /// (`CookieHandling.sharedStorage`), so its per-request cost is one
    /// comparison.
    ///
    /// Not on the network thread and outside every lock: this reads a file.
    static func restoreOnce(_ storage: HTTPCookieStorage) {
        guard storage !== CookieHandling.sharedStorage else { return }
        let id = ObjectIdentifier(storage)
        let first = seen.withLock { seen -> Bool in
            guard seen[id]?.storage !== storage else { return false }
            seen[id] = Seen(storage: storage)
            return true
        }
        if first { restoreSecureFlags(of: storage) }
    }

    /// Marks again as Secure each cookie of `storage` whose entry in the
    /// storage's file says Secure but which was loaded without it.
    static func restoreSecureFlags(of storage: HTTPCookieStorage) {
        NetworkThread.assertNotCurrent()
        guard let path = persistencePath(of: storage), let data = FileManager.default.contents(atPath: path),
              let file = (try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: Any] else { return }
        var secure: Set<CookieLedger.Key> = []
        for case let properties as [String: Any] in file.values where isTrue(properties[HTTPCookiePropertyKey.secure.rawValue]) {
            guard let name = properties[HTTPCookiePropertyKey.name.rawValue] as? String,
                  let domain = properties[HTTPCookiePropertyKey.domain.rawValue] as? String,
                  let cookiePath = properties[HTTPCookiePropertyKey.path.rawValue] as? String else { continue }
            secure.insert(CookieLedger.Key(name: name, domain: domain.lowercased(), path: cookiePath))
        }
        guard !secure.isEmpty else { return }
        for cookie in storage.cookies ?? [] where !cookie.isSecure && secure.contains(CookieJar.ledgerKey(cookie)) {
            var properties = cookie.properties ?? [:]
            properties[.secure] = "TRUE"
            if let restored = HTTPCookie(properties: properties) { storage.setCookie(restored) }
        }
    }

    /// The file a persistent storage loads from and writes to; nil for an
    /// ephemeral one. corelibs keeps it private: read by reflection, so the
    /// path is exactly the one it used (nil should a future corelibs rename it).
    static func persistencePath(of storage: HTTPCookieStorage) -> String? {
        var path: String?
        var ephemeral = false
        for child in Mirror(reflecting: storage).children {
            if child.label == "cookieFilePath", let value = child.value as? String? { path = value }
            if child.label == "isEphemeral", let value = child.value as? Bool { ephemeral = value }
        }
        return ephemeral ? nil : path
    }

    /// A property list's true: corelibs writes a Bool; a String is what its reader takes.
    private static func isTrue(_ value: Any?) -> Bool {
        if let flag = value as? Bool { return flag }
        if let number = value as? NSNumber { return number.boolValue }
        if let text = value as? String { return !text.isEmpty }
        return false
    }
}
