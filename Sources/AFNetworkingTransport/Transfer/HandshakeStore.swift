import CAFOpenSSL
import Glibc

/// The trust anchors of the standard verification — the CA bundle and
/// directory a request names (`SSL_CERT_FILE` / `SSL_CERT_DIR` when the
/// process started), else OpenSSL's defaults, the system's — loaded once and
/// given to every connection. Left to itself libcurl parses the whole bundle
/// into each new connection's store: about 230M instructions and 1.5 MiB per
/// connection, on the network thread (a CA directory in its settings, as
/// Debian's build has, keeps it from caching the store).
///
/// Once handed to connections, only the network thread uses a store: libcurl
/// sets its verification flags on the store it finds (the same flags every time).
package final class HandshakeStore: @unchecked Sendable {
    // @unchecked: `handle` is a `let`; X509_STORE counts its references and
    // locks its lookups; only the network thread's handshakes use it.

    /// The owned `X509_STORE*`.
    let handle: OpaquePointer

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        cafssl_store_free(handle)
    }

    /// The store of `file` and `directory`, or of OpenSSL's defaults when both
    /// are nil; nil when OpenSSL could not make it (a file that does not load:
    /// the transfer then leaves the files to libcurl, which reports them).
    /// Off the network thread: the first call for a key reads the bundle.
    package static func current(file: String?, directory: String?) -> HandshakeStore? {
        NetworkThread.assertNotCurrent()
        // OpenSSL's defaults follow the variables as they are now.
        let key = file == nil && directory == nil
            ? Key(file: nil, directory: nil, defaultFile: variable("SSL_CERT_FILE"), defaultDirectory: variable("SSL_CERT_DIR"))
            : Key(file: file, directory: directory, defaultFile: nil, defaultDirectory: nil)
        // Loaded under the lock on purpose: requests building at once wait for
        // one load instead of each parsing the bundle. No caller code runs inside.
        return cache.withLock { cache in
            if let cached = cache, cached.key == key { return cached.store }
            cafssl_init()
            guard let handle = cafssl_store_new(file == nil && directory == nil ? 1 : 0) else { return nil }
            let store = HandshakeStore(handle: handle)
            if file != nil || directory != nil {
                guard cafssl_store_load_locations(handle, file, directory) == 1 else { return nil }
            }
            cache = (key, store)
            return store
        }
    }

    private struct Key: Equatable {
        var file: String?
        var directory: String?
        var defaultFile: String?
        var defaultDirectory: String?
    }

    private static func variable(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The last store made and what it was made from.
    private static let cache = LockedState<(key: Key, store: HandshakeStore)?>(nil)
}
