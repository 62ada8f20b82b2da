import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What both HTTP managers archive, under 2.7's keys: the base URL, both
/// serializers and the security policy; beyond 2.7 the retry policy and the
/// operation manager's `timeoutIntervalForResource` (the session manager's is
/// in its configuration). Absent keys decode as nil (the manager keeps its
/// defaults). Never archived: `clientCertificate` (a private key is not
/// written into an archive) and `logger` (a process's own handler).
struct ManagerArchive {
    var baseURL: URL?
    var requestSerializer: HTTPRequestSerializer?
    var responseSerializer: HTTPResponseSerializer?
    var securityPolicy: SecurityPolicy?
    var retryPolicy: RetryPolicy?
    var timeoutIntervalForResource: TimeInterval?

    init(baseURL: URL?, requestSerializer: HTTPRequestSerializer?, responseSerializer: HTTPResponseSerializer?,
         securityPolicy: SecurityPolicy?) {
        self.baseURL = baseURL
        self.requestSerializer = requestSerializer
        self.responseSerializer = responseSerializer
        self.securityPolicy = securityPolicy
    }

    init(decodingFrom coder: NSCoder) {
        baseURL = Self.decode(NSString.self, Self.baseURLKey, coder).flatMap { URL(string: $0 as String) }
        requestSerializer = Self.decode(HTTPRequestSerializer.self, "requestSerializer", coder)
        responseSerializer = Self.decode(HTTPResponseSerializer.self, "responseSerializer", coder)
        securityPolicy = Self.decode(SecurityPolicy.self, "securityPolicy", coder)
        retryPolicy = RetryPolicyCoding.decode(from: coder)
        if coder.containsValue(forKey: Self.resourceTimeoutKey) {
            timeoutIntervalForResource = coder.decodeDouble(forKey: Self.resourceTimeoutKey)
        }
    }

    private static let resourceTimeoutKey = "timeoutIntervalForResource"
    static let baseURLKey = "baseURL"

    func encode(to coder: NSCoder) {
        if let baseURL { coder.encode(baseURL.absoluteString as NSString, forKey: Self.baseURLKey) }
        if let requestSerializer { coder.encode(requestSerializer, forKey: "requestSerializer") }
        if let responseSerializer { coder.encode(responseSerializer, forKey: "responseSerializer") }
        if let securityPolicy { coder.encode(securityPolicy, forKey: "securityPolicy") }
        if let retryPolicy { RetryPolicyCoding.encode(retryPolicy, to: coder) }
        if let timeoutIntervalForResource { coder.encode(timeoutIntervalForResource, forKey: Self.resourceTimeoutKey) }
    }

    /// swift-corelibs-foundation's keyed unarchiver records an error for a
    /// missing key, failing the whole archive: ask first.
    private static func decode<Value: NSObject & NSCoding>(_ type: Value.Type, _ key: String, _ coder: NSCoder) -> Value? {
        coder.containsValue(forKey: key) ? coder.decodeObject(of: type, forKey: key) : nil
    }
}
