@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Range requests and 206s against the cache (RFC 9110 §14, §13.1.5;
/// RFC 9111 §3.3, §3.4, §4), from the RFCs' text: a scripted server that
/// counts requests, so a test sees whether an answer came from the cache.
final class HTTPCachingRangeTests: SessionTasksTestCase {
    private static let alphabet = Data("abcdefghijklmnopqrstuvwxyz".utf8)

    private func count(_ path: String) -> Int { server.requests.filter { $0.uri == path }.count }

    /// The alphabet as a complete 200; a request with Range gets a 206 the
    /// server cuts itself (`X-From: server`), so a forwarded range is visible.
    private func routeAlphabet(_ path: String, headers: [(String, String)]) {
        server.route(path) { request in
            let body = Self.alphabet
            if let range = request.headers.first(name: "range"), let bounds = Self.serverBounds(range, length: body.count) {
                let part = body.subdata(in: Int(bounds.lowerBound)..<Int(bounds.upperBound + 1))
                return [.head(status: 206, headers: headers + [("X-From", "server"), ("Content-Length", "\(part.count)"),
                                                               ("Content-Range", "bytes \(bounds.lowerBound)-\(bounds.upperBound)/\(body.count)")]),
                        .body(part), .end]
            }
            return [.head(status: 200, headers: headers + [("X-From", "server"), ("Content-Length", "\(body.count)")]), .body(body), .end]
        }
    }

    /// The server's own reading of one `bytes=` range (nil: it sends the whole).
    private static func serverBounds(_ field: String, length: Int) -> ClosedRange<Int>? {
        guard field.hasPrefix("bytes="), !field.contains(",") else { return nil }
        let parts = field.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
        guard parts.count == 2 else { return nil }
        switch (parts[0], parts[1]) {
        case (let first?, let last?) where first <= last && first < length: return first...min(last, length - 1)
        case (let first?, nil) where first < length: return first...(length - 1)
        case (nil, let suffix?) where suffix > 0: return max(0, length - suffix)...(length - 1)
        default: return nil
        }
    }

    @discardableResult
    private func fetch(_ path: String, headers: [String: String] = [:]) -> HTTPRequestOperation {
        var request = self.request(path)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let operation = HTTPRequestOperation(request: request)
        operation.responseSerializer.acceptableStatusCodes = nil
        XCTAssertNil(run(operation).error)
        return operation
    }

    private func assertPartial(_ operation: HTTPRequestOperation, _ body: String, range: String, total: Int = 26,
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(operation.response?.statusCode, 206, file: file, line: line)
        XCTAssertEqual(operation.responseString, body, file: file, line: line)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Range"), "bytes \(range)/\(total)", file: file, line: line)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "Content-Length"), "\(body.utf8.count)", file: file, line: line)
    }

    // MARK: - RFC 9110 §14: ranges cut from a stored complete entity

    func testSingleRangesAreCutFromTheStoredEntity() {
        routeAlphabet("/abc", headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")])
        XCTAssertEqual(fetch("/abc").response?.statusCode, 200)
        assertPartial(fetch("/abc", headers: ["Range": "bytes=2-5"]), "cdef", range: "2-5")
        assertPartial(fetch("/abc", headers: ["Range": "bytes=-3"]), "xyz", range: "23-25")
        assertPartial(fetch("/abc", headers: ["Range": "bytes=-100"]), "abcdefghijklmnopqrstuvwxyz", range: "0-25")
        assertPartial(fetch("/abc", headers: ["Range": "bytes=0-"]), "abcdefghijklmnopqrstuvwxyz", range: "0-25")
        assertPartial(fetch("/abc", headers: ["Range": "bytes=24-100"]), "yz", range: "24-25", total: 26)
        assertPartial(fetch("/abc", headers: ["Range": "Bytes=1-1"]), "b", range: "1-1")
        XCTAssertEqual(count("/abc"), 1, "every range came from the stored entity")
        let cut = fetch("/abc", headers: ["Range": "bytes=2-5"])
        XCTAssertNotNil(cut.response?.value(forHTTPHeaderField: "Age"), "a cut answer is a hit: it carries Age")
        XCTAssertEqual(cut.response?.value(forHTTPHeaderField: "ETag"), "\"v1\"", "the 200's validator stays")
        let whole = fetch("/abc")
        XCTAssertEqual(whole.response?.statusCode, 200, "the stored entity is still the whole 200")
        XCTAssertEqual(whole.responseString, "abcdefghijklmnopqrstuvwxyz")
        XCTAssertNil(whole.response?.value(forHTTPHeaderField: "Content-Range"))
    }

    /// RFC 9110 §13.1.5: a strong tag or the exact Last-Modified (strong:
    /// a minute or more before the entry's Date, §8.8.2.2) gets the range;
    /// anything else (a weak tag, another tag or date) the whole entity.
    func testIfRangeGetsTheRangeOnlyForTheStoredRepresentation() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let now = Date()
        let date = formatter.string(from: now)
        let modified = formatter.string(from: now.addingTimeInterval(-120))
        let recently = formatter.string(from: now.addingTimeInterval(-30))
        routeAlphabet("/ifrange", headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\""), ("Last-Modified", modified),
                                            ("Date", date)])
        routeAlphabet("/weakdate", headers: [("Cache-Control", "max-age=3600"), ("Last-Modified", recently), ("Date", date)])
        fetch("/weakdate")
        let weak = fetch("/weakdate", headers: ["Range": "bytes=0-1", "If-Range": recently])
        XCTAssertEqual(weak.response?.statusCode, 200, "changed 30 s before its Date: a weak validator")
        XCTAssertEqual(weak.responseString, "abcdefghijklmnopqrstuvwxyz")
        XCTAssertEqual(count("/weakdate"), 1)
        fetch("/ifrange")
        assertPartial(fetch("/ifrange", headers: ["Range": "bytes=0-1", "If-Range": "\"v1\""]), "ab", range: "0-1")
        assertPartial(fetch("/ifrange", headers: ["Range": "bytes=0-1", "If-Range": modified]), "ab", range: "0-1")
        for other in ["\"v2\"", "W/\"v1\"", formatter.string(from: now.addingTimeInterval(-121))] {
            let whole = fetch("/ifrange", headers: ["Range": "bytes=0-1", "If-Range": other])
            XCTAssertEqual(whole.response?.statusCode, 200, other)
            XCTAssertEqual(whole.responseString, "abcdefghijklmnopqrstuvwxyz", other)
        }
        XCTAssertEqual(count("/ifrange"), 1)
    }

    /// A session data task's range is cut from its configuration's cache.
    func testASessionTasksRangeIsCutFromItsConfigurationsCache() {
        routeAlphabet("/session", headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("afn-range-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let configuration = URLSessionConfiguration.default
        configuration.urlCache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 16 << 20, diskPath: directory.path)
        let manager = makeManager(configuration: configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        var bodies: [String] = []
        var heads: [HTTPURLResponse?] = []
        for range in [nil, "bytes=10-12"] {
            var request = self.request("/session")
            request.setValue(range, forHTTPHeaderField: "Range")
            let probe = makeProbe()
            let task = manager.dataTask(with: request, uploadProgress: nil, downloadProgress: nil, completionHandler: probe.data)
            let outcome = run(task, probe)
            bodies.append((outcome.object as? Data).map { String(decoding: $0, as: UTF8.self) } ?? "-")
            heads.append(task.response as? HTTPURLResponse)
        }
        XCTAssertEqual(bodies, ["abcdefghijklmnopqrstuvwxyz", "klm"])
        XCTAssertEqual(heads[1]?.statusCode, 206)
        XCTAssertEqual(heads[1]?.value(forHTTPHeaderField: "Content-Range"), "bytes 10-12/26")
        XCTAssertEqual(count("/session"), 1)
    }

    /// What the cache cannot answer goes to the server: an unsatisfiable
    /// range (the cache invents no 416), several ranges, another unit, a
    /// malformed field, and the resume form `bytes=N-`.
    func testRangesTheCacheCannotAnswerGoToTheServer() {
        routeAlphabet("/forward", headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")])
        fetch("/forward")
        var sent = 1
        for range in ["bytes=100-200", "bytes=0-1,4-5", "lines=1-2", "bytes=5-2", "bytes=-0", "bytes=3-"] {
            let operation = fetch("/forward", headers: ["Range": range])
            sent += 1
            XCTAssertEqual(count("/forward"), sent, "\(range) went to the server")
            XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "X-From"), "server", range)
            XCTAssertEqual(server.requests.last?.headers.first(name: "range"), range, "forwarded as written")
        }
        XCTAssertEqual(fetch("/forward").responseString, "abcdefghijklmnopqrstuvwxyz", "the partial answers replaced nothing")
        XCTAssertEqual(count("/forward"), sent)
    }

    /// A content-coded entity is stored decoded: its offsets are not the
    /// stored bytes', so the server cuts the range.
    func testAContentCodedEntityIsNotCut() throws {
        let gzipped = try GzipCommand.compress(Self.alphabet)
        server.route("/coded") { request in
            if request.headers.first(name: "range") != nil {
                return [.head(status: 206, headers: [("Content-Range", "bytes 0-1/\(gzipped.count)"), ("Content-Length", "2")]),
                        .body(gzipped.prefix(2)), .end]
            }
            // Chunked: no Content-Length to give the coding away.
            return [.head(status: 200, headers: [("Cache-Control", "max-age=3600"), ("Content-Encoding", "gzip")]), .body(gzipped), .end]
        }
        XCTAssertEqual(fetch("/coded").responseString, "abcdefghijklmnopqrstuvwxyz")
        let ranged = fetch("/coded", headers: ["Range": "bytes=0-1"])
        XCTAssertEqual(count("/coded"), 2)
        XCTAssertEqual(ranged.response?.value(forHTTPHeaderField: "Content-Range"), "bytes 0-1/\(gzipped.count)")
    }

    /// RFC 9111 §4: a stale entity is not reused; the range goes to the
    /// server unconditionally (a 304 would confirm the whole, not the part).
    func testAStaleEntityForwardsTheRangeUnconditionally() {
        routeAlphabet("/stale", headers: [("Cache-Control", "max-age=1"), ("Age", "100"), ("ETag", "\"v1\"")])
        fetch("/stale")
        let operation = fetch("/stale", headers: ["Range": "bytes=0-1"])
        XCTAssertEqual(count("/stale"), 2)
        XCTAssertEqual(operation.response?.statusCode, 206)
        XCTAssertEqual(operation.response?.value(forHTTPHeaderField: "X-From"), "server")
        XCTAssertNil(server.requests.last?.headers.first(name: "if-none-match"))
    }

    /// A restart-proof download holding 40 bytes of representation v1 while
    /// the cache holds a fresh, complete v2: its `bytes=40-` / `If-Range: v1`
    /// goes to the server, so v2's bytes are never spliced after v1's.
    func testAResumedDownloadIsNeverAnsweredFromTheCache() throws {
        let first = Data((0..<100).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let second = Data((0..<100).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) })
        server.route("/download") { request in
            if request.headers.first(name: "range") == "bytes=40-", request.headers.first(name: "if-range") == "\"v1\"" {
                return [.head(status: 206, headers: [("ETag", "\"v1\""), ("Content-Range", "bytes 40-99/100"), ("Content-Length", "60")]),
                        .body(first.suffix(60)), .end]
            }
            return [.head(status: 200, headers: [("ETag", "\"v2\""), ("Cache-Control", "max-age=3600"), ("Content-Length", "100")]),
                    .body(second), .end]
        }
        XCTAssertEqual(fetch("/download").responseData, second, "v2 is stored, fresh")
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("afn-range-resume-\(UUID().uuidString).bin")
        let partial = URL(fileURLWithPath: destination.path + ".partial")
        let sidecar = URL(fileURLWithPath: destination.path + ".partial.json")
        addTeardownBlock {
            for url in [destination, partial, sidecar] { try? FileManager.default.removeItem(at: url) }
        }
        try first.prefix(40).write(to: partial)
        let record = ["url": url("/download").absoluteString, "etag": "\"v1\"", "expectedLength": 100] as [String: Any]
        try JSONSerialization.data(withJSONObject: record).write(to: sidecar)
        let operation = try HTTPRequestOperation(request: request("/download"), resumingDownloadTo: destination)
        XCTAssertNil(run(operation).error)
        XCTAssertEqual(count("/download"), 2, "the resume went to the server")
        XCTAssertEqual(server.requests.last?.headers.first(name: "range"), "bytes=40-")
        XCTAssertEqual(try Data(contentsOf: destination), first, "v1 completed, nothing of v2 in it")
    }

    /// An operation paused mid-entity and resumed without `Range` (a plain
    /// `URLConnectionOperation`) whose URL meanwhile got a fresh stored
    /// entity: its file holds that entity once, not the pre-pause bytes
    /// followed by the cached entity.
    func testAResumeWithoutRangeAnsweredFromTheCacheStartsTheFileOver() throws {
        let entity = Data((0..<4_000).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        let answered = Locked(0)
        server.route("/paused") { _ in
            if answered.increment() == 1 {
                return [.head(status: 200, headers: [("Content-Length", "\(entity.count)")]), .body(entity.prefix(1_000)), .wait(30)]
            }
            return [.head(status: 200, headers: [("Cache-Control", "max-age=3600"), ("Content-Length", "\(entity.count)")]),
                    .body(entity), .end]
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("afn-range-paused-\(UUID().uuidString).bin")
        addTeardownBlock { try? FileManager.default.removeItem(at: file) }
        let operation = URLConnectionOperation(request: request("/paused"))
        operation.outputStream = OutputStream(toFileAtPath: file.path, append: false)
        let paused = Locked(false)
        operation.setDownloadProgressBlock { [weak operation] _, total, _ in
            if total >= 1_000 && paused.setOnce() { operation?.pause() }
        }
        let finished = Locked(false)
        operation.completionBlock = { finished.value = true }
        operation.start()
        XCTAssertTrue(spin(until: { operation.isPaused }))
        XCTAssertEqual(fetch("/paused").responseData, entity, "the entity is stored, fresh")
        operation.resume()
        XCTAssertTrue(spin(until: { finished.value && operation.isFinished }, timeout: 20))
        XCTAssertNil(operation.error)
        XCTAssertEqual(try Data(contentsOf: file), entity)
    }

    // MARK: - RFC 9111 §3.3, §3.4: 206s

    /// A 206 holding the whole representation is stored as its 200; a plain
    /// request gets that 200, never a 206.
    func testAWhole206IsStoredAsTheComplete200() {
        routeAlphabet("/whole", headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")])
        assertPartial(fetch("/whole", headers: ["Range": "bytes=0-"]), "abcdefghijklmnopqrstuvwxyz", range: "0-25")
        XCTAssertEqual(count("/whole"), 1)
        let plain = fetch("/whole")
        XCTAssertEqual(count("/whole"), 1, "answered from the stored 206")
        XCTAssertEqual(plain.response?.statusCode, 200)
        XCTAssertNil(plain.response?.value(forHTTPHeaderField: "Content-Range"))
        XCTAssertEqual(plain.response?.value(forHTTPHeaderField: "Content-Length"), "26")
        XCTAssertEqual(plain.responseString, "abcdefghijklmnopqrstuvwxyz")
        assertPartial(fetch("/whole", headers: ["Range": "bytes=3-4"]), "de", range: "3-4")
        XCTAssertEqual(count("/whole"), 1)
    }

    /// Partial content is neither stored nor combined, and never answers a
    /// request that did not ask for a range.
    func testAPartial206IsNotStored() {
        routeAlphabet("/part", headers: [("Cache-Control", "max-age=3600"), ("ETag", "\"v1\"")])
        fetch("/part", headers: ["Range": "bytes=0-12"])
        fetch("/part", headers: ["Range": "bytes=13-25"])
        XCTAssertEqual(count("/part"), 2)
        fetch("/part", headers: ["Range": "bytes=0-12"])
        XCTAssertEqual(count("/part"), 3, "a part is not stored")
        let plain = fetch("/part")
        XCTAssertEqual(count("/part"), 4, "nor are two parts combined")
        XCTAssertEqual(plain.response?.statusCode, 200)
    }

    /// nginx's own 206 for `bytes=0-` of a static file (ETag, Last-Modified,
    /// heuristic freshness only) is stored as the file's 200: a plain GET is
    /// answered from it — a hit, or a 304 revalidation — never by a full GET.
    func testNginxsWhole206IsStoredAsTheFilesComplete200() throws {
        let nginx = try SharedServers.nginx()
        let token = UUID().uuidString
        let file = try XCTUnwrap(URL(string: "/1k.bin?t=\(token)", relativeTo: nginx.httpURL)?.absoluteURL)
        func get(_ url: URL, range: String? = nil) -> HTTPRequestOperation {
            var request = URLRequest(url: url)
            request.setValue(range, forHTTPHeaderField: "Range")
            let operation = HTTPRequestOperation(request: request)
            XCTAssertNil(run(operation).error)
            return operation
        }
        let ranged = get(file, range: "bytes=0-")
        XCTAssertEqual(ranged.response?.statusCode, 206)
        XCTAssertEqual(ranged.response?.value(forHTTPHeaderField: "Content-Range"), "bytes 0-1023/1024")
        let plain = get(file)
        XCTAssertEqual(plain.response?.statusCode, 200)
        XCTAssertNil(plain.response?.value(forHTTPHeaderField: "Content-Range"))
        XCTAssertEqual(plain.responseData, Data(repeating: UInt8(ascii: "a"), count: 1024))
        // A later request's log line: every earlier one is in the log by then.
        _ = get(try XCTUnwrap(URL(string: "/1k.bin?t=\(token)-end", relativeTo: nginx.httpURL)?.absoluteURL))
        XCTAssertTrue(nginx.logShows("/1k.bin?t=\(token)-end"))
        let lines = nginx.accessLog.split(separator: "\n").filter { $0.contains("/1k.bin?t=\(token) ") }
        XCTAssertTrue(lines.first?.contains("\" 206 ") ?? false, String(describing: lines.first))
        XCTAssertFalse(lines.dropFirst().contains { $0.contains("\" 200 ") }, "no full GET: \(lines)")
    }

    /// A 206 that only claims to be whole (its length disagrees) is not stored.
    func testA206WhoseLengthDisagreesIsNotStored() {
        server.route("/liar") { _ in
            [.head(status: 206, headers: [("Cache-Control", "max-age=3600"), ("Content-Range", "bytes 0-25/26"), ("Content-Length", "4")]),
             .body(Data("abcd".utf8)), .end]
        }
        fetch("/liar", headers: ["Range": "bytes=0-"])
        fetch("/liar")
        XCTAssertEqual(count("/liar"), 2)
    }
}
