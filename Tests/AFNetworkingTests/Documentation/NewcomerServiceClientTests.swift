import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import XCTest

// Issue 17's newcomer, finished: the 2.x-style service client written in
// Swift 6 against httpbin with the API the issue asked for — an interceptor
// that refreshes a bearer token once for many concurrent 401s, per-call
// headers, an Encodable body, a Sendable untyped result, a streamed response,
// an async download cancelled and resumed byte for byte, unenqueued
// operations in a dependency graph and a batch on a queue of its own, and
// the curl command of a request. Only public API; run, not just compiled.

/// Adds the current bearer token to every request; a 401 refreshes it —
/// once, however many requests got the 401 meanwhile — and retries them.
final class NewcomerBearerTokens: RequestInterceptor {
    private struct State {
        var token: String?
        /// Requests waiting for the refresh under way (nil: none is).
        var waiting: [@Sendable (RetryResult) -> Void]?
        var refreshes = 0
    }

    private let state = Mutex(State())
    private let refresh: @Sendable () async throws -> String

    init(refresh: @escaping @Sendable () async throws -> String) {
        self.refresh = refresh
    }

    var refreshCount: Int { state.withLock { $0.refreshes } }

    func adapt(_ urlRequest: URLRequest, completion: @escaping @Sendable (Result<URLRequest, Error>) -> Void) {
        var request = urlRequest
        if let token = state.withLock({ $0.token }) { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        completion(.success(request))
    }

    func retry(_ request: URLRequest, response: HTTPURLResponse?, dueTo error: Error, retryCount: Int,
               completion: @escaping @Sendable (RetryResult) -> Void) {
        guard response?.statusCode == 401, retryCount == 0 else { return completion(.doNotRetry) }
        let sent = request.value(forHTTPHeaderField: "Authorization")
        enum Next { case retryNow, wait, startRefresh }
        let next = state.withLock { state -> Next in
            // Refreshed since this request was sent: its retry carries the new token.
            if let token = state.token, sent != "Bearer \(token)" { return .retryNow }
            if state.waiting != nil { state.waiting?.append(completion); return .wait }
            state.waiting = [completion]
            state.refreshes += 1
            return .startRefresh
        }
        switch next {
        case .retryNow: completion(.retry)
        case .wait: break
        case .startRefresh:
            Task {
                let outcome: RetryResult
                do {
                    let token = try await refresh()
                    state.withLock { $0.token = token }
                    outcome = .retry
                } catch {
                    outcome = .doNotRetryWithError(error)
                }
                let waiters = state.withLock { state -> [@Sendable (RetryResult) -> Void] in
                    defer { state.waiting = nil }
                    return state.waiting ?? []
                }
                for waiter in waiters { waiter(outcome) }
            }
        }
    }
}

/// What the service posts.
struct NewcomerOrder: Encodable, Sendable {
    let id: Int
    let note: String
}

/// The service client: the session manager for async calls, the operation
/// manager for graphs and batches, one interceptor for both.
final class NewcomerServiceClient: Sendable {
    let api: HTTPSessionManager
    let operations: HTTPRequestOperationManager
    let tokens: NewcomerBearerTokens

    init(baseURL: URL) {
        let refresher = HTTPSessionManager(baseURL: baseURL)
        refresher.completionQueue = DispatchQueue(label: "newcomer.refresh")
        tokens = NewcomerBearerTokens {
            // httpbin's /uuid stands in for the token endpoint.
            let answer = try await refresher.get("uuid", parameters: nil, as: JSONValue.self)
            guard case .string(let token)? = answer["uuid"] else { throw URLError(.cannotParseResponse) }
            return token
        }
        api = HTTPSessionManager(baseURL: baseURL)
        api.completionQueue = DispatchQueue(label: "newcomer.api")
        api.requestInterceptor = tokens
        operations = HTTPRequestOperationManager(baseURL: baseURL)
        operations.completionQueue = DispatchQueue(label: "newcomer.operations")
        operations.requestInterceptor = tokens
    }
}

final class NewcomerServiceClientTests: XCTestCase {
    private var httpbin: URL!

    override func setUpWithError() throws {
        httpbin = try SharedServers.httpbin().baseURL
    }

    func testTheNewcomersServiceClientEndToEnd() async throws {
        let client = NewcomerServiceClient(baseURL: httpbin)

        // Five concurrent calls to an endpoint that wants a bearer token: one refresh, five answers.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<5 {
                group.addTask { (try await client.api.get("bearer", parameters: nil, as: JSONValue.self))["authenticated"] == .bool(true) ? 1 : 0 }
            }
            var authenticated = 0
            for try await one in group { authenticated += one }
            XCTAssertEqual(authenticated, 5)
        }
        XCTAssertEqual(client.tokens.refreshCount, 1, "one refresh for five concurrent 401s")

        // An Encodable body with a per-call header, the answer as a Sendable value.
        let echo = try await client.api.post("post", parameters: NewcomerOrder(id: 1, note: "x"), encoder: JSONParameterEncoder.default,
                                             headers: ["X-Trace": "t-1"], as: JSONValue.self)
        XCTAssertEqual(echo["json"]?["note"], .string("x"))
        XCTAssertEqual(echo["headers"]?["X-Trace"], .string("t-1"))

        // A streamed response, chunk by chunk.
        let (bytes, response) = try await client.api.bytes("stream-bytes/100000", parameters: ["seed": "7", "chunk_size": "4096"])
        XCTAssertEqual(response.statusCode, 200)
        var received = 0
        for try await chunk in bytes { received += chunk.count }
        XCTAssertEqual(received, 100_000)

        // A slow download, cancelled through its Task and resumed byte for byte.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("newcomer-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: file) }
        let total = 102_400   // httpbin serves at most 100 KiB
        let reports = Mutex(0)
        // The partial file (documented: AFNetworking-Download-*.tmp in the temporary directory) with bytes on disk.
        let temporary = NSTemporaryDirectory()
        let partialFiles = { () -> [String: Int] in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
            var sizes: [String: Int] = [:]
            for name in names where name.hasPrefix("AFNetworking-Download-") {
                let size = (try? FileManager.default.attributesOfItem(atPath: temporary + "/" + name)[.size] as? NSNumber)?.intValue
                sizes[name] = size ?? 0
            }
            return sizes
        }
        let before = Set(partialFiles().keys)
        let slow = URLRequest(url: URL(string: "range/\(total)?duration=4", relativeTo: httpbin)!.absoluteURL)
        let download = Task {
            try await client.api.download(for: slow, to: file) { _ in reports.withLock { $0 += 1 } }
        }
        let deadline = Date().addingTimeInterval(10)
        while !partialFiles().contains(where: { !before.contains($0.key) && $0.value > 0 }), Date() < deadline {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        download.cancel()
        var resumeData: Data?
        do {
            _ = try await download.value
            XCTFail("cancelled")
        } catch let error as URLError where error.code == .cancelled {
            resumeData = error.downloadTaskResumeData
        }
        let data = try XCTUnwrap(resumeData, "a cancelled download hands out its resume data")
        XCTAssertGreaterThan(reports.withLock { $0 }, 0, "progress was reported")
        _ = try await client.api.download(resumeFrom: data, to: file)
        let expected = Data((0..<total).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        XCTAssertEqual(try Data(contentsOf: file), expected)

        // 2.x style: unenqueued operations in a graph, then a batch on a queue of its own.
        let queue = OperationQueue()
        let token = Mutex<String?>(nil)
        let first = try XCTUnwrap(client.operations.httpRequestOperation(withHTTPMethod: "GET", urlString: "uuid", parameters: nil,
                                                                          success: { _, json in
            token.withLock { $0 = (json as? [String: Any])?["uuid"] as? String }
        }, failure: nil))
        XCTAssertTrue(first.cURLDescription().contains("/uuid"), first.cURLDescription())
        let echoed = Mutex<String?>(nil)
        // Built when it runs: the first operation is finished only after its success block stored the token.
        let second = BlockOperation {
            let sent = token.withLock { $0 } ?? "none"
            let dependent = client.operations.httpRequestOperation(withHTTPMethod: "GET", urlString: "headers", parameters: nil,
                                                                   headers: ["X-Previous": sent], success: { _, json in
                echoed.withLock { $0 = ((json as? [String: Any])?["headers"] as? [String: Any])?["X-Previous"] as? String }
            }, failure: nil)
            dependent.map { queue.addOperation($0) }
        }
        second.addDependency(first)
        queue.addOperation(first)
        queue.addOperation(second)
        let batchQueue = DispatchQueue(label: "newcomer.batch")
        let parts = (0..<3).compactMap { client.operations.httpRequestOperation(withHTTPMethod: "GET", urlString: "get", parameters: ["n": "\($0)"],
                                                                                success: nil, failure: nil) }
        let finished: Int = await withCheckedContinuation { continuation in
            let batch = URLConnectionOperation.batch(ofRequestOperations: parts, progressBlock: nil, completionQueue: batchQueue) { operations in
                continuation.resume(returning: operations.filter { $0.error == nil }.count)
            }
            queue.addOperations(batch, waitUntilFinished: false)
        }
        XCTAssertEqual(finished, 3)
        let graphDeadline = Date().addingTimeInterval(10)
        while echoed.withLock({ $0 }) == nil, Date() < graphDeadline { try await Task.sleep(nanoseconds: 20_000_000) }
        XCTAssertNotNil(token.withLock { $0 })
        XCTAssertEqual(echoed.withLock { $0 }, token.withLock { $0 }, "the dependent sent what the first operation got")
    }
}
