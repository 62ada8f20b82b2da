@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `async` downloads: progress while the file arrives, and on a cancel
/// the data that resumes it (URLSession's shape on Apple platforms).
///
/// The partial file lives in the temporary directory as
/// `AFNetworking-Download-*.tmp` and is private (0600). It is kept only when
/// the resume data that names it reaches the caller — in the thrown error's
/// ``Foundation/URLError/downloadTaskResumeData`` — and deleted otherwise; a
/// file kept but never resumed is swept by age when a later process starts.
extension URLSessionManager {
    /// Downloads to `destination` (replacing nothing: an existing file is an
    /// error) and returns the response.
    ///
    /// Only a response the `responseSerializer` accepts (a 2xx status by
    /// default) is moved to `destination`: an error page is deleted, not
    /// left there, and the call throws the serializer's error.
    ///
    /// Cancelling the awaiting task cancels the download. When the server
    /// made it resumable (a validator and a length), the call throws
    /// `URLError(.cancelled)` whose `downloadTaskResumeData` names the kept
    /// partial file — pass it to ``download(resumeFrom:to:progress:)``;
    /// otherwise it throws `CancellationError` and the partial file is
    /// deleted. A transfer that fails mid-way throws its error, with resume
    /// data in its `userInfo` under `NSURLSessionDownloadTaskResumeData` on
    /// the same terms. The cancel waits for the file to be closed, which
    /// happens on the manager's `operationQueue`.
    public func download(for request: URLRequest, to destination: URL) async throws -> URLResponse {
        try await download(for: request, to: destination, progress: nil)
    }

    /// As ``download(for:to:)``, calling `progress` (on the manager's
    /// `operationQueue`) as bytes arrive.
    public func download(for request: URLRequest, to destination: URL,
                         progress: (@Sendable (Progress) -> Void)?) async throws -> URLResponse {
        try await awaitDownload(.request(request), to: destination, progress: progress)
    }

    /// Resumes a download from the data a cancelled or failed download
    /// handed out (this library's or ``downloadTask(withResumeData:progress:destination:completionHandler:)``'s):
    /// only the missing bytes are asked for, with `If-Range`, and the file
    /// is moved to `destination` complete. Data this library did not make, or
    /// damaged, throws `NSURLErrorCannotDecodeRawData` with nothing sent; a
    /// server that answers the whole file again (it changed) is written
    /// from the start.
    public func download(resumeFrom resumeData: Data, to destination: URL,
                         progress: (@Sendable (Progress) -> Void)? = nil) async throws -> URLResponse {
        try await awaitDownload(.resumeData(resumeData), to: destination, progress: progress)
    }

    private func awaitDownload(_ source: SessionTaskFactory.DownloadSource, to destination: URL,
                               progress: (@Sendable (Progress) -> Void)?) async throws -> URLResponse {
        let serializer = responseSerializer
        let start = { (finish: @escaping @Sendable (Result<Handover<URLResponse>, Error>) -> Void) -> (@Sendable () -> Void)? in
            let accepted: SessionTaskFrontend.Destination = { _, response in
                // Decided before the move: the caller's file is never touched for an answer that throws.
                (try? serializer.validate(response as? HTTPURLResponse, data: nil)) == nil ? nil : destination
            }
            let completion = SessionTaskCompletion.download { response, _, error in
                finish(error.map { .failure($0) } ?? .success(Handover(value: response)))
            }
            let task = self.factory.makeDownloadTask(source, destination: accepted, completion: completion,
                                                     progress: progress, delivery: .inPlace)
            task.resume()
            // Asking for resume data keeps the partial file for it; the
            // completion then carries the data in its error.
            return { task.cancel(byProducingResumeData: { _ in }) }
        }
        return try await AsyncBridge.request(waitsForTheEndOnCancel: true, start).value
    }
}

extension URLError {
    /// The data that resumes a cancelled or failed download: pass it to
    /// ``URLSessionManager/download(resumeFrom:to:progress:)`` or
    /// `downloadTask(withResumeData:…)`. Nil when the download could not be
    /// resumed (its partial file was then deleted). Apple platforms' name.
    public var downloadTaskResumeData: Data? {
        userInfo[URLSessionDownloadTaskResumeData] as? Data
    }
}
