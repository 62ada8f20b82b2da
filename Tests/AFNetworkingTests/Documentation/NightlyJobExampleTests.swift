import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

// MARK: - The job of the Request Graphs article ("The nightly job"), as it is written there

private enum NightlyJobError: Error {
    case noToken
    case cannotBuildRequest
}

/// The `Authorization` field made from login's JSON answer, `{"token": "…"}`.
private func authorization(from results: RequestGraphResults, login: RequestGraphNode) throws -> String {
    let answer = (results[login] as? HTTPRequestOperation)?.responseObject as? [String: Any]
    guard let token = answer?["token"] as? String else { throw NightlyJobError.noToken }
    return "Bearer \(token)"
}

/// Log in → fetches built with the token → a fetch that needs another one →
/// large downloads into `directory`. Nothing runs until the graph starts.
private func nightlyJob(api: URL, user: String, password: String, downloadsTo directory: URL) throws -> RequestGraph {
    let manager = HTTPRequestOperationManager(baseURL: api)   // JSON answers: its default response serializer
    manager.requestSerializer = JSONRequestSerializer()       // JSON bodies

    let graph = RequestGraph()
    graph.name = "nightly-sync"
    graph.maxConcurrentRequestCount = 6
    graph.maxConcurrentRequestCountPerHost = 4
    graph.maximumDownloadBytesPerSecond = 8 << 20   // 8 MiB/s for the whole job, downloads together

    // 1. Log in: POST {"user": …, "password": …}, answer {"token": …}.
    guard let loginOperation = manager.httpRequestOperation(withHTTPMethod: "POST", urlString: "session",
                                                            parameters: ["user": user, "password": password],
                                                            success: nil, failure: nil) else {
        throw NightlyJobError.cannotBuildRequest
    }
    let login = try graph.add(loginOperation, name: "login")

    // 2. Fetches that run side by side once login has succeeded, each built from its answer.
    var fetches: [String: RequestGraphNode] = [:]
    for collection in ["customers", "products", "orders", "invoices"] {
        fetches[collection] = try graph.add(name: collection, dependencies: [login]) { results in
            var request = URLRequest(url: api.appendingPathComponent(collection))
            request.setValue(try authorization(from: results, login: login), forHTTPHeaderField: "Authorization")
            return manager.httpRequestOperation(with: request, success: nil, failure: nil)
        }
    }

    // 3. A fetch that needs another one: the order lines after the cursor `orders` returned.
    let orders = fetches["orders"]!
    try graph.add(name: "order-lines", dependencies: [login, orders]) { results in
        let answer = (results[orders] as? HTTPRequestOperation)?.responseObject as? [String: Any]
        var components = URLComponents(url: api.appendingPathComponent("orders/lines"), resolvingAgainstBaseURL: false)
        components?.queryItems = [URLQueryItem(name: "after", value: answer?["cursor"] as? String ?? "")]
        guard let url = components?.url else { throw NightlyJobError.cannotBuildRequest }
        var request = URLRequest(url: url)
        request.setValue(try authorization(from: results, login: login), forHTTPHeaderField: "Authorization")
        return manager.httpRequestOperation(with: request, success: nil, failure: nil)
    }

    // 4. Large downloads, straight to files. A run killed halfway continues them the next night.
    for file in ["customers.csv", "orders.csv", "images.tar"] {
        try graph.add(name: "download \(file)", dependencies: [login]) { results in
            var request = URLRequest(url: api.appendingPathComponent("exports/\(file)"))
            request.setValue(try authorization(from: results, login: login), forHTTPHeaderField: "Authorization")
            return try HTTPRequestOperation(request: request, resumingDownloadTo: directory.appendingPathComponent(file))
        }
    }
    return graph
}

/// One line of the report.
private func describe(_ node: RequestGraphNode, _ outcome: RequestGraphNodeOutcome) -> String {
    switch outcome {
    case .succeeded:
        return "\(node): succeeded"
    case .failed(let error):
        if case .http(let status, _) = error.afnetworking.kind { return "\(node): failed, HTTP \(status)" }
        return "\(node): failed, \(error.afnetworking)"
    case .cancelled:
        return "\(node): cancelled"
    case .skipped(because: let dependency):
        return "\(node): skipped, \(dependency) did not succeed"
    }
}

// MARK: - The API the job talks to

/// The token the stand-in API hands out for `nightly` / `s3cret`, and its answer.
private let nightlyToken = "t-nightly-42"
private let nightlyLoginAnswer = #"{"token":"\#(nightlyToken)"}"#

/// The JSON fetches' answers, by path.
private let nightlyFetches: [String: String] = [
    "/v1/customers": #"{"collection":"customers","count":3}"#,
    "/v1/products": #"{"collection":"products","count":4}"#,
    "/v1/orders": #"{"collection":"orders","count":2,"cursor":"c-17"}"#,
    "/v1/invoices": #"{"collection":"invoices","count":1}"#,
    "/v1/orders/lines": #"{"collection":"order-lines","count":5}"#,
]

/// The exports' bodies: 1, 1.5 and 2 MiB of deterministic bytes.
private let nightlyExports: [String: Data] = [
    "customers.csv": exportBytes(count: 1 << 20, seed: 1),
    "orders.csv": exportBytes(count: 3 << 19, seed: 2),
    "images.tar": exportBytes(count: 2 << 20, seed: 3),
]

/// `count` bytes from a linear congruential generator started at `seed`.
private func exportBytes(count: Int, seed: UInt32) -> Data {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    for index in bytes.indices {
        state = state &* 1_664_525 &+ 1_013_904_223
        bytes[index] = UInt8(truncatingIfNeeded: state >> 24)
    }
    return Data(bytes)
}

/// 200 with `body` for a request that carries the token, else 401 with no body.
private func authorizedAnswer(_ request: ScriptedServer.Request, _ body: Data, type: String) -> [ScriptedServer.Step] {
    guard request.headers["Authorization"] == ["Bearer \(nightlyToken)"] else {
        return [.head(status: 401, headers: [("Content-Length", "0")]), .end]
    }
    return [.head(status: 200, headers: [("Content-Type", type), ("Content-Length", "\(body.count)")]), .body(body), .end]
}

/// The Request Graphs article's nightly job, run against an in-process server
/// on 127.0.0.1 that plays the API: `POST /v1/session` answers a token for
/// the right password (401 otherwise), the fetches and exports answer 401
/// without that token. Prints the report the article shows.
final class NightlyJobExampleTests: OperationTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        server.route("/v1/session") { request in
            let credentials = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: String]
            let accepted = credentials == ["user": "nightly", "password": "s3cret"]
            let body = Data((accepted ? nightlyLoginAnswer : #"{"error":"bad credentials"}"#).utf8)
            return [.head(status: accepted ? 200 : 401, headers: [("Content-Type", "application/json"), ("Content-Length", "\(body.count)")]),
                    .body(body), .end]
        }
        for (path, json) in nightlyFetches {
            server.route(path) { authorizedAnswer($0, Data(json.utf8), type: "application/json") }
        }
        for (file, data) in nightlyExports {
            server.route("/v1/exports/\(file)") { authorizedAnswer($0, data, type: "application/octet-stream") }
        }
    }

    /// A fresh directory for the downloads, removed after the test.
    private func makeDownloadsDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nightly-job-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return directory
    }

    /// The report's lines, in the article's order, then its summary line; printed.
    private func printed(_ report: RequestGraphReport, of graph: RequestGraph) -> [String] {
        var lines = report.outcomes.sorted(by: { $0.key.name < $1.key.name }).map { describe($0.key, $0.value) }
        lines.append("\(report.outcomes.count) nodes, \(graph.countOfBytesReceived) body bytes received")
        for line in lines { print(line) }
        return lines
    }

    /// Every node succeeds; every request after login carries its token; the
    /// order lines were asked for after the cursor `orders` returned; the
    /// downloaded files are byte for byte what the server sent.
    func testTheJobSucceedsAndEveryRequestAfterLoginCarriesTheToken() async throws {
        let downloads = try makeDownloadsDirectory()
        let graph = try nightlyJob(api: server.baseURL.appendingPathComponent("v1/"), user: "nightly", password: "s3cret",
                                   downloadsTo: downloads)
        let report = try await modernBounded(60) { await graph.run() }
        let lines = printed(report, of: graph)

        XCTAssertTrue(report.allSucceeded, lines.joined(separator: "\n"))
        let bodyBytes = nightlyLoginAnswer.utf8.count + nightlyFetches.values.reduce(0) { $0 + $1.utf8.count } + nightlyExports.values.reduce(0) { $0 + $1.count }
        XCTAssertEqual(lines, [
            "customers: succeeded",
            "download customers.csv: succeeded",
            "download images.tar: succeeded",
            "download orders.csv: succeeded",
            "invoices: succeeded",
            "login: succeeded",
            "order-lines: succeeded",
            "orders: succeeded",
            "products: succeeded",
            "9 nodes, \(bodyBytes) body bytes received",
        ])
        XCTAssertEqual(bodyBytes, 4_718_809, "the article quotes this total")

        let requests = server.requests
        XCTAssertEqual(requests.map { "\($0.method) \($0.uri)" }.sorted(), [
            "GET /v1/customers", "GET /v1/exports/customers.csv", "GET /v1/exports/images.tar", "GET /v1/exports/orders.csv",
            "GET /v1/invoices", "GET /v1/orders", "GET /v1/orders/lines?after=c-17", "GET /v1/products", "POST /v1/session",
        ], "each node sent one request; order-lines used the cursor orders returned")
        let login = try XCTUnwrap(requests.first { $0.uri == "/v1/session" })
        XCTAssertEqual((try JSONSerialization.jsonObject(with: login.body)) as? [String: String], ["user": "nightly", "password": "s3cret"])
        for request in requests where request.uri != "/v1/session" {
            XCTAssertEqual(request.headers["Authorization"], ["Bearer \(nightlyToken)"], request.uri)
        }

        for (file, data) in nightlyExports {
            XCTAssertEqual(try Data(contentsOf: downloads.appendingPathComponent(file)) == data, true, "\(file) is byte for byte the export")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: downloads.path).sorted(),
                       ["customers.csv", "images.tar", "orders.csv"], "no partial file or sidecar is left")
    }

    /// The article's completion-block form with a refused password: login
    /// fails, every other node is skipped because of it, and the server sees
    /// no request but the login.
    func testAFailedLoginSkipsEveryDependentAndNothingElseIsSent() throws {
        let downloads = try makeDownloadsDirectory()
        let graph = try nightlyJob(api: server.baseURL.appendingPathComponent("v1/"), user: "nightly", password: "wrong",
                                   downloadsTo: downloads)
        let finished = Locked<RequestGraphReport?>(nil)
        let done = expectation(description: "the graph's completion block")
        graph.setCompletionBlock(queue: DispatchQueue(label: "nightly.report")) { report in
            finished.value = report
            done.fulfill()
        }
        graph.start()
        wait(for: [done], timeout: 30)
        let report = try XCTUnwrap(finished.value)
        let lines = printed(report, of: graph)

        XCTAssertEqual(lines.dropLast(), [
            "customers: skipped, login did not succeed",
            "download customers.csv: skipped, login did not succeed",
            "download images.tar: skipped, login did not succeed",
            "download orders.csv: skipped, login did not succeed",
            "invoices: skipped, login did not succeed",
            "login: failed, HTTP 401",
            "order-lines: skipped, login did not succeed",
            "orders: skipped, login did not succeed",
            "products: skipped, login did not succeed",
        ])
        // The 401's body is held for the challenge decision, not delivered as
        // the transfer's body, so whether the byte count includes it is not
        // what this test is about.
        XCTAssertTrue(lines.last?.hasPrefix("9 nodes, ") ?? false, lines.last ?? "")
        let login = try XCTUnwrap(report.outcomes.keys.first { $0.name == "login" })
        for (node, outcome) in report.outcomes where node != login {
            guard case .skipped(let dependency) = outcome, dependency == login else {
                XCTFail("\(node): \(outcome)")
                continue
            }
        }
        XCTAssertFalse(report.allSucceeded)
        XCTAssertEqual(server.requests.map { "\($0.method) \($0.uri)" }, ["POST /v1/session"], "nothing is sent for a skipped node")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: downloads.path), [], "no download was even opened")
        XCTAssertEqual(graph.progress.totalUnitCount, 9)
        XCTAssertTrue(spin(until: { graph.progress.completedUnitCount == 9 }), "every node counts as done")
    }
}
