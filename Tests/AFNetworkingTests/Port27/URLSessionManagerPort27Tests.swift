import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// AFNetworking 2.7's AFURLSessionManagerTests that the rest of the suite has
/// no equivalent for: those of its background manager. Linux has no
/// background sessions (Migration.md, "What Linux lacks (session layer)"): a
/// configuration with an `identifier` behaves as a default one, so these ports
/// check that its tasks are the default manager's kinds and post the resume
/// and suspend notifications, through `URLSessionTask` references, as the
/// subclass overrides that replace 2.7's swizzling do. 2.7's `/delay/1` is
/// played by the scripted server (held longer, so the task is still running
/// when it is suspended and cancelled).
final class URLSessionManagerPort27Tests: SessionTasksTestCase {

    // MARK: Fixtures

    /// A manager made the way 2.7 made its background manager.
    private func makeBackgroundManager(identifier: String = "com.afnetworking.tests.urlsession.\(UUID().uuidString)") -> URLSessionManager {
        let configuration = URLSessionConfiguration.default
        configuration.identifier = identifier
        return makeManager(configuration: configuration)
    }

    /// Never answered (until tearDown shuts the server down): every task
    /// here is still running when it is suspended or cancelled, however slow
    /// the machine.
    private func delayURLRequest() -> URLRequest {
        server.route("/delay/1") { _ in
            [.waitUntil({ false }, timeout: 60), .head(status: 200, headers: [("Content-Length", "0")]), .end]
        }
        return request("/delay/1")
    }

    /// An empty file to upload (2.7 passed a nil file, which Swift's
    /// non-optional `fromFile:` cannot take).
    private func emptyUploadFile() -> URL {
        let url = temporaryFileURL("upload-source")
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: Data()))
        return url
    }

    private func backgroundDataTask() -> URLSessionTask {
        makeBackgroundManager().dataTask(with: delayURLRequest(), completionHandler: nil)
    }

    private func backgroundUploadTask() -> URLSessionTask {
        makeBackgroundManager().uploadTask(with: delayURLRequest(), fromFile: emptyUploadFile(), progress: nil, completionHandler: nil)
    }

    private func backgroundDownloadTask() -> URLSessionTask {
        makeBackgroundManager().downloadTask(with: delayURLRequest(), progress: nil, destination: nil, completionHandler: nil)
    }

    /// resume, suspend, resume; then `name` must have been posted for `task` (bounded wait), and the task is cancelled.
    private func assertNotification(_ name: Notification.Name, for task: URLSessionTask) {
        let posted = expectation(forNotification: name, object: task)
        task.resume()
        task.suspend()
        task.resume()
        wait(for: [posted], timeout: 10)
        task.cancel()
    }

    /// Swizzling's replacement: `resume()` and `suspend()`, called through a
    /// `URLSessionTask` reference, each post their own notification.
    private func assertResumeAndSuspendAreOverridden(_ task: URLSessionTask, file: StaticString = #filePath, line: UInt = #line) {
        let resumes = observe(.AFNetworkingTaskDidResume)
        let suspends = observe(.AFNetworkingTaskDidSuspend)
        task.resume()
        XCTAssertTrue(spin { resumes.count(for: task) == 1 }, "resume() posts AFNetworkingTaskDidResume", file: file, line: line)
        task.suspend()
        XCTAssertTrue(spin { suspends.count(for: task) == 1 }, "suspend() posts AFNetworkingTaskDidSuspend", file: file, line: line)
        drainMainQueue()
        XCTAssertEqual(resumes.count(for: task), 1, "suspend() posts no resume notification", file: file, line: line)
        task.cancel()
    }

    // MARK: Resume and suspend notifications (issue #2702)

    func testDidResumeNotificationIsReceivedByBackgroundDataTaskAfterResume() {
        assertNotification(.AFNetworkingTaskDidResume, for: backgroundDataTask())
    }

    func testDidSuspendNotificationIsReceivedByBackgroundDataTaskAfterSuspend() {
        assertNotification(.AFNetworkingTaskDidSuspend, for: backgroundDataTask())
    }

    func testDidResumeNotificationIsReceivedByBackgroundUploadTaskAfterResume() {
        assertNotification(.AFNetworkingTaskDidResume, for: backgroundUploadTask())
    }

    func testDidSuspendNotificationIsReceivedByBackgroundUploadTaskAfterSuspend() {
        assertNotification(.AFNetworkingTaskDidSuspend, for: backgroundUploadTask())
    }

    func testDidResumeNotificationIsReceivedByBackgroundDownloadTaskAfterResume() {
        assertNotification(.AFNetworkingTaskDidResume, for: backgroundDownloadTask())
    }

    func testDidSuspendNotificationIsReceivedByBackgroundDownloadTaskAfterSuspend() {
        assertNotification(.AFNetworkingTaskDidSuspend, for: backgroundDownloadTask())
    }

    // MARK: Swizzling (replaced by the task subclasses' overrides, Migration.md)

    func testSwizzlingIsWorkingAsExpectedForBackgroundDataTask() {
        assertResumeAndSuspendAreOverridden(backgroundDataTask())
    }

    func testSwizzlingIsWorkingAsExpectedForBackgroundUploadTask() {
        assertResumeAndSuspendAreOverridden(backgroundUploadTask())
    }

    func testSwizzlingIsWorkingAsExpectedForBackgroundDownloadTask() {
        assertResumeAndSuspendAreOverridden(backgroundDownloadTask())
    }

    // MARK: Task classes (no __NSCFBackground… classes on Linux: the default manager's, Migration.md)

    func testBackgroundManagerReturnsExpectedClassForDataTask() {
        let identifier = "com.afnetworking.tests.urlsession.\(UUID().uuidString)"
        let background = makeBackgroundManager(identifier: identifier)
        XCTAssertEqual(background.session.configuration.identifier, identifier, "the identifier is kept")
        let task: URLSessionTask = background.dataTask(with: delayURLRequest(), completionHandler: nil)
        let foreground: URLSessionTask = makeManager().dataTask(with: request("/delay/1"), completionHandler: nil)
        XCTAssertTrue(task is URLSessionDataTask)
        XCTAssertFalse(task is URLSessionUploadTask)
        XCTAssertTrue(type(of: task) == type(of: foreground), "\(type(of: task)) is the default manager's \(type(of: foreground))")
        XCTAssertEqual(task.state, .suspended)
    }

    func testBackgroundManagerReturnsExpectedClassForUploadTask() {
        let background = makeBackgroundManager()
        let file = emptyUploadFile()
        let task: URLSessionTask = background.uploadTask(with: delayURLRequest(), fromFile: file, progress: nil, completionHandler: nil)
        let foreground: URLSessionTask = makeManager().uploadTask(with: request("/delay/1"), fromFile: file, progress: nil,
                                                                  completionHandler: nil)
        XCTAssertTrue(task is URLSessionUploadTask)
        XCTAssertTrue(type(of: task) == type(of: foreground), "\(type(of: task)) is the default manager's \(type(of: foreground))")
        XCTAssertEqual(task.state, .suspended)
    }

    func testBackgroundManagerReturnsExpectedClassForDownloadTask() {
        let background = makeBackgroundManager()
        let task: URLSessionTask = background.downloadTask(with: delayURLRequest(), progress: nil, destination: nil, completionHandler: nil)
        let foreground: URLSessionTask = makeManager().downloadTask(with: request("/delay/1"), progress: nil, destination: nil,
                                                                    completionHandler: nil)
        XCTAssertTrue(task is URLSessionDownloadTask)
        XCTAssertFalse(task is URLSessionDataTask)
        XCTAssertTrue(type(of: task) == type(of: foreground), "\(type(of: task)) is the default manager's \(type(of: foreground))")
        XCTAssertEqual(task.state, .suspended)
    }
}
