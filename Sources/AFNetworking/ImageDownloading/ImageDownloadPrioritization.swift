/// The order in which queued downloads start (`AFImageDownloadPrioritization`).
public enum ImageDownloadPrioritization: Int, Sendable {
    /// First queued, first started.
    case fifo = 0
    /// Last queued, first started (a scrolling feed wants the newest first).
    case lifo = 1
}
