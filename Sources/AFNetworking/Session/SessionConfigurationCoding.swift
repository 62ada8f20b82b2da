import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Archives what a session manager's configuration can carry through
/// `NSSecureCoding`: its scalar fields and property-list headers.
/// swift-corelibs-foundation's `URLSessionConfiguration` does not archive
/// itself, and its storages (cache, cookies, credentials) are live objects:
/// they decode as the default configuration's.
enum SessionConfigurationCoding {
    private enum Key {
        static let present = "sessionConfiguration"
        static let identifier = "sessionConfiguration.identifier"
        static let requestTimeout = "sessionConfiguration.timeoutIntervalForRequest"
        static let resourceTimeout = "sessionConfiguration.timeoutIntervalForResource"
        static let cachePolicy = "sessionConfiguration.requestCachePolicy"
        static let headers = "sessionConfiguration.httpAdditionalHeaders"
        static let maximumConnections = "sessionConfiguration.httpMaximumConnectionsPerHost"
        static let setsCookies = "sessionConfiguration.httpShouldSetCookies"
        static let cookiePolicy = "sessionConfiguration.httpCookieAcceptPolicy"
        static let cellular = "sessionConfiguration.allowsCellularAccess"
    }

    static func encode(_ configuration: URLSessionConfiguration, to coder: NSCoder) {
        coder.encode(true, forKey: Key.present)
        if let identifier = configuration.identifier { coder.encode(identifier as NSString, forKey: Key.identifier) }
        coder.encode(configuration.timeoutIntervalForRequest, forKey: Key.requestTimeout)
        coder.encode(configuration.timeoutIntervalForResource, forKey: Key.resourceTimeout)
        coder.encode(Int(configuration.requestCachePolicy.rawValue), forKey: Key.cachePolicy)
        var headers: [String: String] = [:]
        for (key, value) in configuration.httpAdditionalHeaders ?? [:] {
            guard let name = key as? String else { continue }
            if let text = value as? String { headers[name] = text } else if let number = value as? NSNumber { headers[name] = number.stringValue }
        }
        if !headers.isEmpty {
            let dictionary = NSMutableDictionary()
            for (name, value) in headers { dictionary[NSString(string: name)] = NSString(string: value) }
            coder.encode(dictionary, forKey: Key.headers)
        }
        coder.encode(configuration.httpMaximumConnectionsPerHost, forKey: Key.maximumConnections)
        coder.encode(configuration.httpShouldSetCookies, forKey: Key.setsCookies)
        coder.encode(Int(configuration.httpCookieAcceptPolicy.rawValue), forKey: Key.cookiePolicy)
        coder.encode(configuration.allowsCellularAccess, forKey: Key.cellular)
    }

    /// The archived configuration, or nil when the archive has none.
    static func decode(from coder: NSCoder) -> URLSessionConfiguration? {
        guard coder.containsValue(forKey: Key.present) else { return nil }
        let configuration = URLSessionConfiguration.default
        if coder.containsValue(forKey: Key.identifier), let identifier = coder.decodeObject(of: NSString.self, forKey: Key.identifier) {
            configuration.identifier = identifier as String
        }
        if coder.containsValue(forKey: Key.requestTimeout) {
            configuration.timeoutIntervalForRequest = coder.decodeDouble(forKey: Key.requestTimeout)
        }
        if coder.containsValue(forKey: Key.resourceTimeout) {
            configuration.timeoutIntervalForResource = coder.decodeDouble(forKey: Key.resourceTimeout)
        }
        if let policy = URLRequest.CachePolicy(rawValue: UInt(max(0, coder.decodeInteger(forKey: Key.cachePolicy)))) {
            configuration.requestCachePolicy = policy
        }
        if coder.containsValue(forKey: Key.headers),
           let headers = coder.decodeObject(of: [NSDictionary.self, NSString.self], forKey: Key.headers) as? NSDictionary {
            var decoded: [AnyHashable: Any] = [:]
            for (key, value) in headers {
                if let name = key as? String, let text = value as? String { decoded[name] = text }
            }
            configuration.httpAdditionalHeaders = decoded
        }
        if coder.containsValue(forKey: Key.maximumConnections) {
            configuration.httpMaximumConnectionsPerHost = coder.decodeInteger(forKey: Key.maximumConnections)
        }
        if coder.containsValue(forKey: Key.setsCookies) {
            configuration.httpShouldSetCookies = coder.decodeBool(forKey: Key.setsCookies)
        }
        if let policy = HTTPCookie.AcceptPolicy(rawValue: UInt(max(0, coder.decodeInteger(forKey: Key.cookiePolicy)))) {
            configuration.httpCookieAcceptPolicy = policy
        }
        if coder.containsValue(forKey: Key.cellular) { configuration.allowsCellularAccess = coder.decodeBool(forKey: Key.cellular) }
        return configuration
    }
}
