import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The downloader's state machine, as a value: the downloads in flight by URL,
/// the callers joined to each, which are running and which wait (suspended)
/// in what order. Each event returns what to do with tasks and callers; the
/// downloader does it after releasing its lock.
struct ImageDownloadBook {
    /// One caller's blocks within a download.
    struct Caller {
        let receiptID: UUID
        let delivery: ImageDownloadDelivery
    }

    /// One request on the wire (or waiting for a slot), shared by its callers.
    struct Download {
        /// Tells this download from a later one for the same URL, so the
        /// completion of a cancelled task never answers its successor's callers.
        let id: UUID
        let task: URLSessionDataTask
        /// The first caller's request, which every caller's blocks receive.
        let request: URLRequest
        var callers: [Caller]
    }

    /// What `add` decided for a new download.
    enum Start {
        /// Resume the task now: a slot was free.
        case resume
        /// The task stays suspended in the queue until a slot frees.
        case wait
        /// Another caller's download for the URL got in first: the caller
        /// joined it; the new task was never used and must be cancelled.
        case joined(URLSessionDataTask)
    }

    /// What a cancel decided.
    struct Withdrawal {
        /// The cancelled caller's delivery and the request to answer it with.
        var caller: (Caller, URLRequest)?
        /// The task to cancel: the last caller left.
        var cancel: URLSessionDataTask?
        /// A queued task to resume into the slot the cancelled one freed.
        var resume: URLSessionDataTask?
    }

    let maximumActiveDownloads: Int
    private(set) var downloads: [String: Download] = [:]
    /// URL identifiers of the suspended downloads, the next to start first.
    private(set) var waiting: [String] = []
    /// IDs of the downloads holding a slot.
    private(set) var active: Set<UUID> = []

    init(maximumActiveDownloads: Int) {
        // A limit below one would never start anything.
        self.maximumActiveDownloads = max(1, maximumActiveDownloads)
    }

    /// Joins `caller` to the download for `url` when there is one; its task.
    mutating func join(_ url: String, _ caller: Caller) -> URLSessionDataTask? {
        guard downloads[url] != nil else { return nil }
        downloads[url]?.callers.append(caller)
        return downloads[url]?.task
    }

    /// Records a new download for `url` (or joins one that appeared meanwhile).
    mutating func add(_ url: String, _ download: Download, order: ImageDownloadPrioritization) -> Start {
        if let existing = join(url, download.callers[0]) { return .joined(existing) }
        downloads[url] = download
        if active.count < maximumActiveDownloads {
            active.insert(download.id)
            return .resume
        }
        switch order {
        case .fifo: waiting.append(url)
        case .lifo: waiting.insert(url, at: 0)
        }
        return .wait
    }

    /// Withdraws the caller `receiptID` from the download of `task` (found by
    /// task identity, so a later download of the same URL is never touched).
    /// The last caller out cancels the download, running or queued, and frees
    /// its slot for the next queued one.
    mutating func withdraw(receiptID: UUID, task: URLSessionDataTask) -> Withdrawal {
        var result = Withdrawal()
        guard let url = downloads.first(where: { $0.value.task === task })?.key,
              var download = downloads[url],
              let index = download.callers.firstIndex(where: { $0.receiptID == receiptID }) else { return result }
        result.caller = (download.callers.remove(at: index), download.request)
        downloads[url] = download
        guard download.callers.isEmpty else { return result }
        downloads[url] = nil
        waiting.removeAll { $0 == url }
        result.cancel = download.task
        if active.remove(download.id) != nil { result.resume = startNext() }
        return result
    }

    /// The download `id` for `url` finished: its callers (none when it was
    /// cancelled and forgotten) and the queued task to resume into its slot.
    mutating func complete(_ url: String, id: UUID) -> (download: Download?, resume: URLSessionDataTask?) {
        var finished: Download?
        if downloads[url]?.id == id {
            finished = downloads.removeValue(forKey: url)
            // A queued task can end without being resumed (its session was
            // invalidated): it must not be started later.
            waiting.removeAll { $0 == url }
        }
        guard active.remove(id) != nil else { return (finished, nil) }
        return (finished, startNext())
    }

    /// Takes the next waiting download into a free slot.
    private mutating func startNext() -> URLSessionDataTask? {
        guard active.count < maximumActiveDownloads else { return nil }
        while !waiting.isEmpty {
            let url = waiting.removeFirst()
            guard let download = downloads[url] else { continue }
            active.insert(download.id)
            return download.task
        }
        return nil
    }
}
