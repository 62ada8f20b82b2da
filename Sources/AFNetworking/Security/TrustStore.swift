@_spi(AFNetworkingInternal) import AFNetworkingTransport
import CAFOpenSSL
import Foundation

/// An owned OpenSSL `X509_STORE`: the set of trust anchors a chain is verified against.
// @unchecked: both fields are `let`; OpenSSL's X509_STORE locks itself, so verifications may share one.
final class TrustStore: @unchecked Sendable {
    /// The owned `X509_STORE*`.
    let handle: OpaquePointer
    /// Whether a non-self-signed anchor may end a chain. Explicit anchors behave
    /// like `SecTrustSetAnchorCertificates` (any listed certificate is trusted as
    /// is); the system store keeps OpenSSL's default of requiring a root.
    let acceptsPartialChains: Bool

    private init(handle: OpaquePointer, acceptsPartialChains: Bool) {
        self.handle = handle
        self.acceptsPartialChains = acceptsPartialChains
    }

    deinit {
        cafssl_store_free(handle)
    }

    /// A store holding exactly `anchors`; `nil` if OpenSSL cannot allocate.
    static func anchored(by anchors: [Certificate]) -> TrustStore? {
        cafssl_init()
        guard let handle = cafssl_store_new(0) else { return nil }
        let store = TrustStore(handle: handle, acceptsPartialChains: true)
        for anchor in anchors {
            // A duplicate anchor is harmless; only allocation failures matter, and
            // those surface later as an untrusted chain.
            _ = cafssl_store_add_cert(handle, anchor.handle)
        }
        return store
    }

    /// OpenSSL's default store (`/etc/ssl/certs` and the default bundle, or what
    /// `SSL_CERT_FILE` / `SSL_CERT_DIR` name). Loading a bundle file parses every
    /// certificate in it, so the store is shared and only rebuilt when those
    /// variables change; X509_STORE is safe to use from several threads at once.
    static func system() -> TrustStore? {
        let key = SystemStoreKey.current()
        // Loaded under the lock on purpose: threads asking at once wait for one
        // load instead of each parsing the bundle. No caller code runs inside.
        return systemCache.withLock { cache in
            if let cached = cache, cached.key == key {
                return cached.store
            }
            cafssl_init()
            guard let handle = cafssl_store_new(1) else { return nil }
            let store = TrustStore(handle: handle, acceptsPartialChains: false)
            cache = (key, store)
            return store
        }
    }

    /// A store with OpenSSL's defaults and `extra` anchors added (a policy's
    /// `additionalTrustedCertificates`): not the shared system one, which must
    /// stay exactly the system's. An added anchor may be an intermediate CA:
    /// like an explicit anchor, it is trusted as is.
    ///
    /// Shared by every policy with the same anchors (and the same system
    /// store): making one parses the whole system bundle (about 1.5 MiB and
    /// milliseconds), and each request evaluates a copy of its policy, so a
    /// store per policy object was a store per TLS connection.
    static func system(adding extra: [Data]) -> TrustStore? {
        let key = ExtendedStoreKey(system: SystemStoreKey.current(), anchors: extra.sorted { $0.lexicographicallyPrecedes($1) })
        // Made under the lock, as `system()` is: requests starting together
        // wait for one parse instead of each making a store. No caller code runs inside.
        return extendedCache.withLock { cache in
            if let cached = cache.first(where: { $0.key == key }) { return cached.store }
            cafssl_init()
            guard let handle = cafssl_store_new(1) else { return nil }
            let store = TrustStore(handle: handle, acceptsPartialChains: true)
            for anchor in extra.compactMap(Certificate.init(der:)) { _ = cafssl_store_add_cert(handle, anchor.handle) }
            cache.append((key, store))
            // Stores of anchor sets not used lately go (with the last policy holding them).
            if cache.count > extendedCacheCapacity { cache.removeFirst() }
            return store
        }
    }

    /// The extended stores kept, oldest first.
    private static let extendedCache = LockedState<[(key: ExtendedStoreKey, store: TrustStore)]>([])
    static let extendedCacheCapacity = 8

    /// The last system store loaded and the environment it was loaded for.
    private static let systemCache = LockedState<(key: SystemStoreKey, store: TrustStore)?>(nil)
}

/// What an extended store holds: the system store's sources and the added anchors, sorted.
private struct ExtendedStoreKey: Equatable, Sendable {
    var system: SystemStoreKey
    var anchors: [Data]
}

/// The environment that decides what OpenSSL's default store contains.
private struct SystemStoreKey: Equatable, Sendable {
    var certFile: String?
    var certDirectory: String?

    static func current() -> SystemStoreKey {
        // getenv, like OpenSSL itself, so a variable set at run time is seen.
        SystemStoreKey(certFile: variable("SSL_CERT_FILE"), certDirectory: variable("SSL_CERT_DIR"))
    }

    private static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
