@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the manager's own delegate methods do (the methods themselves are in
/// the class body so that subclasses can override them).
extension URLSessionManager {
    func sessionDidBecomeInvalid(_ session: URLSession, error: Error?) {
        blocks[\.sessionDidBecomeInvalid]?(session, error)
        NotificationCenter.default.post(name: .AFURLSessionDidInvalidate, object: session)
    }

    func sessionDidReceive(_ session: URLSession, challenge: URLAuthenticationChallenge,
                           completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let block = blocks[\.sessionDidReceiveChallenge] else {
            return completionHandler(.performDefaultHandling, nil)
        }
        var credential: URLCredential?
        let disposition = withUnsafeMutablePointer(to: &credential) { block(session, challenge, $0) }
        completionHandler(disposition, credential)
    }

    func taskWillPerformRedirection(_ session: URLSession, task: URLSessionTask, response: HTTPURLResponse, request: URLRequest,
                                    completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        guard let block = blocks[\.taskWillPerformHTTPRedirection] else { return completionHandler(request) }
        completionHandler(block(session, task, response, request))
    }

    func taskDidReceive(_ session: URLSession, task: URLSessionTask, challenge: URLAuthenticationChallenge,
                        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        guard let block = blocks[\.taskDidReceiveChallenge] else {
            return completionHandler(.performDefaultHandling, nil)
        }
        var credential: URLCredential?
        let disposition = withUnsafeMutablePointer(to: &credential) { block(session, task, challenge, $0) }
        completionHandler(disposition, credential)
    }

    func taskNeedNewBodyStream(_ session: URLSession, task: URLSessionTask, completionHandler: @escaping @Sendable (InputStream?) -> Void) {
        if let block = blocks[\.taskNeedNewBodyStream], let stream = block(session, task) {
            return completionHandler(stream)
        }
        // As 2.7: a stream that can copy itself (the multipart body) is sent again.
        completionHandler(BodyStreams.copy(of: task.originalRequest?.httpBodyStream))
    }

    /// 2.7's precedence: the manager-level block first; if it names no URL,
    /// the task's destination. FileManager refuses an existing destination;
    /// a failure is the completion's error and posts
    /// `AFURLSessionDownloadTaskDidFailToMoveFile` with the error's userInfo.
    func downloadTaskDidFinish(_ session: URLSession, downloadTask: URLSessionDownloadTask, location: URL) {
        guard let driver = ownFrontend(of: downloadTask) else { return }
        var destination = blocks[\.downloadTaskDidFinishDownloading]?(session, downloadTask, location)
        if destination == nil, let taskDestination = driver.destination {
            let response = downloadTask.response ?? URLResponse(url: location, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
            destination = taskDestination(location, response)
        }
        guard let destination else { return }
        do {
            try FileManager.default.moveItem(at: location, to: destination)
            // The temporary file was private (0600); at the destination it is the caller's file (see FileModes).
            FileModes.makeFinished(destination.path)
            driver.recordMove(to: destination, from: location, error: nil)
            NotificationCenter.default.post(name: .AFURLSessionDownloadTaskDidMoveFileSuccessfully, object: downloadTask)
        } catch {
            let failure = error as NSError
            driver.recordMove(to: destination, from: location, error: failure)
            NotificationCenter.default.post(name: .AFURLSessionDownloadTaskDidFailToMoveFile, object: downloadTask,
                                            userInfo: failure.userInfo)
        }
    }
}
