@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate-style blocks (2.7's `set…Block:` methods). Each runs on the
/// manager's `operationQueue`, from the delegate method of the same name.
extension URLSessionManager {
    /// The blocks as set; read under the manager's lock at each call.
    struct Blocks {
        var sessionDidBecomeInvalid: (@Sendable (URLSession, Error?) -> Void)?
        var sessionDidReceiveChallenge: (@Sendable (URLSession, URLAuthenticationChallenge,
                                                    UnsafeMutablePointer<URLCredential?>?) -> URLSession.AuthChallengeDisposition)?
        var didFinishEventsForBackgroundURLSession: (@Sendable (URLSession) -> Void)?
        var taskNeedNewBodyStream: (@Sendable (URLSession, URLSessionTask) -> InputStream?)?
        var taskWillPerformHTTPRedirection: (@Sendable (URLSession, URLSessionTask, URLResponse, URLRequest) -> URLRequest?)?
        var taskDidReceiveChallenge: (@Sendable (URLSession, URLSessionTask, URLAuthenticationChallenge,
                                                 UnsafeMutablePointer<URLCredential?>?) -> URLSession.AuthChallengeDisposition)?
        var taskDidSendBodyData: (@Sendable (URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)?
        var taskDidComplete: (@Sendable (URLSession, URLSessionTask, Error?) -> Void)?
        var dataTaskDidReceiveResponse: (@Sendable (URLSession, URLSessionDataTask, URLResponse) -> URLSession.ResponseDisposition)?
        var dataTaskDidBecomeDownloadTask: (@Sendable (URLSession, URLSessionDataTask, URLSessionDownloadTask) -> Void)?
        var dataTaskDidReceiveData: (@Sendable (URLSession, URLSessionDataTask, Data) -> Void)?
        var dataTaskWillCacheResponse: (@Sendable (URLSession, URLSessionDataTask, CachedURLResponse) -> CachedURLResponse?)?
        var downloadTaskDidFinishDownloading: (@Sendable (URLSession, URLSessionDownloadTask, URL) -> URL?)?
        var downloadTaskDidWriteData: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?
        var downloadTaskDidResume: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64) -> Void)?
    }

    /// Blocks whose presence decides whether a per-task call is made at all.
    enum ObservedBlock {
        case dataTaskDidReceiveResponse, dataTaskDidReceiveData, dataTaskWillCacheResponse
    }

    func hasBlock(_ block: ObservedBlock) -> Bool {
        blocks.withLock { blocks in
            switch block {
            case .dataTaskDidReceiveResponse: return blocks.dataTaskDidReceiveResponse != nil
            case .dataTaskDidReceiveData: return blocks.dataTaskDidReceiveData != nil
            case .dataTaskWillCacheResponse: return blocks.dataTaskWillCacheResponse != nil
            }
        }
    }

    /// Whether a block is set that sees a task's data, progress or end on
    /// the `operationQueue` (then those calls are made there).
    var observesTaskFlow: Bool {
        blocks.withLock { blocks in
            blocks.taskDidSendBodyData != nil || blocks.taskDidComplete != nil || blocks.dataTaskDidReceiveResponse != nil
                || blocks.dataTaskDidReceiveData != nil || blocks.dataTaskWillCacheResponse != nil
        }
    }

    // MARK: - Session

    /// Runs when the invalidated session has no task left (error nil).
    @preconcurrency
    public func setSessionDidBecomeInvalidBlock(_ block: (@Sendable (URLSession, Error?) -> Void)?) {
        blocks.set(\.sessionDidBecomeInvalid, to: block)
    }

    /// Stored; never called on Linux, where server trust is decided by
    /// `securityPolicy` inside the TLS handshake and is not a challenge.
    @preconcurrency
    public func setSessionDidReceiveAuthenticationChallengeBlock(
        _ block: (@Sendable (URLSession, URLAuthenticationChallenge,
                             UnsafeMutablePointer<URLCredential?>?) -> URLSession.AuthChallengeDisposition)?
    ) {
        blocks.set(\.sessionDidReceiveChallenge, to: block)
    }

    /// Stored; never called (Linux has no background sessions).
    @preconcurrency
    public func setDidFinishEventsForBackgroundURLSessionBlock(_ block: (@Sendable (URLSession) -> Void)?) {
        blocks.set(\.didFinishEventsForBackgroundURLSession, to: block)
    }

    // MARK: - Tasks

    /// Supplies a fresh body stream when a body must be sent again (307/308,
    /// a retry after 401/407); nil falls back to copying a multipart body.
    @preconcurrency
    public func setTaskNeedNewBodyStreamBlock(_ block: (@Sendable (URLSession, URLSessionTask) -> InputStream?)?) {
        blocks.set(\.taskNeedNewBodyStream, to: block)
    }

    /// Sees every redirect hop; returns the request to send, or nil to stop
    /// at the 3xx (it becomes the response).
    @preconcurrency
    public func setTaskWillPerformHTTPRedirectionBlock(
        _ block: (@Sendable (URLSession, URLSessionTask, URLResponse, URLRequest) -> URLRequest?)?
    ) {
        blocks.set(\.taskWillPerformHTTPRedirection, to: block)
    }

    /// Answers HTTP authentication challenges (401/407, Basic and Digest):
    /// return a disposition and, for `.useCredential`, set
    /// `credential?.pointee` (valid during the call).
    @preconcurrency
    public func setTaskDidReceiveAuthenticationChallengeBlock(
        _ block: (@Sendable (URLSession, URLSessionTask, URLAuthenticationChallenge,
                             UnsafeMutablePointer<URLCredential?>?) -> URLSession.AuthChallengeDisposition)?
    ) {
        blocks.set(\.taskDidReceiveChallenge, to: block)
    }

    /// Upload progress: (bytes since the last call, total sent, expected or −1).
    @preconcurrency
    public func setTaskDidSendBodyDataBlock(_ block: (@Sendable (URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)?) {
        blocks.set(\.taskDidSendBodyData, to: block)
    }

    /// A task completed; the error is the transport's (serialization errors
    /// reach only the completion handler, as in 2.7).
    @preconcurrency
    public func setTaskDidCompleteBlock(_ block: (@Sendable (URLSession, URLSessionTask, Error?) -> Void)?) {
        blocks.set(\.taskDidComplete, to: block)
    }

    // MARK: - Data tasks

    /// Decides what happens with a data task's response: `.allow`, `.cancel`
    /// (NSURLErrorCancelled) or `.becomeDownload` (the body goes to a file).
    @preconcurrency
    public func setDataTaskDidReceiveResponseBlock(
        _ block: (@Sendable (URLSession, URLSessionDataTask, URLResponse) -> URLSession.ResponseDisposition)?
    ) {
        blocks.set(\.dataTaskDidReceiveResponse, to: block)
    }

    /// A data task became a download task (`.becomeDownload`).
    @preconcurrency
    public func setDataTaskDidBecomeDownloadTaskBlock(
        _ block: (@Sendable (URLSession, URLSessionDataTask, URLSessionDownloadTask) -> Void)?
    ) {
        blocks.set(\.dataTaskDidBecomeDownloadTask, to: block)
    }

    /// Every piece of a data task's body, in order. Pieces that arrive
    /// while the block is still busy are joined into one call; once 1 MiB
    /// waits, the transfer pauses until the block has taken it (a slow block
    /// holds the body back in the connection, not in memory).
    @preconcurrency
    public func setDataTaskDidReceiveDataBlock(_ block: (@Sendable (URLSession, URLSessionDataTask, Data) -> Void)?) {
        blocks.set(\.dataTaskDidReceiveData, to: block)
    }

    /// Sees a storable response before the configuration's `urlCache` stores
    /// it; return what to store, or nil to store nothing.
    @preconcurrency
    public func setDataTaskWillCacheResponseBlock(
        _ block: (@Sendable (URLSession, URLSessionDataTask, CachedURLResponse) -> CachedURLResponse?)?
    ) {
        blocks.set(\.dataTaskWillCacheResponse, to: block)
    }

    // MARK: - Download tasks

    /// Where a finished download goes; a URL returned here wins over the
    /// task's own destination (nil lets the task's destination decide).
    @preconcurrency
    public func setDownloadTaskDidFinishDownloadingBlock(_ block: (@Sendable (URLSession, URLSessionDownloadTask, URL) -> URL?)?) {
        blocks.set(\.downloadTaskDidFinishDownloading, to: block)
    }

    /// Download progress: (bytes since the last call, total written, expected
    /// or −1); for a resumed download the totals include the offset.
    @preconcurrency
    public func setDownloadTaskDidWriteDataBlock(_ block: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?) {
        blocks.set(\.downloadTaskDidWriteData, to: block)
    }

    /// A download resumed from resume data: (offset, expected total bytes).
    @preconcurrency
    public func setDownloadTaskDidResumeBlock(_ block: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64) -> Void)?) {
        blocks.set(\.downloadTaskDidResume, to: block)
    }
}
