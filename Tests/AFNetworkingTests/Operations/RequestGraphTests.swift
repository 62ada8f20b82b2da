import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// `RequestGraph` against the scripted server: `/login` hands out a token,
/// `/item/N` needs it, `/missing` is a 404, `/slow` takes 0.3 s and counts
/// how many run at once, by host, `/held` answers once `released` is set.
final class RequestGraphTests: OperationTestCase {
    private let load = Locked((inFlight: [String: Int](), peak: [String: Int](), total: 0, peakTotal: 0))
    /// Lets `/held` answer: a request the test cancels or pauses is still
    /// running when it does, however late that is.
    private let released = Locked(false)

    override func setUpWithError() throws {
        try super.setUpWithError()
        server.respond("/login", headers: [("Content-Type", "application/json")], body: Data(#"{"token":"t0k"}"#.utf8))
        server.route("/item") { request in
            let ok = request.headers["Authorization"] == ["Bearer t0k"]
            let body = Data((ok ? #"{"item":true}"# : #"{"error":"token"}"#).utf8)
            return [.head(status: ok ? 200 : 401, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
                    .body(body), .end]
        }
        server.respond("/missing", status: 404, headers: [("Content-Type", "application/json")], body: Data("{}".utf8))
        let released = self.released
        server.route("/held") { _ in
            [.waitUntil({ released.value }, timeout: 60), .head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
             .body(Data("{}".utf8)), .end]
        }
        let load = self.load
        server.route("/slow") { request in
            let host = request.headers["Host"].first.map { String($0.split(separator: ":")[0]) } ?? "?"
            load.withLock {
                $0.inFlight[host, default: 0] += 1
                $0.peak[host] = max($0.peak[host] ?? 0, $0.inFlight[host]!)
                $0.total += 1
                $0.peakTotal = max($0.peakTotal, $0.inFlight.values.reduce(0, +))
            }
            return [.wait(0.3), .head(status: 200, headers: [("Content-Type", "application/json"), ("Content-Length", "2")]),
                    .body(Data("{}".utf8)), .end]
        }
    }

    private func operation(_ path: String, host: String? = nil) -> HTTPRequestOperation {
        var components = URLComponents(url: url(path), resolvingAgainstBaseURL: false)!
        if let host { components.host = host }
        let operation = HTTPRequestOperation(request: URLRequest(url: components.url!))
        operation.responseSerializer = JSONResponseSerializer()
        operation.completionQueue = .global()
        if path == "/slow" {
            let load = self.load
            operation.setCompletionBlockWithSuccess({ operation, _ in
                let host = operation.request.url?.host ?? "?"
                load.withLock { $0.inFlight[host, default: 1] -= 1 }
            }, failure: nil)
        }
        return operation
    }

    private func finish(_ graph: RequestGraph, timeout: TimeInterval = 20) -> RequestGraphReport? {
        let report = Locked<RequestGraphReport?>(nil)
        let done = expectation(description: "graph")
        graph.setCompletionBlock(queue: .global()) { report.value = $0; done.fulfill() }
        graph.start()
        wait(for: [done], timeout: timeout)
        return report.value
    }

    func testADependentIsBuiltFromItsDependencysResult() throws {
        let graph = RequestGraph()
        let login = try graph.add(operation("/login"), name: "login")
        let itemURL = url("/item")
        let item = try graph.add(name: "item", dependencies: [login]) { results in
            let token = ((results[login] as? HTTPRequestOperation)?.responseObject as? [String: Any])?["token"] as? String ?? ""
            var request = URLRequest(url: itemURL)
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
            return HTTPRequestOperation(request: request)
        }
        let report = try XCTUnwrap(finish(graph))
        XCTAssertTrue(report.allSucceeded, "\(report.outcomes)")
        XCTAssertEqual(report.outcomes.count, 2)
        guard case .succeeded? = report[item] else { return XCTFail("\(String(describing: report[item]))") }
        XCTAssertEqual(server.requests.map(\.uri), ["/login", "/item"])
        XCTAssertEqual(graph.progress.totalUnitCount, 2)
        XCTAssertEqual(graph.progress.completedUnitCount, 2, "counted before the completion ran")
        XCTAssertGreaterThan(graph.countOfBytesReceived, 0)
    }

    func testAFailedDependencySkipsItsDependentsUnlessTheyRunAnyway() throws {
        let graph = RequestGraph()
        let missing = try graph.add(operation("/missing"), name: "missing")
        let skipped = operation("/login")
        let failureBlockRan = expectation(description: "the skipped operation's failure block")
        skipped.setCompletionBlockWithSuccess(nil) { _, error in
            XCTAssertEqual((error as NSError).code, NSURLErrorCancelled)
            failureBlockRan.fulfill()
        }
        let second = try graph.add(skipped, name: "second", dependencies: [missing])
        let third = try graph.add(name: "third", dependencies: [second]) { _ in
            XCTFail("a skipped node's dependent is not built")
            return BlockOperation {}
        }
        let anyway = try graph.add(operation("/login"), name: "anyway", dependencies: [missing], onDependencyFailure: .runAnyway)
        let report = try XCTUnwrap(finish(graph))
        wait(for: [failureBlockRan], timeout: 10)
        XCTAssertFalse(report.allSucceeded)
        guard case .failed? = report[missing] else { return XCTFail("\(String(describing: report[missing]))") }
        guard case .skipped(let because)? = report[second], because == missing else { return XCTFail("\(String(describing: report[second]))") }
        guard case .skipped(let why)? = report[third], why == second else { return XCTFail("\(String(describing: report[third]))") }
        guard case .succeeded? = report[anyway] else { return XCTFail("\(String(describing: report[anyway]))") }
        XCTAssertEqual(server.requests.map(\.uri).sorted(), ["/login", "/missing"], "nothing sent for the skipped nodes")
    }

    func testCancellingTheGraphEndsRunningAndWaitingNodesCancelled() throws {
        let graph = RequestGraph()
        let running = operation("/held")
        let first = try graph.add(running, name: "first")
        let waiting = try graph.add(operation("/login"), name: "waiting", dependencies: [first])
        let built = try graph.add(name: "built", dependencies: [waiting]) { _ in BlockOperation {} }
        let report = Locked<RequestGraphReport?>(nil)
        let calls = Locked(0)
        let done = expectation(description: "graph")
        graph.setCompletionBlock(queue: .global()) { report.value = $0; calls.withLock { $0 += 1 }; done.fulfill() }
        graph.start()
        XCTAssertTrue(spin(until: { running.isExecuting }))
        graph.cancel()
        graph.cancel()
        wait(for: [done], timeout: 15)
        for node in [first, waiting, built] {
            guard case .cancelled? = report.value?[node] else { return XCTFail("\(node): \(String(describing: report.value?[node]))") }
        }
        XCTAssertTrue(graph.isFinished)
        XCTAssertEqual(calls.value, 1)
        XCTAssertThrowsError(try graph.add(BlockOperation {})) { XCTAssertEqual($0 as? RequestGraphError, .finished) }
    }

    func testCancellingTheTaskRunningTheGraphCancelsIt() async throws {
        let graph = RequestGraph()
        let running = operation("/held")
        let node = try graph.add(running)
        let task = Task { await graph.run() }
        for _ in 0..<500 where !running.isExecuting { try await Task.sleep(nanoseconds: 10_000_000) }
        task.cancel()
        let report = await task.value
        guard case .cancelled? = report[node] else { return XCTFail("\(String(describing: report[node]))") }
        XCTAssertEqual(node.name, "node 1")
    }

    func testTheGraphCapsRunningNodesAndRequestsPerHost() throws {
        let graph = RequestGraph()
        graph.maxConcurrentRequestCount = 3
        graph.maxConcurrentRequestCountPerHost = 1
        for index in 0..<6 { try graph.add(operation("/slow", host: index % 2 == 0 ? "127.0.0.1" : "localhost")) }
        let report = try XCTUnwrap(finish(graph, timeout: 30))
        XCTAssertTrue(report.allSucceeded, "\(report.outcomes)")
        XCTAssertEqual(load.value.total, 6)
        XCTAssertEqual(load.value.peak["127.0.0.1"], 1)
        XCTAssertEqual(load.value.peak["localhost"], 1)

        let wide = RequestGraph()
        wide.maxConcurrentRequestCount = 2
        load.withLock { $0 = (inFlight: [:], peak: [:], total: 0, peakTotal: 0) }
        for _ in 0..<6 { try wide.add(operation("/slow")) }
        XCTAssertTrue(try XCTUnwrap(finish(wide, timeout: 30)).allSucceeded)
        XCTAssertEqual(load.value.peakTotal, 2)
    }

    func testPausingTheGraphPausesItsRequestsAndStartsNothingNew() throws {
        let graph = RequestGraph()
        graph.maxConcurrentRequestCount = 1
        let first = operation("/held")
        try graph.add(first)
        let second = operation("/login")
        try graph.add(second)
        graph.start()
        XCTAssertTrue(spin(until: { first.isExecuting }))
        graph.pause()
        XCTAssertTrue(graph.isPaused)
        XCTAssertTrue(first.isPaused)
        XCTAssertFalse(second.isExecuting || second.isFinished)
        released.value = true   // the request sent again on resume is answered
        let done = expectation(description: "graph")
        graph.setCompletionBlock(queue: .global()) { report in
            XCTAssertTrue(report.allSucceeded, "\(report.outcomes)")
            done.fulfill()
        }
        graph.resume()
        wait(for: [done], timeout: 20)
    }

    func testOperationDependenciesOfTheCallerCountAndCyclesAreRefused() throws {
        let graph = RequestGraph()
        let login = operation("/login")
        let item = operation("/missing")
        item.addDependency(login)
        let itemNode = try graph.add(item, name: "item")
        let loginNode = try graph.add(login, name: "login")
        let report = try XCTUnwrap(finish(graph))
        XCTAssertEqual(server.requests.map(\.uri), ["/login", "/missing"], "the item waited for login, added after it")
        guard case .succeeded? = report[loginNode], case .failed? = report[itemNode] else { return XCTFail("\(report.outcomes)") }

        let cyclic = RequestGraph()
        let a = BlockOperation {}, b = BlockOperation {}
        b.addDependency(a)
        let nodeB = try cyclic.add(b, name: "b")
        XCTAssertThrowsError(try cyclic.add(a, name: "a", dependencies: [nodeB])) {
            XCTAssertEqual($0 as? RequestGraphError, .cycle(["a", "b"]))
        }
        XCTAssertThrowsError(try cyclic.add(b)) { XCTAssertEqual($0 as? RequestGraphError, .alreadyEnqueued) }
        XCTAssertThrowsError(try RequestGraph().add(BlockOperation {}, dependencies: [nodeB])) {
            XCTAssertEqual($0 as? RequestGraphError, .foreignNode(nodeB))
        }
    }

    func testNodesAddedWhileRunningJoinAndBlockOperationsMixIn() throws {
        let graph = RequestGraph()
        let first = operation("/slow")
        let firstNode = try graph.add(first)
        graph.start()
        XCTAssertTrue(spin(until: { first.isExecuting }))
        let ran = Locked(false)
        let block = try graph.add(BlockOperation { ran.value = true }, name: "block", dependencies: [firstNode])
        let report = try XCTUnwrap(finish(graph))
        XCTAssertTrue(ran.value)
        guard case .succeeded? = report[block] else { return XCTFail("\(report.outcomes)") }
        XCTAssertEqual(report.outcomes.count, 2)
    }

    func testRacingCancelPauseAndResumeGiveEachNodeOneOutcomeAndOneCompletion() throws {
        server.respond("/b", body: Data("b".utf8))
        for round in 0..<10 {
            let graph = RequestGraph()
            graph.maxConcurrentRequestCount = 4
            var nodes: [RequestGraphNode] = []
            for index in 0..<12 {
                let request = HTTPRequestOperation(request: URLRequest(url: url("/b")))
                request.completionQueue = .global()
                nodes.append(try graph.add(request, dependencies: index >= 4 ? [nodes[index - 4]] : []))
            }
            let calls = Locked(0)
            let report = Locked<RequestGraphReport?>(nil)
            let done = expectation(description: "round \(round)")
            graph.setCompletionBlock(queue: .global()) { calls.withLock { $0 += 1 }; report.value = $0; done.fulfill() }
            graph.start()
            DispatchQueue.concurrentPerform(iterations: 6) { step in
                switch (step + round) % 3 {
                case 0: graph.pause()
                case 1: graph.resume()
                default: if step == 5 { graph.cancel() } else { graph.resume() }
                }
            }
            graph.resume()
            if round % 2 == 0 { graph.cancel() }
            wait(for: [done], timeout: 20)
            XCTAssertEqual(calls.value, 1)
            XCTAssertEqual(report.value?.outcomes.count, nodes.count)
            XCTAssertEqual(graph.progress.completedUnitCount, Int64(nodes.count), "counted before the completion ran")
        }
    }
}
