@testable import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The network thread runs curl and the engine only: callers' streams,
/// throttles and blocks run elsewhere, and a slow stream holds back its own
/// transfer (curl pause) instead of the thread or memory.
final class OffNetworkThreadTests: OperationTestCase {
    func testCallerStreamsAreReadAndWrittenOffTheNetworkThread() {
        let body = Data(repeating: 3, count: 300_000)
        server.route("/echo") { request in
            [.head(status: 200, headers: [("Content-Length", "\(request.body.count)")]), .body(request.body), .end]
        }
        var request = request("/echo", method: "POST")
        let input = RecordingInputStream(data: body)
        request.httpBodyStream = input
        request.setValue("\(body.count)", forHTTPHeaderField: "Content-Length")
        let operation = HTTPRequestOperation(request: request)
        let output = RecordingOutputStream()
        operation.outputStream = output
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(output.data, body)
        XCTAssertFalse(input.threads.value.isEmpty)
        XCTAssertFalse(output.threads.value.isEmpty)
        XCTAssertFalse(input.threads.value.contains("AFNetworking"), "InputStream.read ran on the network thread")
        XCTAssertFalse(output.threads.value.contains("AFNetworking"), "OutputStream.write ran on the network thread")
    }

    func testASlowOutputStreamPausesItsTransferAndKeepsMemoryBounded() {
        let size = 24 << 20
        server.route("/big") { _ in
            [.head(status: 200, headers: [("Content-Length", "\(size)")]), .body(Data(repeating: 9, count: size)), .end]
        }
        let operation = HTTPRequestOperation(request: request("/big", timeout: 30))
        let output = RecordingOutputStream(delayPerWrite: 0.002, keepsData: false)
        operation.outputStream = output
        let outcome = run(operation, timeout: 60)
        XCTAssertNil(outcome.error)
        XCTAssertEqual(output.byteCount.value, size)
        let peak = operation.driver.writer?.peakPendingBytes ?? 0
        XCTAssertGreaterThan(peak, 0)
        XCTAssertLessThanOrEqual(peak, ResponseBodyWriter.highWater + (512 << 10),
                                 "the writer held \(peak) bytes: back-pressure did not pause the transfer")
    }

    func testAThrottledUploadDoesNotHoldUpOtherRequests() throws {
        server.route("/upload") { _ in [.head(status: 200, headers: [("Content-Length", "0")]), .end] }
        server.respond("/quick", body: Data("q".utf8))
        // 40 packets of 1 KiB, 1.5 s apart: about 60 s of upload, more than the
        // ten GETs can take (5 s each at most, else they fail on their own), so
        // they end first however slow the machine; the upload is cancelled once
        // they have, so the test never waits for it.
        let request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/upload").absoluteString,
                                                                       parameters: nil) { form in
            form.appendPart(withFileData: Data(repeating: 1, count: 40 << 10), name: "f", fileName: "f.bin", mimeType: "application/octet-stream")
            form.throttleBandwidth(withPacketSize: 1024, delay: 1.5)
        }
        let upload = HTTPRequestOperation(request: request)
        let uploadDone = Locked(false), uploadSending = Locked(false)
        upload.completionQueue = DispatchQueue(label: "upload")
        upload.setUploadProgressBlock { _, _, _ in uploadSending.value = true }
        upload.setCompletionBlockWithSuccess({ _, _ in uploadDone.value = true }, failure: { _, _ in uploadDone.value = true })
        upload.start()
        // The GETs go while the throttled upload is under way, not before it started.
        XCTAssertTrue(spin { uploadSending.value }, "the upload sent nothing")
        for _ in 0..<10 {
            let outcome = run(HTTPRequestOperation(request: self.request("/quick")), timeout: 5)
            XCTAssertNil(outcome.error)
        }
        XCTAssertFalse(uploadDone.value, "the ten GETs finished while the throttled upload was still running")
        XCTAssertFalse(server.requests.contains { $0.uri == "/upload" }, "the upload's body was still being sent")
        upload.cancel()
        XCTAssertTrue(spin { upload.isFinished })
    }

    func testTheThrottleSpacesPacketsWithoutLosingBytes() throws {
        server.route("/upload") { request in
            [.head(status: 200, headers: [("Content-Length", "\(request.body.count)")]), .body(request.body), .end]
        }
        let payload = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0) })
        let request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url("/upload").absoluteString,
                                                                       parameters: nil) { form in
            form.appendPart(withFileData: payload, name: "f", fileName: "f.bin", mimeType: "application/octet-stream")
            form.throttleBandwidth(withPacketSize: 1024, delay: 0.1)
        }
        let operation = HTTPRequestOperation(request: request)
        let started = Date()
        let outcome = run(operation, timeout: 30)
        XCTAssertNil(outcome.error)
        // At least 8 packets 0.1 s apart: the throttle cannot be faster than its timer.
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.7)
        let echoed = try XCTUnwrap(operation.responseData)
        XCTAssertNotNil(echoed.range(of: payload), "every byte of the part arrived, in order")
    }

    func testUserBlocksNeverRunOnTheNetworkThread() {
        let body = Data(repeating: 5, count: 200_000)
        server.route("/r") { _ in [.head(status: 302, headers: [("Location", "/a"), ("Content-Length", "0")]), .end] }
        server.route("/a") { request in
            if request.headers.first(name: "authorization") == nil {
                return [.head(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"r\""), ("Content-Length", "0")]), .end]
            }
            return [.head(status: 200, headers: [("Content-Length", "\(body.count)"), ("Cache-Control", "max-age=60")]), .body(body), .end]
        }
        server.route("/up") { _ in [.head(status: 200, headers: [("Content-Length", "0")]), .end] }
        let threads = Locked<[String]>([])
        let record: @Sendable (String) -> Void = { label in threads.withLock { $0.append("\(label):\(Thread.current.name ?? "?")") } }
        var upload = request("/up", method: "POST")
        upload.httpBody = Data(repeating: 1, count: 300_000)
        let uploading = HTTPRequestOperation(request: upload)
        uploading.setUploadProgressBlock { _, _, _ in record("upload") }
        uploading.completionQueue = DispatchQueue(label: "completion")
        XCTAssertNil(run(uploading).error)

        let cache = URLCache(memoryCapacity: 4 << 20, diskCapacity: 0, diskPath: nil)
        let previous = URLCache.shared
        URLCache.shared = cache
        defer { URLCache.shared = previous }
        let operation = HTTPRequestOperation(request: request("/r"))
        operation.setDownloadProgressBlock { _, _, _ in record("download") }
        operation.setRedirectResponseBlock { _, next, _ in record("redirect"); return next }
        operation.setWillSendRequestForAuthenticationChallengeBlock { operation, challenge in
            record("challenge")
            operation.use(URLCredential(user: "u", password: "p", persistence: .none), for: challenge)
        }
        operation.completionQueue = DispatchQueue(label: "completion")
        let outcome = run(operation)
        XCTAssertNil(outcome.error)
        // An answer earned with a challenge credential is not stored: the
        // cache block is asked about a plain one.
        server.route("/c") { _ in [.head(status: 200, headers: [("Content-Length", "1"), ("Cache-Control", "max-age=60")]), .body(Data("c".utf8)), .end] }
        let cached = HTTPRequestOperation(request: request("/c"))
        cached.setCacheResponseBlock { _, _ in record("cache"); return nil }
        cached.completionQueue = DispatchQueue(label: "completion")
        XCTAssertNil(run(cached).error)
        let labels = Set(threads.value.map { $0.split(separator: ":")[0] })
        XCTAssertEqual(labels, ["upload", "download", "redirect", "challenge", "cache"], "\(threads.value)")
        XCTAssertFalse(threads.value.contains { $0.hasSuffix(":AFNetworking") }, "\(threads.value)")
    }
}

/// An input stream that notes the thread of every read.
final class RecordingInputStream: InputStream {
    private let inner: InputStream
    let threads = Locked<Set<String>>([])

    override init(data: Data) {
        inner = InputStream(data: data)
        super.init(data: Data())
    }

    override func open() { inner.open() }
    override func close() { inner.close() }
    override var streamStatus: Stream.Status { inner.streamStatus }
    override var streamError: Error? { inner.streamError }
    override var hasBytesAvailable: Bool { inner.hasBytesAvailable }
    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        threads.withLock { _ = $0.insert(Thread.current.name ?? "") }
        return inner.read(buffer, maxLength: len)
    }
}

/// An output stream that notes the thread of every write, optionally slowly.
final class RecordingOutputStream: OutputStream {
    let threads = Locked<Set<String>>([])
    let byteCount = Locked(0)
    private let collected = Locked(Data())
    private let delayPerWrite: TimeInterval
    private let keepsData: Bool
    private let status = Locked(Stream.Status.notOpen)

    init(delayPerWrite: TimeInterval = 0, keepsData: Bool = true) {
        self.delayPerWrite = delayPerWrite
        self.keepsData = keepsData
        super.init(toMemory: ())
    }

    required init(toMemory: ()) {
        delayPerWrite = 0
        keepsData = true
        super.init(toMemory: ())
    }

    var data: Data { collected.value }

    override func open() { status.value = .open }
    override func close() { status.value = .closed }
    override var streamStatus: Stream.Status { status.value }
    override var hasSpaceAvailable: Bool { true }
    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }
    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        threads.withLock { _ = $0.insert(Thread.current.name ?? "") }
        if delayPerWrite > 0 { Thread.sleep(forTimeInterval: delayPerWrite) }
        if keepsData { collected.withLock { $0.append(buffer, count: len) } }
        byteCount.withLock { $0 += len }
        return len
    }
}
