@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// URLSessionManager's tasks: progress, the resume/suspend/complete
/// notifications, identifiers under concurrent creation, states, the task
/// lists, defaults, completion queue and group, and the completion
/// notification's userInfo. (AFNetworking 2.7's and 3.2.1's manager tests,
/// redone for the engine-backed tasks on Linux.)
final class URLSessionManagerTests: SessionTasksTestCase {

    // MARK: Progress as a child of the current progress (2.7's NSProgress ** tests)

    func testUploadTaskProgressBecomesPartOfTheCurrentProgress() {
        let manager = makeManager()
        let overall = Progress(totalUnitCount: 100)
        overall.becomeCurrent(withPendingUnitCount: 80)
        let task = manager.uploadTask(with: request("/upload", method: "POST"), from: Data(), progress: nil, completionHandler: nil)
        overall.resignCurrent()
        XCTAssertEqual(overall.fractionCompleted, 0, accuracy: 0.0001)

        guard let progress = manager.uploadProgress(for: task) else { return XCTFail("an upload task has an upload progress") }
        progress.totalUnitCount = 1
        progress.completedUnitCount = 1
        XCTAssertEqual(overall.fractionCompleted, 0.8, accuracy: 0.0001)
        XCTAssertEqual(task.state, .suspended, "the factory never resumes")
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testDownloadTaskProgressBecomesPartOfTheCurrentProgress() {
        let manager = makeManager()
        let overall = Progress(totalUnitCount: 100)
        overall.becomeCurrent(withPendingUnitCount: 80)
        let task = manager.downloadTask(with: request("/download"), progress: nil, destination: nil, completionHandler: nil)
        overall.resignCurrent()
        XCTAssertEqual(overall.fractionCompleted, 0, accuracy: 0.0001)

        guard let progress = manager.downloadProgress(for: task) else { return XCTFail("a download task has a download progress") }
        progress.totalUnitCount = 1
        progress.completedUnitCount = 1
        XCTAssertEqual(overall.fractionCompleted, 0.8, accuracy: 0.0001)
        XCTAssertEqual(task.state, .suspended)
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testDataTaskDownloadProgressBecomesPartOfTheCurrentProgress() {
        let manager = makeManager()
        let overall = Progress(totalUnitCount: 10)
        overall.becomeCurrent(withPendingUnitCount: 5)
        let task = manager.dataTask(with: request("/data"), uploadProgress: nil, downloadProgress: nil, completionHandler: nil)
        overall.resignCurrent()
        XCTAssertEqual(overall.fractionCompleted, 0, accuracy: 0.0001)

        guard let progress = manager.downloadProgress(for: task) else { return XCTFail("a data task has a download progress") }
        XCTAssertNotNil(manager.uploadProgress(for: task), "3.x: every task has both progress objects")
        progress.totalUnitCount = 4
        progress.completedUnitCount = 4
        XCTAssertEqual(overall.fractionCompleted, 0.5, accuracy: 0.0001)
    }

    func testTheTasksOwnProgressIsTheReportedOne() {
        let manager = makeManager()
        let data = manager.dataTask(with: request("/a"), uploadProgress: nil, downloadProgress: nil, completionHandler: nil)
        let upload = manager.uploadTask(with: request("/b", method: "POST"), from: Data("x".utf8), progress: nil, completionHandler: nil)
        let download = manager.downloadTask(with: request("/c"), progress: nil, destination: nil, completionHandler: nil)
        XCTAssertTrue(manager.downloadProgress(for: data) === data.progress)
        XCTAssertTrue(manager.uploadProgress(for: upload) === upload.progress)
        XCTAssertTrue(manager.downloadProgress(for: download) === download.progress)

        let other = makeManager()
        XCTAssertNil(other.downloadProgress(for: data), "nil for another manager's task")
        XCTAssertNil(other.uploadProgress(for: upload))
    }

    // MARK: Resume / suspend notifications

    func testResumeAndSuspendNotificationsForADataTask() {
        assertOneNotificationPerStateChange { manager, request, probe in
            manager.dataTask(with: request, completionHandler: probe.data)
        }
    }

    func testResumeAndSuspendNotificationsForAnUploadTask() {
        assertOneNotificationPerStateChange { manager, request, probe in
            var upload = request
            upload.httpMethod = "POST"
            return manager.uploadTask(with: upload, from: Data("payload".utf8), progress: nil, completionHandler: probe.data)
        }
    }

    func testResumeAndSuspendNotificationsForADownloadTask() {
        assertOneNotificationPerStateChange { manager, request, probe in
            manager.downloadTask(with: request, progress: nil, destination: nil, completionHandler: probe.download)
        }
    }

    /// resume, resume, suspend, suspend, resume, cancel, then resume/suspend on
    /// the completed task — all through a `URLSessionTask` reference: two
    /// resume notifications, one suspend, one complete, each on the main thread
    /// with the task as object.
    private func assertOneNotificationPerStateChange(file: StaticString = #filePath, line: UInt = #line,
                                                     _ make: (URLSessionManager, URLRequest, TaskCompletionProbe) -> URLSessionTask) {
        routeSlowly("/slow")
        let manager = makeManager()
        let resumes = observe(.AFNetworkingTaskDidResume)
        let suspends = observe(.AFNetworkingTaskDidSuspend)
        let completes = observe(.AFNetworkingTaskDidComplete)
        let probe = makeProbe()
        let task: URLSessionTask = make(manager, request("/slow"), probe)
        probe.task.value = task

        task.resume()
        task.resume()
        XCTAssertEqual(task.state, .running, file: file, line: line)
        XCTAssertTrue(spin(until: { resumes.count(for: task) >= 1 }), "resume notification", file: file, line: line)

        task.suspend()
        task.suspend()
        XCTAssertEqual(task.state, .suspended, file: file, line: line)
        XCTAssertTrue(spin(until: { suspends.count(for: task) >= 1 }), "suspend notification", file: file, line: line)

        task.resume()
        XCTAssertEqual(task.state, .running, file: file, line: line)
        XCTAssertTrue(spin(until: { resumes.count(for: task) >= 2 }), "second resume notification", file: file, line: line)

        task.cancel()
        wait(for: [probe.expectation], timeout: 20)
        XCTAssertEqual(probe.outcome.value.error?.code, NSURLErrorCancelled, file: file, line: line)
        XCTAssertTrue(spin(until: { completes.count(for: task) >= 1 }), "complete notification", file: file, line: line)

        // Calls that change nothing post nothing.
        task.resume()
        task.suspend()
        XCTAssertEqual(task.state, .completed, file: file, line: line)
        drainMainQueue()

        XCTAssertEqual(resumes.count(for: task), 2, file: file, line: line)
        XCTAssertEqual(suspends.count(for: task), 1, file: file, line: line)
        XCTAssertEqual(completes.count(for: task), 1, file: file, line: line)
        let all = resumes.entries(for: task) + suspends.entries(for: task) + completes.entries(for: task)
        XCTAssertTrue(all.allSatisfy { $0.onMainThread }, "posted on the main queue", file: file, line: line)
    }

    func testANeverResumedTaskPostsNoResumeOrSuspend() {
        let manager = makeManager()
        let resumes = observe(.AFNetworkingTaskDidResume)
        let suspends = observe(.AFNetworkingTaskDidSuspend)
        let task: URLSessionTask = manager.dataTask(with: request("/never"), completionHandler: nil)
        task.suspend()   // already suspended: no change
        drainMainQueue()
        XCTAssertEqual(resumes.count(for: task), 0)
        XCTAssertEqual(suspends.count(for: task), 0)
        XCTAssertEqual(task.state, .suspended)
    }

    // MARK: Progress reported while transferring

    func testDataTaskReportsDownloadProgressReachingOneExactlyOnceAtTheEnd() throws {
        // Reports are batched until the delegate queue takes them, so a body
        // that arrives all at once may be reported once: the server sends the
        // rest only after the first report was seen (on loopback nginx's 4 MiB
        // sometimes all came before the first batch ran).
        let expected = Data((0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 9) })
        let fractions = Locked<[Double]>([])
        server.route("/4m.bin") { _ in
            [.head(status: 200, headers: [("Content-Type", "application/octet-stream"), ("Content-Length", "\(expected.count)")]),
             .body(expected.prefix(1 << 20)), .waitUntil({ !fractions.value.isEmpty }, timeout: 10),
             .body(expected.dropFirst(1 << 20)), .end]
        }
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let queue = manager.operationQueue
        let offQueue = Locked(0)
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/4m.bin"), uploadProgress: nil,
                                    downloadProgress: { progress in
                                        if OperationQueue.current !== queue { offQueue.increment() }
                                        fractions.append(progress.fractionCompleted)
                                    }, completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.object as? Data, expected)

        // Progress blocks run on operationQueue: let the queue finish before counting.
        XCTAssertTrue(spin(until: { fractions.value.last == 1.0 }))
        drain(queue)
        let values = fractions.value
        XCTAssertGreaterThan(values.count, 1, "a 4 MiB body reports progress more than once")
        XCTAssertEqual(values.last, 1.0)
        XCTAssertEqual(values.filter { $0 == 1.0 }.count, 1, "1.0 is reported exactly once: \(values.suffix(5))")
        XCTAssertEqual(values, values.sorted(), "fractionCompleted never goes back")
        XCTAssertEqual(offQueue.value, 0, "progress blocks run on operationQueue")
        XCTAssertEqual(task.countOfBytesReceived, Int64(expected.count))
        XCTAssertNil(manager.downloadProgress(for: task), "progress objects are dropped when the task completes")
    }

    func testDataTaskWithAChunkedBodyStillEndsAtOne() throws {
        // Without Content-Length the total is unknown until the end (3.2.1 never reached 1.0 here).
        let url = try httpbinURL("stream-bytes/65536")
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let fractions = Locked<[Double]>([])
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: url), uploadProgress: nil,
                                    downloadProgress: { progress in fractions.append(progress.fractionCompleted) },
                                    completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.object as? Data)?.count, 65536)
        XCTAssertTrue(spin(until: { fractions.value.last == 1.0 }))
        drain(manager.operationQueue)
        XCTAssertEqual(fractions.value.filter { $0 == 1.0 }.count, 1)
        XCTAssertEqual(fractions.value.last, 1.0)
    }

    func testDownloadTaskReportsProgressReachingOne() throws {
        let url = try httpbinURL("bytes/102400")
        let manager = makeManager()
        let queue = manager.operationQueue
        let fractions = Locked<[Double]>([])
        let offQueue = Locked(0)
        let probe = makeProbe()
        let task = manager.downloadTask(with: URLRequest(url: url), progress: { progress in
            if OperationQueue.current !== queue { offQueue.increment() }
            fractions.append(progress.fractionCompleted)
        }, destination: nil, completionHandler: probe.download)
        XCTAssertTrue(manager.downloadProgress(for: task) === task.progress)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertNil(outcome.fileURL, "no destination: no file path")
        XCTAssertTrue(spin(until: { fractions.value.last == 1.0 }))
        drain(queue)
        XCTAssertEqual(fractions.value.filter { $0 == 1.0 }.count, 1)
        XCTAssertEqual(fractions.value, fractions.value.sorted())
        XCTAssertEqual(offQueue.value, 0)
        XCTAssertEqual(task.countOfBytesReceived, 102400)
    }

    func testUploadTaskReportsProgressReachingOne() throws {
        let url = try httpbinURL("post")
        var body = Data()
        while body.count < 20000 { body.append(Data("AFNetworking".utf8)) }
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        let manager = makeManager()
        let queue = manager.operationQueue
        let fractions = Locked<[Double]>([])
        let offQueue = Locked(0)
        let probe = makeProbe()
        let task = manager.uploadTask(with: request, from: body, progress: { progress in
            if OperationQueue.current !== queue { offQueue.increment() }
            fractions.append(progress.fractionCompleted)
        }, completionHandler: probe.data)
        XCTAssertTrue(manager.uploadProgress(for: task) === task.progress)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((json(outcome.object)?["data"] as? String)?.count, body.count, "the whole body arrived")
        XCTAssertTrue(spin(until: { fractions.value.last == 1.0 }))
        drain(queue)
        XCTAssertEqual(fractions.value.filter { $0 == 1.0 }.count, 1)
        XCTAssertEqual(offQueue.value, 0)
        XCTAssertEqual(task.countOfBytesSent, Int64(body.count))
        XCTAssertEqual(task.countOfBytesExpectedToSend, Int64(body.count))
    }

    // MARK: Identifiers (rdar://17029580)

    func testTaskIdentifiersAreUniquePositiveAndIncreasingWhenTasksAreCreatedConcurrently() {
        let manager = makeManager()
        let request = self.request("/never-sent")
        let upload = self.request("/never-sent", method: "POST")
        let workers = 8, perWorker = 16
        let created = Locked<[(worker: Int, order: Int, identifier: Int)]>([])
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for order in 0..<perWorker {
                let task: URLSessionTask
                switch order % 3 {
                case 0: task = manager.dataTask(with: request, completionHandler: nil)
                case 1: task = manager.uploadTask(with: upload, from: Data("x".utf8), progress: nil, completionHandler: nil)
                default: task = manager.downloadTask(with: request, progress: nil, destination: nil, completionHandler: nil)
                }
                created.append((worker, order, task.taskIdentifier))
            }
        }
        let records = created.value
        XCTAssertEqual(records.count, workers * perWorker)
        let identifiers = records.map(\.identifier)
        XCTAssertEqual(Set(identifiers).count, identifiers.count, "identifiers are unique")
        XCTAssertTrue(identifiers.allSatisfy { $0 > 0 }, "identifiers are positive")
        for worker in 0..<workers {
            let own = records.filter { $0.worker == worker }.sorted { $0.order < $1.order }.map(\.identifier)
            XCTAssertEqual(own, own.sorted(), "worker \(worker): identifiers increase in creation order")
            XCTAssertEqual(Set(own).count, own.count)
        }
        let listed = manager.tasks.map(\.taskIdentifier)
        XCTAssertEqual(listed.count, workers * perWorker, "never-resumed tasks are listed")
        XCTAssertEqual(listed, listed.sorted(), "tasks are listed in creation order")
        XCTAssertTrue(server.requests.isEmpty)
    }

    func testIdentifiersAreUniqueAcrossManagers() {
        let first = makeManager(), second = makeManager()
        let a = first.dataTask(with: request("/a"), completionHandler: nil)
        let b = second.dataTask(with: request("/b"), completionHandler: nil)
        let c = first.dataTask(with: request("/c"), completionHandler: nil)
        XCTAssertNotEqual(a.taskIdentifier, b.taskIdentifier)
        XCTAssertLessThan(a.taskIdentifier, b.taskIdentifier)
        XCTAssertLessThan(b.taskIdentifier, c.taskIdentifier)
    }

    // MARK: Task classes, state, copy, description

    func testTasksAreInstancesOfTheFoundationTaskClasses() {
        let manager = makeManager()
        let data: URLSessionTask = manager.dataTask(with: request("/a"), completionHandler: nil)
        let data4: URLSessionTask = manager.dataTask(with: request("/a"), uploadProgress: nil, downloadProgress: nil, completionHandler: nil)
        let upload: URLSessionTask = manager.uploadTask(with: request("/b", method: "POST"), from: Data(), progress: nil, completionHandler: nil)
        let fileURL = temporaryFileURL("upload-source")
        XCTAssertTrue(FileManager.default.createFile(atPath: fileURL.path, contents: Data("file".utf8)))
        let fileUpload: URLSessionTask = manager.uploadTask(with: request("/b", method: "POST"), fromFile: fileURL,
                                                            progress: nil, completionHandler: nil)
        var streamed = request("/b", method: "POST")
        streamed.httpBodyStream = InputStream(data: Data("stream".utf8))
        let streamUpload: URLSessionTask = manager.uploadTask(withStreamedRequest: streamed, progress: nil, completionHandler: nil)
        let download: URLSessionTask = manager.downloadTask(with: request("/c"), progress: nil, destination: nil, completionHandler: nil)

        for task in [data, data4] {
            XCTAssertTrue(task is URLSessionDataTask)
            XCTAssertFalse(task is URLSessionUploadTask, "a data task is not an upload task")
            XCTAssertFalse(task is URLSessionDownloadTask)
        }
        for task in [upload, fileUpload, streamUpload] {
            XCTAssertTrue(task is URLSessionUploadTask)
        }
        XCTAssertTrue(download is URLSessionDownloadTask)
        XCTAssertFalse(download is URLSessionDataTask)
        for task in [data, data4, upload, fileUpload, streamUpload, download] {
            XCTAssertEqual(task.state, .suspended, "tasks are created suspended")
        }
    }

    func testOriginalRequestIsTheRequestWithTheConfigurationsHeaders() {
        let configuration = URLSessionConfiguration.default
        configuration.httpAdditionalHeaders = ["X-Configured": "yes", "X-Both": "configuration"]
        let manager = makeManager(configuration: configuration)
        var request = self.request("/headers")
        request.setValue("request", forHTTPHeaderField: "X-Both")
        let task = manager.dataTask(with: request, completionHandler: nil)
        XCTAssertEqual(task.originalRequest?.url, request.url)
        XCTAssertEqual(task.originalRequest?.value(forHTTPHeaderField: "X-Configured"), "yes")
        XCTAssertEqual(task.originalRequest?.value(forHTTPHeaderField: "X-Both"), "request", "the request's own header wins")
    }

    func testStateTransitions() {
        routeSlowly("/slow")
        let manager = makeManager()
        let probe = makeProbe()
        let task: URLSessionTask = manager.dataTask(with: request("/slow"), completionHandler: probe.data)
        probe.task.value = task
        XCTAssertEqual(task.state, .suspended)
        task.resume()
        XCTAssertEqual(task.state, .running)
        task.suspend()
        XCTAssertEqual(task.state, .suspended)
        task.resume()
        XCTAssertEqual(task.state, .running)
        // Canceling until the delegate queue reaches the task's end: held
        // here so that the check does not race that queue's thread.
        manager.operationQueue.isSuspended = true
        task.cancel()
        XCTAssertEqual(task.state, .canceling)
        manager.operationQueue.isSuspended = false
        wait(for: [probe.expectation], timeout: 20)
        let outcome = probe.outcome.value
        XCTAssertEqual(outcome.stateInHandler, .completed, "completed before the completion handler runs")
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertEqual((task.error as NSError?)?.code, NSURLErrorCancelled)
        XCTAssertEqual(task.state, .completed)
    }

    func testCompletedStateAndLiveCountersForASuccessfulTask() throws {
        let url = try httpbinURL("bytes/2048")
        let manager = makeManager()
        manager.responseSerializer = HTTPResponseSerializer()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: url), completionHandler: probe.data)
        XCTAssertNil(task.response)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.stateInHandler, .completed)
        XCTAssertNil(outcome.error)
        XCTAssertEqual((outcome.response as? HTTPURLResponse)?.statusCode, 200, "the handler gets the task's response")
        XCTAssertEqual((task.response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(task.countOfBytesReceived, 2048)
        XCTAssertEqual(task.countOfBytesExpectedToReceive, 2048)
        XCTAssertNil(task.error)
        XCTAssertEqual(task.currentRequest?.url, url)
    }

    func testCopyReturnsTheTaskItself() {
        let manager = makeManager()
        let data = manager.dataTask(with: request("/a"), completionHandler: nil)
        let download = manager.downloadTask(with: request("/b"), progress: nil, destination: nil, completionHandler: nil)
        XCTAssertTrue((data.copy() as AnyObject) === data)
        XCTAssertTrue((download.copy() as AnyObject) === download)
    }

    func testTaskDescriptionIsTheCallersAndDoesNotSilenceNotifications() {
        server.respond("/described", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let manager = makeManager()
        let resumes = observe(.AFNetworkingTaskDidResume)
        let completes = observe(.AFNetworkingTaskDidComplete)
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/described"), completionHandler: probe.data)
        XCTAssertNil(task.taskDescription, "nil by default")
        task.taskDescription = "the caller's"
        task.priority = URLSessionTask.highPriority
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertTrue(spin(until: { completes.count(for: task) == 1 }), "complete notification despite taskDescription")
        XCTAssertEqual(resumes.count(for: task), 1, "resume notification despite taskDescription")
        XCTAssertEqual(task.taskDescription, "the caller's")
        XCTAssertEqual(task.priority, URLSessionTask.highPriority)
    }

    // MARK: Task lists

    func testTaskListsHoldUnfinishedTasksInCreationOrder() {
        let manager = makeManager()
        let probe = makeProbe("cancelled upload")
        let first = manager.dataTask(with: request("/1"), completionHandler: nil)
        let upload = manager.uploadTask(with: request("/2", method: "POST"), from: Data("x".utf8), progress: nil, completionHandler: probe.data)
        let download = manager.downloadTask(with: request("/3"), progress: nil, destination: nil, completionHandler: nil)
        let second = manager.dataTask(with: request("/4"), uploadProgress: nil, downloadProgress: nil, completionHandler: nil)

        XCTAssertEqual(ids(manager.tasks), ids([first, upload, download, second]), "never-resumed tasks, creation order")
        XCTAssertEqual(ids(manager.dataTasks), ids([first, second]), "upload tasks are not data tasks here")
        XCTAssertEqual(ids(manager.uploadTasks), ids([upload]))
        XCTAssertEqual(ids(manager.downloadTasks), ids([download]))

        probe.task.value = upload
        upload.cancel()
        wait(for: [probe.expectation], timeout: 10)
        XCTAssertTrue(spin(until: { manager.tasks.count == 3 }, timeout: 5))
        XCTAssertEqual(ids(manager.tasks), ids([first, download, second]), "completed tasks leave the list")
        XCTAssertTrue(manager.uploadTasks.isEmpty)
    }

    func testTaskListsCanBeReadFromDelegateBlocksWithoutDeadlock() {
        server.respond("/listed", headers: [("Content-Type", "application/json")], body: Data("{\"a\":1}".utf8))
        let manager = makeManager()
        let counts = Locked<[String: Int]>([:])
        manager.setDataTaskDidReceiveResponseBlock { [weak manager] _, _, _ in
            let tasks = manager?.tasks.count ?? -1
            let data = manager?.dataTasks.count ?? -1
            counts.withLock { $0["response.tasks"] = tasks; $0["response.dataTasks"] = data }
            return .allow
        }
        manager.setTaskDidCompleteBlock { [weak manager] _, _, _ in
            let uploads = manager?.uploadTasks.count ?? -1
            let downloads = manager?.downloadTasks.count ?? -1
            counts.withLock { $0["complete.uploadTasks"] = uploads; $0["complete.downloadTasks"] = downloads }
        }
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/listed"), completionHandler: probe.data)
        let outcome = run(task, probe, timeout: 15)
        XCTAssertNil(outcome.error)
        let seen = counts.value
        XCTAssertEqual(seen["response.tasks"], 1, "the running task is listed while its response arrives")
        XCTAssertEqual(seen["response.dataTasks"], 1)
        XCTAssertEqual(seen["complete.uploadTasks"], 0)
        XCTAssertEqual(seen["complete.downloadTasks"], 0)
    }

    private func ids(_ tasks: [URLSessionTask]) -> [ObjectIdentifier] { tasks.map(ObjectIdentifier.init) }

    // MARK: Defaults

    func testDefaults() {
        let manager = track(URLSessionManager())
        XCTAssertEqual(manager.operationQueue.maxConcurrentOperationCount, 1)
        XCTAssertTrue(manager.responseSerializer is JSONResponseSerializer)
        XCTAssertNil(manager.completionQueue)
        XCTAssertNil(manager.completionGroup)
        XCTAssertEqual(manager.securityPolicy.sslPinningMode, .none)
        XCTAssertFalse(manager.securityPolicy.allowInvalidCertificates)
        XCTAssertTrue(manager.reachabilityManager === NetworkReachabilityManager.shared())
        XCTAssertFalse(manager.attemptsToRecreateUploadTasksForBackgroundSessions)
        XCTAssertTrue(manager.tasks.isEmpty)
        XCTAssertTrue(manager.session.delegateQueue === manager.operationQueue, "operationQueue is the session's delegate queue")
        XCTAssertTrue((manager.session.delegate as AnyObject?) === manager)
    }

    func testTheConfigurationIsCopiedAtInit() {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 33
        let manager = makeManager(configuration: configuration)
        configuration.timeoutIntervalForRequest = 44
        XCTAssertEqual(manager.session.configuration.timeoutIntervalForRequest, 33)
        XCTAssertFalse(manager.session.configuration === configuration)
    }

    // MARK: Completion handler: once, queue, group, placeholder response

    func testCancelBeforeResumeCompletesOnceWithCancelled() {
        let manager = makeManager()
        let resumes = observe(.AFNetworkingTaskDidResume)
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/never"), completionHandler: probe.data)
        probe.task.value = task
        task.cancel()
        wait(for: [probe.expectation], timeout: 10)
        let outcome = probe.outcome.value
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(outcome.stateInHandler, .completed)

        task.resume()   // completed: nothing happens
        XCTAssertEqual(task.state, .completed)
        drainMainQueue()
        XCTAssertEqual(probe.outcome.value.calls, 1)
        XCTAssertEqual(resumes.count(for: task), 0)
        XCTAssertTrue(server.requests.isEmpty, "a task cancelled before resume sends nothing")
    }

    func testCancelledDownloadAndUploadTasksCompleteOnce() {
        routeSlowly("/slow")
        let manager = makeManager()
        let uploadProbe = makeProbe("upload")
        let downloadProbe = makeProbe("download")
        let upload = manager.uploadTask(with: request("/slow", method: "POST"), from: Data("x".utf8), progress: nil,
                                        completionHandler: uploadProbe.data)
        let download = manager.downloadTask(with: request("/slow"), progress: nil, destination: nil, completionHandler: downloadProbe.download)
        upload.resume()
        download.resume()
        upload.cancel()
        download.cancel()
        wait(for: [uploadProbe.expectation, downloadProbe.expectation], timeout: 15)
        drainMainQueue()
        XCTAssertEqual(uploadProbe.outcome.value.calls, 1)
        XCTAssertEqual(downloadProbe.outcome.value.calls, 1)
        XCTAssertEqual(uploadProbe.outcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertEqual(downloadProbe.outcome.value.error?.code, NSURLErrorCancelled)
        XCTAssertNil(downloadProbe.outcome.value.fileURL)
    }

    func testCompletionHandlerRunsOnceOnTheMainQueueByDefault() {
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":true}".utf8))
        let manager = makeManager()
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/ok"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertTrue(outcome.onMainThread)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(json(outcome.object)?["ok"] as? Bool, true)
        drainMainQueue()
        XCTAssertEqual(probe.outcome.value.calls, 1)
    }

    func testCompletionHandlerRunsOnTheCompletionQueueInsideTheCompletionGroup() {
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":true}".utf8))
        let manager = makeManager()
        let key = DispatchSpecificKey<String>()
        let queue = DispatchQueue(label: "session-tests.completion")
        queue.setSpecific(key: key, value: "completion")
        let group = DispatchGroup()
        manager.completionQueue = queue
        manager.completionGroup = group
        XCTAssertTrue(manager.completionQueue === queue)
        XCTAssertTrue(manager.completionGroup === group)

        let probe = makeProbe()
        probe.expectedQueueKey.value = key
        probe.expectedGroup.value = group
        let task = manager.dataTask(with: request("/ok"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertTrue(outcome.onExpectedQueue, "the handler runs on completionQueue")
        XCTAssertFalse(outcome.onMainThread)
        XCTAssertTrue(outcome.insideExpectedGroup, "the handler runs inside completionGroup")

        let notified = expectation(description: "group notify after the handler")
        let handlerCalls = probe.outcome
        let callsAtNotify = Locked(-1)
        group.notify(queue: .global()) {
            callsAtNotify.value = handlerCalls.value.calls
            notified.fulfill()
        }
        wait(for: [notified], timeout: 10)
        XCTAssertEqual(callsAtNotify.value, 1)
    }

    func testATransferThatGotNoResponseHandsAPlainURLResponsePlaceholder() {
        let manager = makeManager()
        let url = refusedURL()
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: url), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.calls, 1)
        XCTAssertEqual(outcome.error?.domain, NSURLErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotConnectToHost)
        XCTAssertEqual(outcome.error?.userInfo[NSURLErrorFailingURLErrorKey] as? URL, url)
        XCTAssertNil(outcome.object)
        guard let response = outcome.response else { return XCTFail("a response placeholder") }
        XCTAssertFalse(response is HTTPURLResponse, "a plain URLResponse, never an HTTPURLResponse")
        XCTAssertEqual(response.url, url)
        XCTAssertEqual(response.expectedContentLength, -1)
        XCTAssertNil(task.response)
    }

    func testADownloadThatGotNoResponseHandsAPlainURLResponsePlaceholder() {
        let manager = makeManager()
        let url = refusedURL("file")
        let probe = makeProbe()
        let task = manager.downloadTask(with: URLRequest(url: url), progress: nil, destination: { _, _ in
            XCTFail("no destination is asked when nothing was downloaded")
            return URL(fileURLWithPath: "/nonexistent/never")
        }, completionHandler: probe.download)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.error?.code, NSURLErrorCannotConnectToHost)
        XCTAssertNil(outcome.fileURL)
        guard let response = outcome.response else { return XCTFail("a response placeholder") }
        XCTAssertFalse(response is HTTPURLResponse)
        XCTAssertEqual(response.url, url)
        XCTAssertEqual(response.expectedContentLength, -1)
    }

    // MARK: AFNetworkingTaskDidComplete

    func testCompleteNotificationForASuccessfulDataTask() {
        server.respond("/ok", headers: [("Content-Type", "application/json")], body: Data("{\"ok\":true}".utf8))
        let manager = makeManager()
        let probe = makeProbe()
        let handlerCalls = probe.outcome
        let completes = observe(.AFNetworkingTaskDidComplete, snapshot: { handlerCalls.value.calls == 1 })
        let task = manager.dataTask(with: request("/ok"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertTrue(spin(until: { completes.count(for: task) == 1 }))
        guard let entry = completes.entries(for: task).first else { return }
        XCTAssertTrue(entry.onMainThread)
        XCTAssertTrue(entry.snapshot, "posted after the completion handler ran")
        let info = entry.userInfo
        XCTAssertTrue((info[AFNetworkingTaskDidCompleteResponseSerializerKey] as AnyObject?) === manager.responseSerializer)
        XCTAssertEqual(info[AFNetworkingTaskDidCompleteResponseDataKey] as? Data, Data("{\"ok\":true}".utf8))
        XCTAssertEqual((info[AFNetworkingTaskDidCompleteSerializedResponseKey] as? [String: Any])?["ok"] as? Bool, true)
        XCTAssertNil(info[AFNetworkingTaskDidCompleteErrorKey])
        XCTAssertNil(info[AFNetworkingTaskDidCompleteAssetPathKey])
    }

    func testCompleteNotificationForAFailedValidation() {
        server.respond("/missing", status: 404, headers: [("Content-Type", "text/plain")], body: Data())
        let manager = makeManager()
        let completes = observe(.AFNetworkingTaskDidComplete)
        let probe = makeProbe()
        let task = manager.dataTask(with: request("/missing"), completionHandler: probe.data)
        let outcome = run(task, probe)
        XCTAssertEqual(outcome.error?.domain, AFURLResponseSerializationErrorDomain)
        XCTAssertEqual(outcome.error?.code, NSURLErrorBadServerResponse)
        XCTAssertTrue(spin(until: { completes.count(for: task) == 1 }))
        guard let info = completes.entries(for: task).first?.userInfo else { return }
        XCTAssertNotNil(info[AFNetworkingTaskDidCompleteResponseSerializerKey])
        XCTAssertEqual(info[AFNetworkingTaskDidCompleteResponseDataKey] as? Data, Data(), "present, possibly empty")
        XCTAssertEqual((info[AFNetworkingTaskDidCompleteErrorKey] as? NSError)?.code, NSURLErrorBadServerResponse)
        XCTAssertNil(info[AFNetworkingTaskDidCompleteSerializedResponseKey])
    }

    func testCompleteNotificationForATransportError() {
        let manager = makeManager()
        let completes = observe(.AFNetworkingTaskDidComplete)
        let probe = makeProbe()
        let task = manager.dataTask(with: URLRequest(url: refusedURL()), completionHandler: probe.data)
        _ = run(task, probe)
        XCTAssertTrue(spin(until: { completes.count(for: task) == 1 }))
        guard let info = completes.entries(for: task).first?.userInfo else { return }
        XCTAssertNotNil(info[AFNetworkingTaskDidCompleteResponseSerializerKey])
        XCTAssertEqual((info[AFNetworkingTaskDidCompleteErrorKey] as? NSError)?.code, NSURLErrorCannotConnectToHost)
        XCTAssertNil(info[AFNetworkingTaskDidCompleteSerializedResponseKey])
    }

    func testCompleteNotificationForAMovedDownloadCarriesTheAssetPath() {
        server.respond("/file", headers: [("Content-Type", "application/octet-stream")], body: Data("downloaded".utf8))
        let manager = makeManager()
        let completes = observe(.AFNetworkingTaskDidComplete)
        let moves = observe(.AFURLSessionDownloadTaskDidMoveFileSuccessfully)
        let destination = temporaryFileURL()
        let probe = makeProbe()
        let task = manager.downloadTask(with: request("/file"), progress: nil, destination: { _, _ in destination },
                                        completionHandler: probe.download)
        let outcome = run(task, probe)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.fileURL, destination)
        XCTAssertEqual(try? Data(contentsOf: destination), Data("downloaded".utf8))
        XCTAssertTrue(spin(until: { completes.count(for: task) == 1 }))
        guard let info = completes.entries(for: task).first?.userInfo else { return }
        XCTAssertEqual(info[AFNetworkingTaskDidCompleteAssetPathKey] as? URL, destination)
        XCTAssertNil(info[AFNetworkingTaskDidCompleteResponseDataKey], "a moved download has an asset path instead of data")
        XCTAssertNil(info[AFNetworkingTaskDidCompleteErrorKey])
        XCTAssertNotNil(info[AFNetworkingTaskDidCompleteResponseSerializerKey])
        XCTAssertEqual(moves.count(for: task), 1, "4.x move-success notification")
    }

    func testCompleteNotificationIsPostedForTasksWithoutAHandler() {
        server.respond("/quiet", headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let manager = makeManager()
        let completes = observe(.AFNetworkingTaskDidComplete)
        let task = manager.dataTask(with: request("/quiet"), completionHandler: nil)
        task.resume()
        XCTAssertTrue(spin(until: { completes.count(for: task) == 1 }, timeout: 15))
        XCTAssertEqual(task.state, .completed)
    }

    // MARK: Names and keys

    func testNotificationNamesAndKeysAreAFNetworkingStrings() {
        XCTAssertEqual(Notification.Name.AFNetworkingTaskDidResume.rawValue, "com.alamofire.networking.task.resume")
        XCTAssertEqual(Notification.Name.AFNetworkingTaskDidSuspend.rawValue, "com.alamofire.networking.task.suspend")
        XCTAssertEqual(Notification.Name.AFNetworkingTaskDidComplete.rawValue, "com.alamofire.networking.task.complete")
        XCTAssertEqual(Notification.Name.AFURLSessionDidInvalidate.rawValue, "com.alamofire.networking.session.invalidate")
        XCTAssertEqual(Notification.Name.AFURLSessionDownloadTaskDidFailToMoveFile.rawValue,
                       "com.alamofire.networking.session.download.file-manager-error")
        XCTAssertEqual(Notification.Name.AFURLSessionDownloadTaskDidMoveFileSuccessfully.rawValue,
                       "com.alamofire.networking.session.download.file-manager-succeed")
        XCTAssertEqual(AFNetworkingTaskDidCompleteSerializedResponseKey, "com.alamofire.networking.task.complete.serializedresponse")
        XCTAssertEqual(AFNetworkingTaskDidCompleteResponseSerializerKey, "com.alamofire.networking.task.complete.responseserializer")
        XCTAssertEqual(AFNetworkingTaskDidCompleteResponseDataKey, "com.alamofire.networking.complete.finish.responsedata")
        XCTAssertEqual(AFNetworkingTaskDidCompleteErrorKey, "com.alamofire.networking.task.complete.error")
        XCTAssertEqual(AFNetworkingTaskDidCompleteAssetPathKey, "com.alamofire.networking.task.complete.assetpath")
    }

    func testDeprecatedNamesAreAliasesOfTheCurrentOnes() {
        let legacy = SessionLegacyNames.current
        XCTAssertEqual(legacy.taskDidStart, .AFNetworkingTaskDidResume)
        XCTAssertEqual(legacy.taskDidStart.rawValue, "com.alamofire.networking.task.resume")
        XCTAssertEqual(legacy.taskDidFinish, .AFNetworkingTaskDidComplete)
        XCTAssertEqual(legacy.taskDidFinish.rawValue, "com.alamofire.networking.task.complete")
        XCTAssertEqual(legacy.finishSerializedResponseKey, AFNetworkingTaskDidCompleteSerializedResponseKey)
        XCTAssertEqual(legacy.finishResponseSerializerKey, AFNetworkingTaskDidCompleteResponseSerializerKey)
        XCTAssertEqual(legacy.finishResponseDataKey, AFNetworkingTaskDidCompleteResponseDataKey)
        XCTAssertEqual(legacy.finishErrorKey, AFNetworkingTaskDidCompleteErrorKey)
        XCTAssertEqual(legacy.finishAssetPathKey, AFNetworkingTaskDidCompleteAssetPathKey)
        XCTAssertTrue(legacy.sessionManagerType == URLSessionManager.self)
        XCTAssertTrue(legacy.httpSessionManagerType == HTTPSessionManager.self)
        XCTAssertTrue(legacy.activityIndicatorManagerType == NetworkActivityIndicatorManager.self)
    }

    // MARK: Coding and copying

    func testSecureCodingKeepsTheConfigurationsScalars() throws {
        XCTAssertTrue(URLSessionManager.supportsSecureCoding)
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 17
        configuration.timeoutIntervalForResource = 170
        configuration.httpMaximumConnectionsPerHost = 3
        configuration.httpAdditionalHeaders = ["X-Archived": "yes"]
        let manager = makeManager(configuration: configuration)
        let archive = try NSKeyedArchiver.archivedData(withRootObject: manager, requiringSecureCoding: true)
        let restored = try XCTUnwrap(NSKeyedUnarchiver.unarchivedObject(ofClass: URLSessionManager.self, from: archive))
        track(restored)
        XCTAssertFalse(restored === manager)
        XCTAssertEqual(restored.session.configuration.timeoutIntervalForRequest, 17)
        XCTAssertEqual(restored.session.configuration.timeoutIntervalForResource, 170)
        XCTAssertEqual(restored.session.configuration.httpMaximumConnectionsPerHost, 3)
        XCTAssertEqual(restored.session.configuration.httpAdditionalHeaders?["X-Archived"] as? String, "yes")
        XCTAssertEqual(restored.operationQueue.maxConcurrentOperationCount, 1)
    }

    func testCopyIsANewManagerWithItsOwnSession() throws {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = 21
        let manager = makeManager(configuration: configuration)
        manager.setTaskDidCompleteBlock { _, _, _ in }
        _ = manager.dataTask(with: request("/pending"), completionHandler: nil)
        let copy = track(try XCTUnwrap(manager.copy() as? URLSessionManager))
        XCTAssertFalse(copy === manager)
        XCTAssertFalse(copy.session === manager.session)
        XCTAssertFalse(copy.operationQueue === manager.operationQueue)
        XCTAssertEqual(copy.session.configuration.timeoutIntervalForRequest, 21)
        XCTAssertTrue(copy.tasks.isEmpty, "a copy has no tasks")
    }
}
