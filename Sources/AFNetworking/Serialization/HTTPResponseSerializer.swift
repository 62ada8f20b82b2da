import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Validates status code and content type, and returns the body unchanged
/// (`AFHTTPResponseSerializer`). Subclasses decode the body further.
///
/// A manager shares one serializer with every operation it runs, so its settings may be
/// changed from any thread while responses are being serialized on others.
// @unchecked: every mutable stored property lives in `state` (LockedState); subclasses guard their own.
open class HTTPResponseSerializer: NSObject, URLResponseSerialization, NSSecureCoding, NSCopying, @unchecked Sendable {
    /// The validation settings, behind one lock.
    private struct State {
        var acceptableStatusCodes: IndexSet? = IndexSet(integersIn: 200..<300)
        var acceptableContentTypes: Set<String>?
        var stringEncoding: String.Encoding = .utf8
    }

    private let state = LockedState(State())

    /// Status codes considered successful; nil accepts any. Defaults to 200..<300.
    open var acceptableStatusCodes: IndexSet? {
        get { state[\.acceptableStatusCodes] } set { state.set(\.acceptableStatusCodes, to: newValue) }
    }

    /// MIME types accepted in the response's `Content-Type`; nil accepts any.
    open var acceptableContentTypes: Set<String>? {
        get { state[\.acceptableContentTypes] } set { state.set(\.acceptableContentTypes, to: newValue) }
    }

    /// Encoding used to read a text body whose `Content-Type` names no charset. Defaults to UTF-8.
    open var stringEncoding: String.Encoding {
        get { state[\.stringEncoding] } set { state.set(\.stringEncoding, to: newValue) }
    }

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
        if let error = validationError(ResponseSummary(response), data: data) { throw error }
    }

    /// 2.7's `-validateResponse:data:error:` as Swift 2 imported it. Deprecated
    /// with `renamed:`; declared here rather than in
    /// Compatibility+ResponseSerialization.swift so that a subclass can override it.
    @available(*, deprecated, renamed: "validate(_:data:)")
    open func validateResponse(_ response: HTTPURLResponse?, data: Data?) throws {
        try validate(response, data: data)
    }

    /// The validation itself, on what it reads from a response.
    func validationError(_ response: ResponseSummary, data: Data?) -> NSError? {
        let (acceptableTypes, acceptableStatuses) = state.withLock { ($0.acceptableContentTypes, $0.acceptableStatusCodes) }
        var validationError: NSError?

        if let acceptable = acceptableTypes, !acceptable.contains(response.mimeType ?? ""),
           let data = data, !data.isEmpty, let url = response.url {
            let type = response.mimeType ?? "(none)"
            var userInfo: [String: Any] = [
                NSLocalizedDescriptionKey: "Request failed: unacceptable content-type: \(type)",
                NSURLErrorFailingURLErrorKey: url,
                AFNetworkingOperationFailingURLResponseDataErrorKey: data,
            ]
            userInfo[AFNetworkingOperationFailingURLResponseErrorKey] = response.response()
            validationError = NSError(domain: AFURLResponseSerializationErrorDomain,
                                      code: NSURLErrorCannotDecodeContentData, userInfo: userInfo)
        }

        let status = response.statusCode
        if let acceptable = acceptableStatuses, status < 0 || !acceptable.contains(status),
           let url = response.url {
            var userInfo: [String: Any] = [
                NSLocalizedDescriptionKey: "Request failed: \(HTTPStatusReason.phrase(forStatusCode: status)) (\(status))",
                NSURLErrorFailingURLErrorKey: url,
            ]
            userInfo[AFNetworkingOperationFailingURLResponseErrorKey] = response.response()
            if let data = data { userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] = data }
            let statusError = NSError(domain: AFURLResponseSerializationErrorDomain,
                                      code: NSURLErrorBadServerResponse, userInfo: userInfo)
            validationError = chainError(statusError, underlying: validationError)
        }
        return validationError
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

    /// Whether this serializer is exactly one of the library's classes whose
    /// work `responseObject(forReceived:data:)` repeats without an
    /// `HTTPURLResponse`. A subclass is never: its overrides must see one.
    var readsReceivedHeads: Bool {
        let kind = type(of: self)
        return kind == HTTPResponseSerializer.self || kind == JSONResponseSerializer.self
    }

    /// `responseObject(for:data:)` for a head the transport received, for
    /// the serializers `readsReceivedHeads` names.
    func responseObject(forReceived response: ResponseSummary, data: Data?) throws -> Any? {
        if let error = validationError(response, data: data) { throw error }
        return data
    }

    // MARK: NSSecureCoding

    /// Serializers archive with secure coding.
    public class var supportsSecureCoding: Bool { return true }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init()
        let statusCodes = SecureCodingHelpers.decodeIndexSet(forKey: "acceptableStatusCodes", with: coder)
        let contentTypes = SecureCodingHelpers.decodeStringSet(forKey: "acceptableContentTypes", with: coder)
        let encoding = SecureCodingHelpers.decodeUInt(forKey: "stringEncoding", with: coder).map(String.Encoding.init(rawValue:))
        state.withLock { state in
            state.acceptableStatusCodes = statusCodes
            state.acceptableContentTypes = contentTypes
            if let encoding { state.stringEncoding = encoding }
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
    /// One snapshot, taken under this serializer's lock and written under the other's
    /// (never both at once), so a copy is never a mix of old and new settings.
    func copyConfiguration(to other: HTTPResponseSerializer) {
        let snapshot = state.withLock { $0 }
        other.state.withLock { $0 = snapshot }
    }
}
