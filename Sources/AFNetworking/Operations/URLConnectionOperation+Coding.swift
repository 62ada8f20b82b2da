import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Archiving keys. The request, response and error are stored as plain
/// property-list values: swift-corelibs-foundation cannot securely decode an
/// archived NSURLRequest (it traps on the nested NSURL), so the pieces that
/// matter are stored one by one.
enum OperationCodingKey {
    static let url = "request.url"
    static let method = "request.method"
    static let headers = "request.headers"
    static let body = "request.body"
    static let timeout = "request.timeout"
    static let finished = "state.finished"
    static let responseURL = "response.url"
    static let statusCode = "response.statusCode"
    static let responseHeaders = "response.headers"
    static let errorDomain = "error.domain"
    static let errorCode = "error.code"
    static let errorDescription = "error.description"
    static let responseData = "responseData"
    static let totalBytesRead = "totalBytesRead"
    static let responseSerializer = "responseSerializer"
}

extension URLConnectionOperation: NSSecureCoding {
    /// Operations archive securely, as in 2.7.
    public static var supportsSecureCoding: Bool { true }

    /// Archives the request and outcome. An executing or paused operation is
    /// paused first and archives as ready, so unarchiving gives one that can run.
    public func encode(with coder: NSCoder) {
        pause()
        let request = self.request
        coder.encode(request.url?.absoluteString as NSString?, forKey: OperationCodingKey.url)
        coder.encode(request.httpMethod as NSString?, forKey: OperationCodingKey.method)
        coder.encode((request.allHTTPHeaderFields ?? [:]) as NSDictionary, forKey: OperationCodingKey.headers)
        coder.encode(request.httpBody as NSData?, forKey: OperationCodingKey.body)
        coder.encode(request.timeoutInterval, forKey: OperationCodingKey.timeout)
        coder.encode(archivesAsFinished, forKey: OperationCodingKey.finished)
        if let response = response as? HTTPURLResponse, let url = response.url {
            coder.encode(url.absoluteString as NSString, forKey: OperationCodingKey.responseURL)
            coder.encode(response.statusCode, forKey: OperationCodingKey.statusCode)
            let headers = (response.allHeaderFields as? [String: String]) ?? [:]
            coder.encode(headers as NSDictionary, forKey: OperationCodingKey.responseHeaders)
        }
        if let error = transportError as NSError? {
            coder.encode(error.domain as NSString, forKey: OperationCodingKey.errorDomain)
            coder.encode(error.code, forKey: OperationCodingKey.errorCode)
            coder.encode(error.localizedDescription as NSString, forKey: OperationCodingKey.errorDescription)
        }
        coder.encode(responseData as NSData?, forKey: OperationCodingKey.responseData)
        coder.encode(bytesWrittenToOutput, forKey: OperationCodingKey.totalBytesRead)
        if let http = self as? HTTPRequestOperation {
            coder.encode(http.responseSerializer, forKey: OperationCodingKey.responseSerializer)
        }
    }

    static func decodeRequest(from coder: NSCoder) -> URLRequest? {
        guard coder.containsValue(forKey: OperationCodingKey.url),
              let string = coder.decodeObject(of: NSString.self, forKey: OperationCodingKey.url),
              let url = URL(string: string as String) else { return nil }
        var request = URLRequest(url: url)
        func has(_ key: String) -> Bool { coder.containsValue(forKey: key) }
        if has(OperationCodingKey.method) { request.httpMethod = coder.decodeObject(of: NSString.self, forKey: OperationCodingKey.method) as String? }
        let headers = coder.decodeObject(of: [NSDictionary.self, NSString.self], forKey: OperationCodingKey.headers) as? [String: String]
        request.allHTTPHeaderFields = headers
        if has(OperationCodingKey.body) { request.httpBody = coder.decodeObject(of: NSData.self, forKey: OperationCodingKey.body).map { Data(referencing: $0) } }
        let timeout = coder.decodeDouble(forKey: OperationCodingKey.timeout)
        if timeout > 0 { request.timeoutInterval = timeout }
        return request
    }

    func decodeOutcome(from coder: NSCoder) {
        func has(_ key: String) -> Bool { coder.containsValue(forKey: key) }
        var response: HTTPURLResponse?
        if has(OperationCodingKey.responseURL), let string = coder.decodeObject(of: NSString.self, forKey: OperationCodingKey.responseURL), let url = URL(string: string as String) {
            let headers = coder.decodeObject(of: [NSDictionary.self, NSString.self], forKey: OperationCodingKey.responseHeaders) as? [String: String]
            response = HTTPURLResponse(url: url, statusCode: coder.decodeInteger(forKey: OperationCodingKey.statusCode),
                                       httpVersion: nil, headerFields: headers)
        }
        var error: NSError?
        if has(OperationCodingKey.errorDomain), let domain = coder.decodeObject(of: NSString.self, forKey: OperationCodingKey.errorDomain) {
            let description = coder.decodeObject(of: NSString.self, forKey: OperationCodingKey.errorDescription) as String? ?? ""
            error = NSError(domain: domain as String, code: coder.decodeInteger(forKey: OperationCodingKey.errorCode),
                            userInfo: [NSLocalizedDescriptionKey: description])
        }
        let data = has(OperationCodingKey.responseData)
            ? coder.decodeObject(of: NSData.self, forKey: OperationCodingKey.responseData).map { Data(referencing: $0) } : nil
        restore(response: response, error: error, responseData: data, finished: coder.decodeBool(forKey: OperationCodingKey.finished))
    }
}
