import CAFCurl
import Foundation

/// Owns one libcurl easy handle and the C memory that must outlive it (the
/// header list). Typed, throwing setters replace curl's variadic setopt.
///
/// Only the network thread touches an easy handle once it has been added to
/// the multi handle; before that, the thread that built the transfer owns it.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    /// CURLOPT_PROXYHEADER's list: fields for the proxy alone.
    private var proxyHeaderList: UnsafeMutablePointer<curl_slist>?
    /// False for a handle taken from the pool. curl keeps a used handle's
    /// receive buffer across `curl_easy_reset` and refuses CURLOPT_BUFFERSIZE
    /// once it exists, so the size is set on fresh handles only (they all use
    /// the same size).
    let isFresh: Bool

    /// A handle from the pool (reset to defaults) or a new one; `fresh`: a new
    /// one always (a transfer that needs its own receive buffer size).
    init(fresh: Bool = false) throws {
        try cafcurl_global_init_once().check("global initialisation")
        if !fresh, let pooled = EasyHandle.pool.take() {
            curl_easy_reset(pooled)
            raw = pooled
            isFresh = false
        } else if let handle = curl_easy_init() {
            raw = handle
            isFresh = true
        } else {
            throw CurlOptionError(code: CURLE_FAILED_INIT, what: "a new easy handle")
        }
    }

    /// Gives the handle back. Called by the network thread after the handle has
    /// left the multi handle, never from a `deinit`, so no curl callback can
    /// re-enter. Pooled handles keep curl's buffers and caches warm; the reset
    /// happens when the next request takes one, off the network thread.
    func cleanup() {
        if let list = headerList {
            curl_slist_free_all(list)
            headerList = nil
        }
        if let list = proxyHeaderList {
            curl_slist_free_all(list)
            proxyHeaderList = nil
        }
        if !EasyHandle.pool.put(raw) {
            curl_easy_cleanup(raw)
        }
    }

    /// Idle easy handles shared by all transfers.
    private static let pool = HandlePool(capacity: 64)

    func set(_ option: CURLoption, _ value: Int) throws {
        try cafcurl_easy_setopt_long(raw, option, value).check("option \(option.rawValue) = \(value)")
    }

    func set(_ option: CURLoption, _ value: Bool) throws {
        try set(option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, size value: Int64) throws {
        try cafcurl_easy_setopt_off_t(raw, option, curl_off_t(value)).check("option \(option.rawValue) = \(value)")
    }

    func set(_ option: CURLoption, _ value: String) throws {
        try value.withCString { try cafcurl_easy_setopt_string(raw, option, $0).check("option \(option.rawValue)") }
    }

    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws {
        try cafcurl_easy_setopt_pointer(raw, option, pointer).check("option \(option.rawValue)")
    }

    /// Installs the request header lines; the list lives until `cleanup()`.
    func setHeaders(_ lines: [String]) throws {
        let list = try EasyHandle.list(of: lines)
        if let old = headerList { curl_slist_free_all(old) }
        headerList = list
        try set(CURLOPT_HTTPHEADER, pointer: UnsafeMutableRawPointer(list))
    }

    /// CURLOPT_PROXYHEADER: sent to the proxy only (its CONNECT, or every
    /// request through a proxy that does not tunnel), never to the origin.
    func setProxyHeaders(_ lines: [String]) throws {
        let list = try EasyHandle.list(of: lines)
        if let old = proxyHeaderList { curl_slist_free_all(old) }
        proxyHeaderList = list
        try set(CURLOPT_PROXYHEADER, pointer: UnsafeMutableRawPointer(list))
    }

    private static func list(of lines: [String]) throws -> UnsafeMutablePointer<curl_slist>? {
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = curl_slist_append(list, line) else {
                if let list { curl_slist_free_all(list) }
                throw CurlOptionError(code: CURLE_OUT_OF_MEMORY, what: "header list")
            }
            list = appended
        }
        return list
    }

    func info(long key: CURLINFO) -> Int {
        var value: Int = 0
        return cafcurl_easy_getinfo_long(raw, key, &value) == CURLE_OK ? value : 0
    }

    func info(size key: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        return cafcurl_easy_getinfo_off_t(raw, key, &value) == CURLE_OK ? Int64(value) : -1
    }

    func info(string key: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard cafcurl_easy_getinfo_string(raw, key, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }
}

/// A small lock-protected stack of idle easy handles.
private final class HandlePool: Sendable {
    private struct Handles: @unchecked Sendable {
        // @unchecked: raw curl handles, only ever used by one owner at a time.
        var idle: [UnsafeMutableRawPointer] = []
    }
    private let handles = LockedState(Handles())
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    func take() -> UnsafeMutableRawPointer? {
        handles.withLock { $0.idle.popLast() }
    }

    /// False when the pool is full: the caller frees the handle.
    func put(_ handle: UnsafeMutableRawPointer) -> Bool {
        handles.withLock { pool in
            guard pool.idle.count < capacity else { return false }
            pool.idle.append(handle)
            return true
        }
    }
}
