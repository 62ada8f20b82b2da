import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Validates status code and content type, and returns the body unchanged
/// (`AFHTTPResponseSerializer`). Subclasses decode the body further.
open class HTTPResponseSerializer: NSObject, URLResponseSerialization, NSSecureCoding, NSCopying {
    /// Status codes considered successful; nil accepts any. Defaults to 200..<300.
    open var acceptableStatusCodes: IndexSet? = IndexSet(integersIn: 200..<300)

    /// MIME types accepted in the response's `Content-Type`; nil accepts any.
    open var acceptableContentTypes: Set<String>?

    /// Encoding used to read a text body whose `Content-Type` names no charset. Defaults to UTF-8.
    open var stringEncoding: String.Encoding = .utf8

    /// Creates a serializer that accepts any content type with a 2xx status.
    public required override init() {
        super.init()
    }

    /// Creates a serializer with default settings (2.7's `+serializer`).
    open class func serializer() -> Self {
        return self.init()
    }

    // MARK: Validation

    /// Throws when `response` has an unacceptable content type or status code.
    ///
    /// As in 2.7, a content-type mismatch is reported only when there is a body
    /// (code `NSURLErrorCannotDecodeContentData`), and a status mismatch is reported
    /// with code `NSURLErrorBadServerResponse`, chaining the content-type error under
    /// `NSUnderlyingErrorKey` when both apply. A nil or non-HTTP response is valid.
    open func validate(_ response: HTTPURLResponse?, data: Data?) throws {
        guard let response = response else { return }
        var validationError: NSError?

        if let acceptable = acceptableContentTypes, !acceptable.contains(response.mimeType ?? ""),
           let data = data, !data.isEmpty, let url = response.url {
            let type = response.mimeType ?? "(none)"
            let userInfo: [String: Any] = [
                NSLocalizedDescriptionKey: "Request failed: unacceptable content-type: \(type)",
                NSURLErrorFailingURLErrorKey: url,
                AFNetworkingOperationFailingURLResponseErrorKey: response,
                AFNetworkingOperationFailingURLResponseDataErrorKey: data,
            ]
            validationError = NSError(domain: AFURLResponseSerializationErrorDomain,
                                      code: NSURLErrorCannotDecodeContentData, userInfo: userInfo)
        }

        let status = response.statusCode
        if let acceptable = acceptableStatusCodes, status < 0 || !acceptable.contains(status),
           let url = response.url {
            var userInfo: [String: Any] = [
                NSLocalizedDescriptionKey: "Request failed: \(HTTPStatusReason.phrase(forStatusCode: status)) (\(status))",
                NSURLErrorFailingURLErrorKey: url,
                AFNetworkingOperationFailingURLResponseErrorKey: response,
            ]
            if let data = data { userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] = data }
            let statusError = NSError(domain: AFURLResponseSerializationErrorDomain,
                                      code: NSURLErrorBadServerResponse, userInfo: userInfo)
            validationError = chainError(statusError, underlying: validationError)
        }

        if let error = validationError { throw error }
    }

    /// Runs `validate(_:data:)` the way 2.7's decoding subclasses do: a content-type
    /// failure is thrown at once (the body is not what we can parse), while a status
    /// failure is returned so the body can still be parsed and the two errors chained.
    func validationErrorAllowingBody(_ response: URLResponse?, data: Data?) throws -> NSError? {
        do {
            try validate(response as? HTTPURLResponse, data: data)
            return nil
        } catch let error as NSError {
            if errorChainContains(error, code: NSURLErrorCannotDecodeContentData,
                                  domain: AFURLResponseSerializationErrorDomain) {
                throw error
            }
            return error
        }
    }

    // MARK: URLResponseSerialization

    /// Validates the response and returns `data` as is.
    open func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        try validate(response as? HTTPURLResponse, data: data)
        return data
    }

    // MARK: NSSecureCoding

    /// Serializers archive with secure coding.
    public class var supportsSecureCoding: Bool { return true }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init()
        acceptableStatusCodes = SecureCodingHelpers.decodeIndexSet(forKey: "acceptableStatusCodes", with: coder)
        acceptableContentTypes = SecureCodingHelpers.decodeStringSet(forKey: "acceptableContentTypes", with: coder)
        if let raw = SecureCodingHelpers.decodeUInt(forKey: "stringEncoding", with: coder) {
            stringEncoding = String.Encoding(rawValue: raw)
        }
    }

    /// Archives the validation settings.
    open func encode(with coder: NSCoder) {
        SecureCodingHelpers.encode(acceptableStatusCodes, forKey: "acceptableStatusCodes", with: coder)
        SecureCodingHelpers.encode(acceptableContentTypes, forKey: "acceptableContentTypes", with: coder)
        coder.encode(NSNumber(value: stringEncoding.rawValue), forKey: "stringEncoding")
    }

    // MARK: NSCopying

    /// A new serializer of the same class with the same settings.
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = type(of: self).init()
        copyConfiguration(to: copy)
        return copy
    }

    /// Copies settings onto `other`; subclasses add their own after calling super.
    func copyConfiguration(to other: HTTPResponseSerializer) {
        other.acceptableStatusCodes = acceptableStatusCodes
        other.acceptableContentTypes = acceptableContentTypes
        other.stringEncoding = stringEncoding
    }
}
