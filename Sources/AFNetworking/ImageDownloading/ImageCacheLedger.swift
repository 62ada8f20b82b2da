/// The bookkeeping of `AutoPurgingImageCache` as a value: which images are
/// held, what each costs, the order of their last accesses and the total.
/// The cache keeps one behind its lock; every member is a pure state change,
/// so the purge order and the byte count can be reasoned about (and tested)
/// without threads.
struct ImageCacheLedger {
    struct Entry {
        let image: Image
        let cost: UInt64
        /// The access counter's value at this entry's last access. A counter,
        /// not a date: two accesses never tie, whatever the clock resolution.
        var lastAccess: UInt64
    }

    private(set) var entries: [String: Entry] = [:]
    /// The sum of the held entries' costs.
    private(set) var usage: UInt64 = 0
    private var accessCounter: UInt64 = 0

    /// 3.2.1's decoded size at scale 1: four bytes per pixel, whatever the
    /// encoded size or format. The dimensions come from the image's header,
    /// which a server writes: a header claiming 4294967295 × 4294967295 would
    /// overflow (and trap), so the cost stops at `maximumCost` — far above any
    /// capacity, so such an image is never kept unless the capacity is
    /// "unlimited" (UInt64.max), where the usage saturates instead.
    static func cost(of image: Image) -> UInt64 {
        let pixels = UInt64(max(image.pixelWidth, 0)).multipliedReportingOverflow(by: UInt64(max(image.pixelHeight, 0)))
        let bytes = pixels.partialValue.multipliedReportingOverflow(by: 4)
        guard !pixels.overflow, !bytes.overflow else { return maximumCost }
        return min(bytes.partialValue, maximumCost)
    }

    /// 2^48 bytes (256 TiB): the most one image is said to cost.
    static let maximumCost: UInt64 = 1 << 48

    private mutating func nextAccess() -> UInt64 {
        accessCounter += 1
        return accessCounter
    }

    /// Holds `image` under `identifier` as the most recent access, replacing
    /// (and un-counting) whatever was there.
    mutating func insert(_ image: Image, identifier: String) {
        let entry = Entry(image: image, cost: Self.cost(of: image), lastAccess: nextAccess())
        if let old = entries.updateValue(entry, forKey: identifier) { usage -= min(usage, old.cost) }
        // Saturating: costs reach 2^48 each, and a capacity of UInt64.max
        // ("unlimited") never purges, so the total could pass UInt64.max.
        let (sum, overflow) = usage.addingReportingOverflow(entry.cost)
        usage = overflow ? .max : sum
    }

    /// The image under `identifier`, marking it as the most recent access on a hit.
    mutating func access(_ identifier: String) -> Image? {
        guard entries[identifier] != nil else { return nil }
        let stamp = nextAccess()
        entries[identifier]?.lastAccess = stamp
        return entries[identifier]?.image
    }

    mutating func remove(_ identifier: String) -> Bool {
        guard let old = entries.removeValue(forKey: identifier) else { return false }
        usage -= min(usage, old.cost)
        return true
    }

    mutating func removeAll() -> Bool {
        let held = !entries.isEmpty
        entries.removeAll()
        usage = 0
        return held
    }

    /// When usage is strictly above `capacity`, removes entries least recently
    /// accessed first until the bytes removed reach `usage - target`, where the
    /// target is `preferred` (or `capacity` when `preferred` is larger: a purge
    /// never leaves the cache above its capacity). Returns the identifiers
    /// removed, in the order they went.
    @discardableResult
    mutating func purge(capacity: UInt64, preferred: UInt64) -> [String] {
        guard usage > capacity else { return [] }
        let bytesToPurge = usage - min(preferred, capacity)
        var removed: [String] = []
        var bytesRemoved: UInt64 = 0
        for (identifier, entry) in entries.sorted(by: { $0.value.lastAccess < $1.value.lastAccess }) {
            if bytesRemoved >= bytesToPurge { break }
            entries[identifier] = nil
            let (sum, overflow) = bytesRemoved.addingReportingOverflow(entry.cost)
            bytesRemoved = overflow ? .max : sum
            removed.append(identifier)
        }
        usage -= min(usage, bytesRemoved)
        return removed
    }
}
