@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a task's creator gets at its end, through the `CompletionPipeline`
/// operations use too: the response serialized off the main thread, the
/// completion handler on the manager's `completionQueue` inside its
/// `completionGroup` (a task made by an `async` call: where it was
/// serialized), then the task is finished and `AFNetworkingTaskDidComplete`
/// is posted on the main queue.
extension SessionTaskFrontend {
    /// Runs the completion pipeline for `task` (from the delegate queue, once
    /// the delegate's part of the end is done; or with that part as `prelude`,
    /// run first where the response is serialized).
    func deliverCompletion(_ task: URLSessionTask, _ outcome: TransferStateMachine.Outcome, download: SessionTaskOutput.File,
                           prelude: (@Sendable () -> Void)? = nil) {
        let manager = context.manager
        let serializer = manager?.responseSerializer
        // Where the did-finish-downloading call moved the file, or why it could not; a raw handler's temporary file.
        let movedTo: URL? = { if case .moved(let url) = download { return url }; return nil }()
        let moveError: NSError? = { if case .moveFailed(let error, _) = download { return error }; return nil }()
        let rawFile: URL? = { if case .complete(let file) = download { return file }; return nil }()
        let body = outcome.memoryBody ?? Data()
        let isFile = kind.isDownload || requestDriver.becameDownload
        let completion = self.completion
        let pipeline = CompletionPipeline(queue: manager?.completionQueue ?? .main, group: manager?.completionGroup ?? CompletionDefaults.group,
                                          inPlace: context.deliversInPlace) { [requestDriver] in
            requestDriver.handle(.completionFinished)
        }
        pipeline.run { [self] in
            prelude?()
            // Built here, not on the serial delegate queue: making an
            // HTTPURLResponse is the costliest step of a small request.
            let response = finalResponse(outcome)
            var object: Any?
            var error: Error? = outcome.error
            if error == nil, completion.isSerialized {
                // A file is validated without its body; the object is where it went.
                switch serializer.map({ CompletionPipeline.serialize(outcome, with: $0, data: isFile ? Data() : body) { response } }) {
                case .success(let serialized)?: object = serialized
                case .failure(let failure)?: error = failure
                case nil: break
                }
                if isFile { object = movedTo }
                if let moveError { error = moveError }
            }
            if let resumeData = outcome.resumeData {
                // A resume answered with an error status: no file, and the
                // data that still continues the download rides on the error.
                let status = outcome.statusCode.map(String.init) ?? "no status"
                let base = (error as NSError?) ?? TransportErrors.make(NSURLErrorBadServerResponse, url: outcome.finalRequest?.url, underlying: nil,
                                                                       description: "The download could not be resumed: the server answered \(status).")
                var info = base.userInfo
                info[URLSessionDownloadTaskResumeData] = resumeData
                error = NSError(domain: base.domain, code: base.code, userInfo: info)
                object = nil
            }
            // Room for every key at once: growing a dictionary key by key rehashes it each time.
            var userInfo = [AnyHashable: Any](minimumCapacity: 4)
            if let serializer { userInfo[AFNetworkingTaskDidCompleteResponseSerializerKey] = serializer }
            if let movedTo {
                userInfo[AFNetworkingTaskDidCompleteAssetPathKey] = movedTo
            } else {
                userInfo[AFNetworkingTaskDidCompleteResponseDataKey] = body
            }
            if let object { userInfo[AFNetworkingTaskDidCompleteSerializedResponseKey] = object }
            if let error { userInfo[AFNetworkingTaskDidCompleteErrorKey] = error }
            let (finalError, result, notificationInfo) = (error, SerializedObject(value: object), SerializedObject(value: userInfo))
            // URLSession's own handlers get nil where the task never had a response.
            let rawResponse = outcome.response == nil ? nil : response
            let deliver: @Sendable () -> Void = {
                switch completion {
                case .none:
                    break
                case .serialized(let handler):
                    handler(response, result.value, finalError)
                case .download(let handler):
                    handler(response, moveError == nil ? movedTo : nil, finalError)
                case .rawData(let handler):
                    // As URLSession: no data with an error (a cancel is not an empty success).
                    handler(isFile || finalError != nil ? nil : body, rawResponse, finalError)
                case .rawDownload(let handler):
                    handler(rawFile, rawResponse, finalError)
                    if let rawFile { DownloadFile.remove(rawFile) }
                }
            }
            return .init(deliver: deliver) {
                MainQueueNotifier.shared.post(.AFNetworkingTaskDidComplete, object: task,
                                              userInfo: notificationInfo.value as? [AnyHashable: Any],
                                              marks: .ends, cost: movedTo == nil ? body.count : 0)
            }
        }
    }

    /// The response the completion handler gets: the last one, or — where
    /// Swift cannot pass nil — a plain `URLResponse` for the request's URL.
    private func finalResponse(_ outcome: TransferStateMachine.Outcome) -> URLResponse {
        if let response = outcome.urlResponse { return response }
        let url = outcome.finalRequest?.url ?? originalRequest.url ?? URL(fileURLWithPath: "/")
        return URLResponse(url: url, mimeType: nil, expectedContentLength: -1, textEncodingName: nil)
    }
}

private extension SessionTaskCompletion {
    /// The manager's handlers (and a task without one) get the serializer's
    /// result; `URLSession`'s own handlers get the raw body or file.
    var isSerialized: Bool {
        switch self {
        case .none, .serialized, .download: return true
        case .rawData, .rawDownload: return false
        }
    }
}
