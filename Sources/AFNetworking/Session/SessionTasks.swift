import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The manager's tasks: subclasses of FoundationNetworking's task classes, so
// code typed `URLSessionDataTask` & co. ports unchanged. Each is a thin face
// over its `SessionTaskFrontend`; the three classes repeat the same one-line
// forwards because Swift cannot share overrides across different superclasses.

/// A task of a session manager, whatever its class.
protocol ManagedSessionTask: URLSessionTask {
    var frontend: SessionTaskFrontend { get }
}

/// A data task driven by the package's engine.
final class SessionDataTask: URLSessionDataTask, ManagedSessionTask, @unchecked Sendable {
    // @unchecked: immutable; all state is in the frontend.
    let frontend: SessionTaskFrontend
    private let identifier: Int

    init(frontend: SessionTaskFrontend, identifier: Int) {
        self.frontend = frontend
        self.identifier = identifier
        super.init()
    }

    override var taskIdentifier: Int { identifier }
    override var state: URLSessionTask.State { frontend.taskState }
    override var originalRequest: URLRequest? { frontend.originalRequest }
    override var currentRequest: URLRequest? { frontend.currentRequest }
    override var response: URLResponse? { frontend.response }
    override var error: Error? { frontend.error }
    override var countOfBytesReceived: Int64 { frontend.countOfBytesReceived }
    override var countOfBytesSent: Int64 { frontend.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { frontend.countOfBytesExpectedToSend }
    override var countOfBytesExpectedToReceive: Int64 { frontend.countOfBytesExpectedToReceive }
    override var progress: Progress { frontend.progress.download }
    override func resume() { frontend.resume() }
    override func suspend() { frontend.suspend() }
    override func cancel() { frontend.cancel() }
    override func copy(with zone: NSZone? = nil) -> Any { self }
}

/// An upload task driven by the package's engine.
final class SessionUploadTask: URLSessionUploadTask, ManagedSessionTask, @unchecked Sendable {
    // @unchecked: immutable; all state is in the frontend.
    let frontend: SessionTaskFrontend
    private let identifier: Int

    init(frontend: SessionTaskFrontend, identifier: Int) {
        self.frontend = frontend
        self.identifier = identifier
        super.init()
    }

    override var taskIdentifier: Int { identifier }
    override var state: URLSessionTask.State { frontend.taskState }
    override var originalRequest: URLRequest? { frontend.originalRequest }
    override var currentRequest: URLRequest? { frontend.currentRequest }
    override var response: URLResponse? { frontend.response }
    override var error: Error? { frontend.error }
    override var countOfBytesReceived: Int64 { frontend.countOfBytesReceived }
    override var countOfBytesSent: Int64 { frontend.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { frontend.countOfBytesExpectedToSend }
    override var countOfBytesExpectedToReceive: Int64 { frontend.countOfBytesExpectedToReceive }
    override var progress: Progress { frontend.progress.upload }
    override func resume() { frontend.resume() }
    override func suspend() { frontend.suspend() }
    override func cancel() { frontend.cancel() }
    override func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A download task driven by the package's engine.
final class SessionDownloadTask: URLSessionDownloadTask, ManagedSessionTask, @unchecked Sendable {
    // @unchecked: immutable; all state is in the frontend.
    let frontend: SessionTaskFrontend
    private let identifier: Int

    init(frontend: SessionTaskFrontend, identifier: Int) {
        self.frontend = frontend
        self.identifier = identifier
        super.init()
    }

    override var taskIdentifier: Int { identifier }
    override var state: URLSessionTask.State { frontend.taskState }
    override var originalRequest: URLRequest? { frontend.originalRequest }
    override var currentRequest: URLRequest? { frontend.currentRequest }
    override var response: URLResponse? { frontend.response }
    override var error: Error? { frontend.error }
    override var countOfBytesReceived: Int64 { frontend.countOfBytesReceived }
    override var countOfBytesSent: Int64 { frontend.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { frontend.countOfBytesExpectedToSend }
    override var countOfBytesExpectedToReceive: Int64 { frontend.countOfBytesExpectedToReceive }
    override var progress: Progress { frontend.progress.download }
    override func resume() { frontend.resume() }
    override func suspend() { frontend.suspend() }
    override func cancel() { frontend.cancel() }
    override func copy(with zone: NSZone? = nil) -> Any { self }

    /// Cancels the download; `completionHandler` gets the resume data (nil
    /// when the download cannot be resumed) before the task's completion handler runs.
    override func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        // FoundationNetworking's signature is not @Sendable; the handler is
        // called once, on the manager's operation queue.
        nonisolated(unsafe) let handler = completionHandler
        frontend.cancel(byProducingResumeData: { handler($0) })
    }
}
