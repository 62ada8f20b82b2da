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

    /// A fresh store with OpenSSL's defaults and `extra` anchors added (a
    /// policy's `additionalTrustedCertificates`): not the shared one, which
    /// must stay exactly the system's. An added anchor may be an intermediate
    /// CA: like an explicit anchor, it is trusted as is.
    static func system(adding extra: [Certificate]) -> TrustStore? {
        cafssl_init()
        guard let handle = cafssl_store_new(1) else { return nil }
        let store = TrustStore(handle: handle, acceptsPartialChains: true)
        for anchor in extra { _ = cafssl_store_add_cert(handle, anchor.handle) }
        return store
    }

    /// The last system store loaded and the environment it was loaded for.
    private static let systemCache = LockedState<(key: SystemStoreKey, store: TrustStore)?>(nil)
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
