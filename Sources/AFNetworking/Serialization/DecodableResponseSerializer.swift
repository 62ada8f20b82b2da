import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(AFNetworkingInternal) import AFNetworkingTransport

/// Decodes a JSON body into `T` with a `JSONDecoder` (not in 2.7).
///
/// Validation is as for `JSONResponseSerializer`, except that a rejected status code is
/// thrown without decoding: an error body rarely has `T`'s shape. A decoding failure is
/// an `NSError` in `AFURLResponseSerializationErrorDomain` (code
/// `NSURLErrorCannotDecodeContentData`) with the `DecodingError` under
/// `NSUnderlyingErrorKey` and the response and body in `userInfo`.
// @unchecked: `decoder` lives in `decoderState` (LockedState); the base class guards the rest.
open class DecodableResponseSerializer<T: Decodable>: HTTPResponseSerializer, @unchecked Sendable {
    /// The `decoder` reference, behind a lock of its own. (Foundation's `JSONDecoder`
    /// guards its own strategies, so changing them on a shared decoder is safe too.)
    private let decoderState = LockedState(JSONDecoder())

    /// The decoder used; configure its strategies as needed.
    open var decoder: JSONDecoder {
        get { decoderState[\.self] } set { decoderState.set(\.self, to: newValue) }
    }

    /// Creates a serializer accepting the JSON content types with a default decoder.
    public required init() {
        super.init()
        acceptableContentTypes = ["application/json", "text/json", "text/javascript"]
    }

    /// Creates a serializer using `decoder`.
    public convenience init(decoder: JSONDecoder) {
        self.init()
        self.decoder = decoder
    }

    /// The decoded value, typed; nil for an empty or whitespace-only body.
    open func decodedObject(for response: URLResponse?, data: Data?) throws -> T? {
        try validate(response as? HTTPURLResponse, data: data)
        guard let data = data,
              let payload = try TextEncoding.utf8Payload(data, response: response, fallback: stringEncoding) else {
            return nil
        }
        // Taken out first: `T`'s `init(from:)` is the caller's code and runs without our lock.
        let decoder = self.decoder
        do {
            return try decoder.decode(T.self, from: payload)
        } catch {
            throw responseDecodingError(description: "The response could not be decoded as \(T.self)",
                                        reason: String(describing: error),
                                        response: response, data: data, underlying: error)
        }
    }

    /// `decodedObject(for:data:)` as `Any?`, for use wherever a response serializer fits.
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        return try decodedObject(for: response, data: data)
    }

    /// Keyed archives need a top-level class name, which a generic class lacks, so it
    /// archives as a `JSONResponseSerializer` with the same validation settings.
    open override var classForKeyedArchiver: AnyClass? {
        return JSONResponseSerializer.self
    }

    /// Restores the validation settings; the decoder's configuration is not archived.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    override func copyConfiguration(to other: HTTPResponseSerializer) {
        super.copyConfiguration(to: other)
        guard let other = other as? DecodableResponseSerializer<T> else { return }
        // A fresh decoder with the same strategies, so tuning the copy leaves the original alone.
        let decoder = self.decoder
        let copy = JSONDecoder()
        copy.dateDecodingStrategy = decoder.dateDecodingStrategy
        copy.dataDecodingStrategy = decoder.dataDecodingStrategy
        copy.keyDecodingStrategy = decoder.keyDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = decoder.nonConformingFloatDecodingStrategy
        copy.userInfo = decoder.userInfo
        other.decoder = copy
    }
}
