@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What `ImageDownloader.downloadImage(for:…)` hands back for a download it
/// started or joined (`AFImageDownloadReceipt`): pass it to
/// `ImageDownloader.cancelTask(for:)` to withdraw this caller's blocks.
// @unchecked: both properties live behind one lock.
open class ImageDownloadReceipt: NSObject, @unchecked Sendable {
    private let state: LockedState<(task: URLSessionDataTask, receiptID: UUID)>

    /// A receipt for the blocks registered under `receiptID` on `task`'s download.
    public init(receiptID: UUID, task: URLSessionDataTask) {
        state = LockedState((task, receiptID))
        super.init()
    }

    /// The download's data task, shared by every receipt of that download.
    public var task: URLSessionDataTask {
        get { state[\.task] } set { state.set(\.task, to: newValue) }
    }

    /// Identifies this caller's blocks within the download.
    public var receiptID: UUID {
        get { state[\.receiptID] } set { state.set(\.receiptID, to: newValue) }
    }
}
