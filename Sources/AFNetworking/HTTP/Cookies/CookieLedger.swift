@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `HTTPCookieStorage` cannot keep for a cookie: its RFC 6265 creation
/// time (corelibs stamps every `HTTPCookie` with the time it was made and
/// ignores one passed in, so a replaced cookie would lose its place in the
/// §5.4 order) and its `SameSite` value (no such property on Linux).
///
/// An entry belongs to one storage and to one `HTTPCookie` object: it is
/// used only while the stored cookie still carries the `Created` stamp it
/// had when it was stored here, so a cookie that someone else replaced in
/// the storage falls back to its own stamp.
final class CookieLedger: Sendable {
    struct Key: Hashable {
        let name: String
        /// The domain as stored (a leading dot for domain cookies).
        let domain: String
        let path: String
    }

    struct Entry {
        /// §5.3's creation-time, kept across replacements.
        let created: Date
        /// Breaks ties between cookies created within the clock's resolution.
        let sequence: UInt64
        /// The stored `HTTPCookie`'s own `Created` property.
        let stamp: Double
        let sameSite: ParsedSetCookie.SameSite
    }

    private struct Book {
        weak var storage: HTTPCookieStorage?
        var entries: [Key: Entry] = [:]
    }

    private struct State {
        var books: [ObjectIdentifier: Book] = [:]
        var nextSequence: UInt64 = 0
    }

    static let shared = CookieLedger()

    private let state = LockedState(State())

    /// The next tie-breaking sequence number.
    func nextSequence() -> UInt64 {
        state.withLock { state in
            state.nextSequence += 1
            return state.nextSequence
        }
    }

    func record(_ entry: Entry, for key: Key, in storage: HTTPCookieStorage) {
        let id = ObjectIdentifier(storage)
        state.withLock { state in
            if state.books[id]?.storage !== storage {
                // A new storage (or a freed one's address reused): drop the
                // books of storages that no longer exist.
                state.books = state.books.filter { $0.value.storage != nil }
                state.books[id] = Book(storage: storage)
            }
            state.books[id]?.entries[key] = entry
        }
    }

    func forget(_ key: Key, in storage: HTTPCookieStorage) {
        let id = ObjectIdentifier(storage)
        state.withLock { state in
            guard state.books[id]?.storage === storage else { return }
            state.books[id]?.entries[key] = nil
        }
    }

    /// The entry for `cookie` as stored in `storage`, if it is the very cookie recorded.
    func entry(for cookie: HTTPCookie, in storage: HTTPCookieStorage) -> Entry? {
        let key = Key(name: cookie.name, domain: cookie.domain, path: cookie.path)
        let stamp = Self.stamp(of: cookie)
        let id = ObjectIdentifier(storage)
        return state.withLock { state -> Entry? in
            guard let book = state.books[id], book.storage === storage, let entry = book.entries[key],
                  entry.stamp == stamp else { return nil }
            return entry
        }
    }

    /// The `Created` property corelibs gives every `HTTPCookie` (seconds since 2001).
    static func stamp(of cookie: HTTPCookie) -> Double {
        switch cookie.properties?[HTTPCookiePropertyKey("Created")] {
        case let value as Double: return value
        case let value as NSNumber: return value.doubleValue
        case let value as Date: return value.timeIntervalSinceReferenceDate
        default: return 0
        }
    }
}
