@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Base of the session transfer suites (downloads, uploads, lifecycle, storms):
/// a scripted server per test (from `OperationTestCase`), managers that are
/// invalidated at teardown, temporary files that are removed, and helpers that
/// run one task to its completion handler with a bounded wait.
class SessionTransferTestCase: OperationTestCase {
    /// What one completion handler received.
    struct TaskOutcome {
        var response: URLResponse?
        /// The response object of a data or upload task.
        var object: Any?
        /// The `filePath` of a download task.
        var fileURL: URL?
        var error: NSError?
        var calls = 0
        var onMainThread = false
    }

    /// A manager that is invalidated (cancelling its tasks) when the test ends.
    func makeManager(_ configuration: URLSessionConfiguration? = nil) -> URLSessionManager {
        let manager = URLSessionManager(sessionConfiguration: configuration)
        addTeardownBlock { manager.invalidateSessionCancelingTasks(true) }
        return manager
    }

    /// A path in the temporary directory that is removed when the test ends.
    func temporaryURL(_ name: String = "session") -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("afn-\(name)-\(UUID().uuidString).bin")
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Deterministic bytes, different for different `salt`s.
    func pattern(_ count: Int, salt: Int = 0) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            for index in 0..<buffer.count { buffer[index] = UInt8(truncatingIfNeeded: ((index &* 7) ^ (index >> 8)) &+ salt) }
        }
        return data
    }

    func sha256(_ url: URL?) -> Data? {
        guard let url, let data = try? Data(contentsOf: url) else { return nil }
        return PublicKeyPins.sha256(data)
    }

    func sha256(_ data: Data) -> Data? { PublicKeyPins.sha256(data) }

    func fileSize(_ url: URL) -> Int64? { Self.fileSize(url) }

    /// Static, so `@Sendable` blocks can use it without capturing the test case.
    static func fileSize(_ url: URL) -> Int64? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        switch attributes[.size] {
        case let size as NSNumber: return size.int64Value
        case let size as Int64: return size
        case let size as UInt64: return Int64(size)
        case let size as Int: return Int64(size)
        default: return nil
        }
    }

    /// Whether `url` lies inside `NSTemporaryDirectory()` (symbolic links resolved).
    func isInTemporaryDirectory(_ url: URL) -> Bool {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true).resolvingSymlinksInPath().standardizedFileURL.path
        let path = url.deletingLastPathComponent().resolvingSymlinksInPath().standardizedFileURL.path
        let prefix = directory.hasSuffix("/") ? directory : directory + "/"
        return path == directory || (path + "/").hasPrefix(prefix)
    }

    /// The files under `NSTemporaryDirectory()` (searched recursively, bounded)
    /// modified since `since` that begin with `content` and are at most 64 KiB
    /// longer: how a test finds the partial file behind opaque resume data.
    func temporaryFiles(startingWith content: Data, modifiedSince since: Date) -> [URL] {
        guard !content.isEmpty else { return [] }
        let root = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey, .contentModificationDateKey]
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: keys, options: [],
                                                              errorHandler: { _, _ in true }) else { return [] }
        var found: [URL] = []
        var visited = 0
        let deadline = Date().addingTimeInterval(10)
        while let next = enumerator.nextObject() as? URL, visited < 200_000, Date() < deadline {
            visited += 1
            guard let values = try? next.resourceValues(forKeys: Set(keys)), values.isRegularFile == true,
                  let size = values.fileSize, size >= content.count, size <= content.count + 65_536,
                  (values.contentModificationDate ?? .distantPast) >= since.addingTimeInterval(-2) else { continue }
            if let data = try? Data(contentsOf: next), data.prefix(content.count) == content { found.append(next) }
        }
        return found
    }

    /// Removes what `temporaryFiles(startingWith:modifiedSince:)` finds: the
    /// partial file of resume data a test does not consume.
    func removePartialFiles(startingWith content: Data, modifiedSince since: Date) {
        for url in temporaryFiles(startingWith: content, modifiedSince: since) { try? FileManager.default.removeItem(at: url) }
    }

    // MARK: Running one task

    /// A data/upload completion handler that records into `outcome` and fulfils `done`.
    func recorder(_ outcome: Locked<TaskOutcome>, _ done: XCTestExpectation,
                  inspect: (@Sendable () -> Void)? = nil) -> @Sendable (URLResponse, Any?, Error?) -> Void {
        { response, object, error in
            inspect?()
            outcome.withLock {
                $0.response = response
                $0.object = object
                $0.error = error.map { $0 as NSError }
                $0.calls += 1
                $0.onMainThread = Thread.isMainThread
            }
            done.fulfill()
        }
    }

    /// A download completion handler that records into `outcome` and fulfils `done`.
    func downloadRecorder(_ outcome: Locked<TaskOutcome>, _ done: XCTestExpectation,
                          inspect: (@Sendable () -> Void)? = nil) -> @Sendable (URLResponse, URL?, Error?) -> Void {
        { response, fileURL, error in
            inspect?()
            outcome.withLock {
                $0.response = response
                $0.fileURL = fileURL
                $0.error = error.map { $0 as NSError }
                $0.calls += 1
                $0.onMainThread = Thread.isMainThread
            }
            done.fulfill()
        }
    }

    /// Resumes `task` and waits (bounded) for `done`; returns what was recorded.
    func finish(_ task: URLSessionTask, _ outcome: Locked<TaskOutcome>, _ done: XCTestExpectation,
                timeout: TimeInterval) -> TaskOutcome {
        task.resume()
        wait(for: [done], timeout: timeout)
        return outcome.value
    }

    @discardableResult
    func runData(_ manager: URLSessionManager, _ request: URLRequest, timeout: TimeInterval = 30,
                 uploadProgress: (@Sendable (Progress) -> Void)? = nil,
                 downloadProgress: (@Sendable (Progress) -> Void)? = nil) -> (URLSessionDataTask, TaskOutcome) {
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "data task completion")
        let task = manager.dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress,
                                    completionHandler: recorder(outcome, done))
        return (task, finish(task, outcome, done, timeout: timeout))
    }

    @discardableResult
    func runDownload(_ manager: URLSessionManager, _ request: URLRequest, timeout: TimeInterval = 30,
                     progress: (@Sendable (Progress) -> Void)? = nil,
                     destination: (@Sendable (URL, URLResponse) -> URL)?,
                     inspect: (@Sendable () -> Void)? = nil) -> (URLSessionDownloadTask, TaskOutcome) {
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "download completion")
        let task = manager.downloadTask(with: request, progress: progress, destination: destination,
                                        completionHandler: downloadRecorder(outcome, done, inspect: inspect))
        return (task, finish(task, outcome, done, timeout: timeout))
    }

    @discardableResult
    func runDownload(_ manager: URLSessionManager, resumeData: Data, timeout: TimeInterval = 30,
                     progress: (@Sendable (Progress) -> Void)? = nil,
                     destination: (@Sendable (URL, URLResponse) -> URL)?) -> (URLSessionDownloadTask, TaskOutcome) {
        let outcome = Locked(TaskOutcome())
        let done = expectation(description: "resumed download completion")
        let task = manager.downloadTask(withResumeData: resumeData, progress: progress, destination: destination,
                                        completionHandler: downloadRecorder(outcome, done))
        return (task, finish(task, outcome, done, timeout: timeout))
    }

    /// Waits (bounded, spinning the main run loop so main-queue work drains)
    /// until `condition` holds.
    func eventually(timeout: TimeInterval = 10, _ condition: () -> Bool) -> Bool {
        spin(until: condition, timeout: timeout)
    }

    /// The lines of `log` that contain `text`.
    func lines(of log: String, containing text: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains(text) }
    }
}
