import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The manager's tasks: subclasses of FoundationNetworking's task classes, so
// code typed `URLSessionDataTask` & co. ports unchanged. Each is a thin face
// over its `SessionTaskDriver`; the three classes repeat the same one-line
// forwards because Swift cannot share overrides across different superclasses.

/// A task of a session manager, whatever its class.
protocol ManagedSessionTask: URLSessionTask {
    var driver: SessionTaskDriver { get }
}

/// A data task driven by the package's engine.
final class SessionDataTask: URLSessionDataTask, ManagedSessionTask, @unchecked Sendable {
    // @unchecked: immutable; all state is in the driver.
    let driver: SessionTaskDriver
    private let identifier: Int

    init(driver: SessionTaskDriver, identifier: Int) {
        self.driver = driver
        self.identifier = identifier
        super.init()
    }

    override var taskIdentifier: Int { identifier }
    override var state: URLSessionTask.State { driver.taskState }
    override var originalRequest: URLRequest? { driver.originalRequest }
    override var currentRequest: URLRequest? { driver.currentRequest }
    override var response: URLResponse? { driver.response }
    override var error: Error? { driver.error }
    override var countOfBytesReceived: Int64 { driver.countOfBytesReceived }
    override var countOfBytesSent: Int64 { driver.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { driver.countOfBytesExpectedToSend }
    override var countOfBytesExpectedToReceive: Int64 { driver.countOfBytesExpectedToReceive }
    override var progress: Progress { driver.progress.download }
    override func resume() { driver.resume() }
    override func suspend() { driver.suspend() }
    override func cancel() { driver.cancel() }
    override func copy(with zone: NSZone? = nil) -> Any { self }
}

/// An upload task driven by the package's engine.
final class SessionUploadTask: URLSessionUploadTask, ManagedSessionTask, @unchecked Sendable {
    // @unchecked: immutable; all state is in the driver.
    let driver: SessionTaskDriver
    private let identifier: Int

    init(driver: SessionTaskDriver, identifier: Int) {
        self.driver = driver
        self.identifier = identifier
        super.init()
    }

    override var taskIdentifier: Int { identifier }
    override var state: URLSessionTask.State { driver.taskState }
    override var originalRequest: URLRequest? { driver.originalRequest }
    override var currentRequest: URLRequest? { driver.currentRequest }
    override var response: URLResponse? { driver.response }
    override var error: Error? { driver.error }
    override var countOfBytesReceived: Int64 { driver.countOfBytesReceived }
    override var countOfBytesSent: Int64 { driver.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { driver.countOfBytesExpectedToSend }
    override var countOfBytesExpectedToReceive: Int64 { driver.countOfBytesExpectedToReceive }
    override var progress: Progress { driver.progress.upload }
    override func resume() { driver.resume() }
    override func suspend() { driver.suspend() }
    override func cancel() { driver.cancel() }
    override func copy(with zone: NSZone? = nil) -> Any { self }
}

/// A download task driven by the package's engine.
final class SessionDownloadTask: URLSessionDownloadTask, ManagedSessionTask, @unchecked Sendable {
    // @unchecked: immutable; all state is in the driver.
    let driver: SessionTaskDriver
    private let identifier: Int

    init(driver: SessionTaskDriver, identifier: Int) {
        self.driver = driver
        self.identifier = identifier
        super.init()
    }

    override var taskIdentifier: Int { identifier }
    override var state: URLSessionTask.State { driver.taskState }
    override var originalRequest: URLRequest? { driver.originalRequest }
    override var currentRequest: URLRequest? { driver.currentRequest }
    override var response: URLResponse? { driver.response }
    override var error: Error? { driver.error }
    override var countOfBytesReceived: Int64 { driver.countOfBytesReceived }
    override var countOfBytesSent: Int64 { driver.countOfBytesSent }
    override var countOfBytesExpectedToSend: Int64 { driver.countOfBytesExpectedToSend }
    override var countOfBytesExpectedToReceive: Int64 { driver.countOfBytesExpectedToReceive }
    override var progress: Progress { driver.progress.download }
    override func resume() { driver.resume() }
    override func suspend() { driver.suspend() }
    override func cancel() { driver.cancel() }
    override func copy(with zone: NSZone? = nil) -> Any { self }

    /// Cancels the download; `completionHandler` gets the resume data (nil
    /// when the download cannot be resumed) before the task's completion handler runs.
    override func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        // FoundationNetworking's signature is not @Sendable; the handler is
        // called once, on the manager's operation queue.
        nonisolated(unsafe) let handler = completionHandler
        driver.cancel(byProducingResumeData: { handler($0) })
    }
}
