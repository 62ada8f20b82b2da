import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Validates image responses and returns an `Image` (`AFImageResponseSerializer`).
///
/// Accepts 2.7's image content types plus `image/webp`. On Linux there is no UIImage,
/// so the value is an `Image` carrying format, pixel size and the encoded bytes.
// @unchecked: no stored state of its own; the base class guards its settings.
open class ImageResponseSerializer: HTTPResponseSerializer, @unchecked Sendable {
    /// Creates a serializer accepting the image content types.
    public required init() {
        super.init()
        acceptableContentTypes = ["image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon",
                                  "image/bmp", "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp"]
    }

    /// Validates the response and reads the image header; nil for an empty body.
    /// Bytes that are not a PNG, JPEG, GIF, WebP or BMP image are a thrown error.
    open override func responseObject(for response: URLResponse?, data: Data?) throws -> Any? {
        let validationError = try validationErrorAllowingBody(response, data: data)
        if let error = validationError { throw error }
        guard let data = data, !data.isEmpty else { return nil }
        guard let image = Image(data: data) else {
            throw responseDecodingError(description: "Image data could not be decoded",
                                        reason: "The body is not a PNG, JPEG, GIF, WebP or BMP image, or its header is damaged.",
                                        response: response, data: data)
        }
        return image
    }

    /// Restores a serializer archived with `encode(with:)`.
    public required init?(coder: NSCoder) {
        super.init(coder: coder)
    }
}
