@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads images with one request per URL however many callers ask, keeps
/// them in an image cache and answers on the main queue (`AFImageDownloader`).
///
/// Built on the session layer, as AFNetworking 3 was: each download is a data
/// task of ``sessionManager`` with an ``ImageResponseSerializer``. A session
/// task can be created suspended and resumed later, which is exactly what a
/// bounded FIFO/LIFO queue needs, and it shares the session's connection pool
/// and `URLCache` across downloads; an operation queue would have needed a
/// second queueing scheme beside the one below.
///
/// At most 4 downloads (or the limit given) run at once; the others wait,
/// suspended, in ``downloadPrioritization`` order. Callers asking for a URL
/// already being downloaded join that download and get a receipt of their
/// own: ``cancelTask(for:)`` withdraws one caller, and the last caller out
/// cancels the request, queued or running.
///
/// Blocks always run on the main queue, asynchronously, even for a cache hit,
/// a bad URL or a cancel. The async twin ``image(for:)`` does not need the
/// main queue: it resumes directly.
// @unchecked: every mutable property and the download book live behind one lock.
open class ImageDownloader: NSObject, @unchecked Sendable {
    struct State {
        var sessionManager: HTTPSessionManager
        var imageCache: (any ImageRequestCache)?
        var prioritization: ImageDownloadPrioritization
        var book: ImageDownloadBook
    }
    let state: LockedState<State>

    /// The cache consulted before downloading and filled after (an
    /// ``AutoPurgingImageCache`` by default); nil downloads every time.
    open var imageCache: (any ImageRequestCache)? {
        get { state[\.imageCache] } set { state.set(\.imageCache, to: newValue) }
    }

    /// The manager whose data tasks carry the downloads.
    open var sessionManager: HTTPSessionManager {
        get { state[\.sessionManager] } set { state.set(\.sessionManager, to: newValue) }
    }

    /// The order queued downloads start in, read when a download is queued
    /// (3.2.1's spelling; the same property as ``downloadPrioritization``).
    open var downloadPrioritizaton: ImageDownloadPrioritization {
        get { state[\.prioritization] } set { state.set(\.prioritization, to: newValue) }
    }

    /// The order queued downloads start in, read when a download is queued.
    open var downloadPrioritization: ImageDownloadPrioritization {
        get { downloadPrioritizaton }
        set { downloadPrioritizaton = newValue }
    }

    private static let shared = ImageDownloader()

    /// The process-wide downloader (made by ``init()``), the same on every call.
    public class func defaultInstance() -> ImageDownloader { shared }

    /// A new `URLCache` of 20 MiB in memory and 150 MiB on disk, in
    /// `com.alamofire.imagedownloader` under the user's cache directory.
    public class func defaultURLCache() -> URLCache {
        let base = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        // An absolute path: corelibs reads a relative one against the working directory.
        return URLCache(memoryCapacity: 20 * 1024 * 1024, diskCapacity: 150 * 1024 * 1024,
                        diskPath: base.appendingPathComponent("com.alamofire.imagedownloader", isDirectory: true).path)
    }

    /// `.default` with cookies on, no pipelining (corelibs' default), the protocol's cache policy,
    /// a 60 s request timeout and ``defaultURLCache()``.
    public class func defaultURLSessionConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.httpShouldSetCookies = true
        // `httpShouldUsePipelining` (3.x set it false) is already false in
        // `.default` and deprecated in corelibs: not touched.
        configuration.requestCachePolicy = .useProtocolCachePolicy
        configuration.allowsCellularAccess = true
        configuration.timeoutIntervalForRequest = 60
        configuration.urlCache = defaultURLCache()
        return configuration
    }

    /// A downloader with ``defaultURLSessionConfiguration()``.
    public convenience override init() {
        self.init(sessionConfiguration: ImageDownloader.defaultURLSessionConfiguration())
    }

    /// A downloader on a new `HTTPSessionManager` with `configuration` and an
    /// ``ImageResponseSerializer``: FIFO, 4 active downloads, an ``AutoPurgingImageCache``.
    ///
    /// The manager's completion queue is a private one rather than the main
    /// queue: completions only update the downloader's books and the image
    /// cache, and the callers' blocks are sent to the main queue afterwards.
    public convenience init(sessionConfiguration configuration: URLSessionConfiguration) {
        let manager = HTTPSessionManager(sessionConfiguration: configuration)
        manager.responseSerializer = ImageResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "com.alamofire.imagedownloader.responsequeue-\(UUID().uuidString)",
                                                attributes: .concurrent)
        self.init(sessionManager: manager, downloadPrioritization: .fifo, maximumActiveDownloads: 4,
                  imageCache: AutoPurgingImageCache())
    }

    /// A downloader on `sessionManager` (whose response serializer must return
    /// an `Image`) running at most `maximumActiveDownloads` downloads at once
    /// (at least one).
    public init(sessionManager: HTTPSessionManager, downloadPrioritization: ImageDownloadPrioritization,
                maximumActiveDownloads: Int, imageCache: (any ImageRequestCache)?) {
        state = LockedState(State(sessionManager: sessionManager, imageCache: imageCache,
                                  prioritization: downloadPrioritization,
                                  book: ImageDownloadBook(maximumActiveDownloads: maximumActiveDownloads)))
        super.init()
    }

    // MARK: - Downloading (in the class body: extensions cannot hold open methods)

    /// Downloads the image for `request` (or takes it from the image cache),
    /// under a fresh receipt ID. See ``downloadImage(for:withReceiptID:success:failure:)``.
    @discardableResult
    @preconcurrency
    open func downloadImage(for request: URLRequest,
                            success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)?,
                            failure: (@Sendable (URLRequest, HTTPURLResponse?, Error) -> Void)?) -> ImageDownloadReceipt? {
        downloadImage(for: request, withReceiptID: UUID(), success: success, failure: failure)
    }

    /// Downloads the image for `request`, joining a download of the same URL
    /// already queued or running, or answers from the image cache.
    ///
    /// Returns nil when no download is involved: the URL is missing (`failure`
    /// gets `NSURLErrorBadURL`) or the image cache had the image (`success`
    /// gets it with a nil response; only for the `.useProtocolCachePolicy`,
    /// `.returnCacheDataElseLoad` and `.returnCacheDataDontLoad` policies).
    /// Blocks run on the main queue, asynchronously, each at most once.
    @discardableResult
    @preconcurrency
    open func downloadImage(for request: URLRequest, withReceiptID receiptID: UUID,
                            success: (@Sendable (URLRequest, HTTPURLResponse?, Image) -> Void)?,
                            failure: (@Sendable (URLRequest, HTTPURLResponse?, Error) -> Void)?) -> ImageDownloadReceipt? {
        download(request, receiptID: receiptID, delivery: .mainQueue(success: success, failure: failure))
    }

    /// Withdraws the receipt's blocks from its download: its failure block gets
    /// `NSURLErrorCancelled`, the other callers are unaffected, and when it was
    /// the last caller the request is cancelled (queued or running) and
    /// forgotten. A receipt already cancelled or answered changes nothing.
    open func cancelTask(for imageDownloadReceipt: ImageDownloadReceipt) {
        let task = imageDownloadReceipt.task
        let receiptID = imageDownloadReceipt.receiptID
        let withdrawal = state.withLock { $0.book.withdraw(receiptID: receiptID, task: task) }
        withdrawal.cancel?.cancel()
        withdrawal.resume?.resume()
        guard let (caller, request) = withdrawal.caller else { return }
        let answered = task.originalRequest ?? request
        let urlString = request.url?.absoluteString ?? ""
        let error = NSError(domain: NSURLErrorDomain, code: NSURLErrorCancelled, userInfo: [
            NSLocalizedFailureReasonErrorKey: "ImageDownloader cancelled URL request: \(urlString)",
            NSLocalizedDescriptionKey: "cancelled",
        ])
        ImageDownloadDelivery.deliver(.failure(error), request: answered, response: nil, to: [caller.delivery])
    }
}
