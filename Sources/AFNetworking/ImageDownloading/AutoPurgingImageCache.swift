@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An in-memory image cache with a byte budget (`AFAutoPurgingImageCache`).
///
/// Each image costs `pixelWidth × pixelHeight × 4` bytes (its decoded size,
/// not its encoded one). When an `add` takes ``memoryUsage`` strictly above
/// ``memoryCapacity``, the least recently accessed images (an access is an add
/// or a hit) are removed until usage is down to
/// ``preferredMemoryUsageAfterPurge`` (or to ``memoryCapacity`` when the
/// preferred size is the larger of the two). Every call is synchronous: its
/// effect, the purge included, is visible to any call that starts after it
/// returns, from any thread.
///
/// On Linux there is no memory-warning notification; call ``removeAllImages()``
/// from your own memory-pressure handling if you have one.
// @unchecked: the capacities and the ledger live behind one lock; no other state.
open class AutoPurgingImageCache: NSObject, ImageRequestCache, @unchecked Sendable {
    private struct State {
        var memoryCapacity: UInt64
        var preferredMemoryUsageAfterPurge: UInt64
        var ledger = ImageCacheLedger()
    }
    private let state: LockedState<State>

    /// A cache of 100 MiB purged down to 60 MiB (3.2.1's defaults).
    public convenience override init() {
        self.init(memoryCapacity: 100 * 1024 * 1024, preferredMemoryCapacity: 60 * 1024 * 1024)
    }

    /// A cache holding at most `memoryCapacity` bytes of decoded images, purged
    /// down to `preferredMemoryCapacity` bytes when an add goes over.
    public init(memoryCapacity: UInt64, preferredMemoryCapacity: UInt64) {
        state = LockedState(State(memoryCapacity: memoryCapacity, preferredMemoryUsageAfterPurge: preferredMemoryCapacity))
        super.init()
    }

    /// The most bytes held after any `add` returns. Changing it purges
    /// nothing until the next `add`.
    open var memoryCapacity: UInt64 {
        get { state[\.memoryCapacity] } set { state.set(\.memoryCapacity, to: newValue) }
    }

    /// The bytes a purge brings the cache down to. Changing it purges nothing
    /// until the next `add`.
    open var preferredMemoryUsageAfterPurge: UInt64 {
        get { state[\.preferredMemoryUsageAfterPurge] } set { state.set(\.preferredMemoryUsageAfterPurge, to: newValue) }
    }

    /// The bytes of the images held now (the sum of their decoded sizes).
    open var memoryUsage: UInt64 { state[\.ledger.usage] }

    /// Stores `image` under `identifier` as the most recently accessed image,
    /// replacing any image held there, then purges when over capacity.
    open func add(_ image: Image, withIdentifier identifier: String) {
        state.withLock { state in
            state.ledger.insert(image, identifier: identifier)
            state.ledger.purge(capacity: state.memoryCapacity, preferred: state.preferredMemoryUsageAfterPurge)
        }
    }

    /// Removes the image held under `identifier`; whether there was one.
    @discardableResult
    open func removeImage(withIdentifier identifier: String) -> Bool {
        state.withLock { $0.ledger.remove(identifier) }
    }

    /// Removes every image; whether the cache held any.
    @discardableResult
    open func removeAllImages() -> Bool {
        state.withLock { $0.ledger.removeAll() }
    }

    /// The image held under `identifier` (marking it as just accessed), or nil.
    open func image(withIdentifier identifier: String) -> Image? {
        state.withLock { $0.ledger.access(identifier) }
    }

    /// Stores `image` for `request` plus `identifier`, through ``add(_:withIdentifier:)``.
    open func add(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) {
        add(image, withIdentifier: imageCacheIdentifier(for: request, additionalIdentifier: identifier))
    }

    /// Removes the image for `request` plus `identifier`, through ``removeImage(withIdentifier:)``.
    @discardableResult
    open func removeImage(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        removeImage(withIdentifier: imageCacheIdentifier(for: request, additionalIdentifier: identifier))
    }

    /// The image for `request` plus `identifier`, through ``image(withIdentifier:)``.
    open func image(for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Image? {
        image(withIdentifier: imageCacheIdentifier(for: request, additionalIdentifier: identifier))
    }

    /// Always true: every downloaded image is worth keeping.
    open func shouldCache(_ image: Image, for request: URLRequest, withAdditionalIdentifier identifier: String?) -> Bool {
        true
    }
}
