import Foundation

/// An image as `ImageResponseSerializer` returns it on Linux, where there is no
/// UIImage/NSImage: the encoded bytes plus what their header says about them.
/// Pixels are not decoded; hand `data` to an image library when you need them.
public struct Image: Equatable, Sendable {
    /// The container formats whose headers are understood.
    public enum Format: String, Sendable {
        /// Portable Network Graphics.
        case png
        /// JPEG / JFIF / EXIF.
        case jpeg
        /// GIF 87a or 89a.
        case gif
        /// WebP (lossy, lossless or extended).
        case webp
        /// Windows / OS/2 bitmap.
        case bmp
    }

    /// The detected container format.
    public let format: Format
    /// Width in pixels, from the header.
    public let pixelWidth: Int
    /// Height in pixels, from the header.
    public let pixelHeight: Int
    /// The encoded image bytes, unchanged.
    public let data: Data

    /// Reads the header of `data`; nil when the format is unknown, the header is
    /// truncated, or it declares a zero dimension.
    public init?(data: Data) {
        guard let (format, width, height) = ImageHeaderParser.parse(data), width > 0, height > 0 else {
            return nil
        }
        self.format = format
        self.pixelWidth = width
        self.pixelHeight = height
        self.data = data
    }
}
