import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An in-memory store of images by identifier (`AFImageCache`).
///
/// Implementations must be safe to call from any thread: the downloader
/// consults and fills its cache from its callers' threads and from the
/// session manager's completion queue.
public protocol ImageCache: AnyObject, Sendable {
    /// Stores `image` under `identifier`, replacing any image held there.
    func add(_ image: Image, withIdentifier identifier: String)
    /// Removes the image held under `identifier`; whether there was one.
    @discardableResult func removeImage(withIdentifier identifier: String) -> Bool
    /// Removes every image; whether the cache held any.
    @discardableResult func removeAllImages() -> Bool
    /// The image held under `identifier`, or nil.
    func image(withIdentifier identifier: String) -> Image?
}

/// An image cache keyed by request (`AFImageRequestCache`): the identifier of a
/// request is its URL's `absoluteString` followed by the additional identifier.
public protocol ImageRequestCache: ImageCache {
    /// Whether the downloader should add `image`, downloaded for `request`.
    func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
    /// Stores `image` under the identifier of `request` plus `identifier`.
    func add(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?)
    /// Removes the image held for `request` plus `identifier`; whether there was one.
    @discardableResult func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool
    /// The image held for `request` plus `identifier`, or nil.
    func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Image?
}

/// The cache identifier of a request: its URL followed directly by the
/// additional identifier (3.2.1's key; "" when the request has no URL, which
/// no download ever stores under).
func imageCacheIdentifier(for request: URLRequest, additionalIdentifier: String?) -> String {
    (request.url?.absoluteString ?? "") + (additionalIdentifier ?? "")
}
