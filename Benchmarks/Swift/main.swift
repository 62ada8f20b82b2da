import AFNetworking
import CAFSystem
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The Swift side of `make bench`: the same workloads as Benchmarks/C/baseline.c,
// through HTTPRequestOperation on an OperationQueue. One line of key=value
// figures per run, parsed by scripts/bench.py.
//
// Requests are written as users write them — `URLRequest(url:)`, the default
// cache policy and `URLCache.shared` — unless `bypass` is given, which sets
// `.reloadIgnoringLocalAndRemoteCacheData` as the C baseline (it has no cache).
//
//   afn-bench s1 URL COUNT CONCURRENCY [bypass]
//   afn-bench s2 URL COUNT [bypass]
//   afn-bench s3 URL FILE
//   afn-bench s4 URL FILE                  (multipart upload of FILE)
//   afn-bench s5 URL UPLOAD_URL COUNT      (GET latency idle, then while a throttled upload runs)
//   afn-bench s6 URL COUNT CONCURRENCY CA  (HTTPS, CA — a DER file — trusted through SecurityPolicy.additionalTrustedCertificates)
//   afn-bench idle URL                     (peak RSS of the program having done nothing)
//   afn-bench soak URL COUNT               (resident memory over COUNT GETs of 1 KiB–8 MiB bodies, URL/soak-*.bin)
//   afn-bench queue-scale URL COUNT        (memory per queued operation: COUNT handed to a suspended queue)
//   afn-bench kept-scale URL COUNT         (memory per finished operation its caller keeps: COUNT GETs run and kept)
//   afn-bench prime-fresh URL              (store URL's answer in URLCache.shared, on disk, for a run of hits)
//   afn-bench prime-stale URL              (leave a stale entry for URL in URLCache.shared, as an earlier run would)
//   afn-bench session-s1/s2/s3 …           (the session path: Session.swift)

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
}

func peakRSSMiB() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_maxrss) / 1024
}

let callbacks = DispatchQueue(label: "bench.callbacks", attributes: .concurrent)

func makeRequest(_ url: URL, bypass: Bool) -> URLRequest {
    var request = URLRequest(url: url)
    if bypass { request.cachePolicy = .reloadIgnoringLocalAndRemoteCacheData }
    return request
}

/// Counts finished requests from the callback queue.
final class Tally: @unchecked Sendable {
    // @unchecked: `finished` and `failed` are only touched under `lock`.
    private let lock = NSLock()
    private var finished = 0, failed = 0
    private let count: Int
    private let done: DispatchSemaphore

    init(count: Int, done: DispatchSemaphore) {
        self.count = count
        self.done = done
    }

    func record(failed: Bool) {
        lock.lock()
        finished += 1
        if failed { self.failed += 1 }
        let last = finished == count
        lock.unlock()
        if last { done.signal() }
    }

    var failures: Int { lock.lock(); defer { lock.unlock() }; return failed }
}

/// `policy`: set on every operation (S6 trusts a private CA through it).
func throughput(_ url: URL, count: Int, concurrency: Int, bypass: Bool, policy: SecurityPolicy? = nil) -> Int32 {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = concurrency
    // The harness wakes the main thread once, at the end, so that its own
    // cost stays out of the figures (the C baseline has no such cost either).
    let done = DispatchSemaphore(value: 0)
    let tally = Tally(count: count, done: done)
    let request = makeRequest(url, bypass: bypass)
    let started = Date(), cpu0 = cpuSeconds()
    // The operations are handed over and let go, as code that enqueues work
    // and returns does: the queue keeps each until it has finished.
    do {
        var operations: [Operation] = []
        operations.reserveCapacity(count)
        for _ in 0..<count {
            let operation = HTTPRequestOperation(request: request)
            operation.completionQueue = callbacks
            if let policy { operation.securityPolicy = policy }
            operation.setCompletionBlockWithSuccess({ _, _ in tally.record(failed: false) }, failure: { _, _ in tally.record(failed: true) })
            operations.append(operation)
        }
        queue.addOperations(operations, waitUntilFinished: false)
    }
    done.wait()
    let wall = Date().timeIntervalSince(started), cpu = cpuSeconds() - cpu0
    let failures = tally.failures
    print(String(format: "requests=%d failed=%d wall=%.3f req_per_s=%.0f cpu_s=%.3f peak_rss_mib=%.1f", count, failures, wall,
                 Double(count) / wall, cpu, peakRSSMiB()))
    return failures == 0 ? 0 : 1
}

/// S6: GETs over HTTPS, the private CA trusted as a user with one writes it.
func tlsThroughput(_ url: URL, count: Int, concurrency: Int, caFile: String) -> Int32 {
    guard let ca = FileManager.default.contents(atPath: caFile) else {
        FileHandle.standardError.write(Data("cannot read the CA certificate \(caFile)\n".utf8))
        return 2
    }
    let policy = SecurityPolicy.default()
    policy.additionalTrustedCertificates = [ca]
    return throughput(url, count: count, concurrency: concurrency, bypass: false, policy: policy)
}

/// Queue scale: the memory one queued, not yet started operation costs —
/// COUNT operations made and handed to a suspended queue, resident memory
/// read before and after (the queue is then cancelled; nothing is sent).
func queueScale(_ url: URL, count: Int) -> Int32 {
    let queue = OperationQueue()
    queue.isSuspended = true
    let request = URLRequest(url: url)
    let before = residentBytes()
    var operations: [Operation] = []
    operations.reserveCapacity(count)
    for _ in 0..<count {
        let operation = HTTPRequestOperation(request: request)
        operation.completionQueue = callbacks
        operation.setCompletionBlockWithSuccess({ _, _ in }, failure: { _, _ in })
        operations.append(operation)
    }
    queue.addOperations(operations, waitUntilFinished: false)
    let after = residentBytes()
    print(String(format: "operations=%d bytes_per_operation=%.0f peak_rss_mib=%.1f", count, Double(after - before) / Double(count), peakRSSMiB()))
    queue.cancelAllOperations()
    return 0
}

/// Kept operations: the memory a finished operation costs while its caller
/// keeps it (to read its response and body later) — COUNT GETs of URL run
/// to completion, 64 at a time, every operation kept; resident memory read
/// at rest before and after, with the notifications delivered and the freed
/// heap given back, so what is left is what the kept operations hold.
func keptScale(_ url: URL, count: Int) -> Int32 {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 64
    let request = URLRequest(url: url)
    func run(_ count: Int) -> [HTTPRequestOperation] {
        let done = DispatchSemaphore(value: 0)
        let tally = Tally(count: count, done: done)
        let operations = (0..<count).map { _ in
            let operation = HTTPRequestOperation(request: request)
            operation.completionQueue = callbacks
            operation.setCompletionBlockWithSuccess({ _, _ in tally.record(failed: false) }, failure: { _, _ in tally.record(failed: true) })
            return operation
        }
        queue.addOperations(operations, waitUntilFinished: false)
        done.wait()
        queue.waitUntilAllOperationsAreFinished()
        return operations
    }
    func atRest() -> Int {
        RunLoop.main.run(until: Date().addingTimeInterval(0.3))
        cafsys_trim_heap()
        return residentBytes()
    }
    _ = run(200)
    let before = atRest()
    let kept = run(count)
    let after = atRest()
    let failures = kept.filter { $0.error != nil }.count
    let bodyBytes = kept.reduce(0) { $0 + ($1.responseData?.count ?? 0) }
    print(String(format: "operations=%d failed=%d bytes_per_operation=%.0f body_bytes_per_operation=%.0f peak_rss_mib=%.1f", count, failures,
                 Double(after - before) / Double(count), Double(bodyBytes) / Double(count), peakRSSMiB()))
    return failures == 0 ? 0 : 1
}

/// p50, p99, p90, mean (µs) and wall time (s) of `count` sequential GETs.
func sequentialLatency(_ url: URL, count: Int, bypass: Bool) -> (p50: Double, p99: Double, p90: Double, mean: Double, wall: Double, failures: Int) {
    let wallStart = Date()
    let request = makeRequest(url, bypass: bypass)
    var samples: [Double] = []
    samples.reserveCapacity(count)
    var failures = 0
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<count {
        let started = DispatchTime.now().uptimeNanoseconds
        let operation = HTTPRequestOperation(request: request)
        operation.completionQueue = callbacks
        operation.setCompletionBlockWithSuccess({ _, _ in done.signal() }, failure: { _, _ in done.signal() })
        operation.start()
        done.wait()
        if operation.error != nil { failures += 1 }
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1000)
    }
    samples.sort()
    return (samples[count / 2], samples[count * 99 / 100], samples[count * 9 / 10], samples.reduce(0, +) / Double(count),
            Date().timeIntervalSince(wallStart), failures)
}

func latency(_ url: URL, count: Int, bypass: Bool) -> Int32 {
    let result = sequentialLatency(url, count: count, bypass: bypass)
    print(String(format: "requests=%d failed=%d p50_us=%.1f p99_us=%.1f", count, result.failures, result.p50, result.p99))
    return result.failures == 0 ? 0 : 1
}

func download(_ url: URL, to path: String) -> Int32 {
    let operation = HTTPRequestOperation(request: URLRequest(url: url))
    operation.completionQueue = callbacks
    operation.outputStream = OutputStream(toFileAtPath: path, append: false)
    let done = DispatchSemaphore(value: 0)
    operation.setCompletionBlockWithSuccess({ _, _ in done.signal() }, failure: { _, _ in done.signal() })
    let started = Date()
    operation.start()
    done.wait()
    let wall = Date().timeIntervalSince(started)
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    if let error = operation.error { FileHandle.standardError.write(Data("download failed: \(error)\n".utf8)) }
    print(String(format: "bytes=%d wall=%.3f mb_per_s=%.1f peak_rss_mib=%.1f failed=%d", size, wall,
                 Double(size) / wall / 1_000_000, peakRSSMiB(), operation.error == nil ? 0 : 1))
    return operation.error == nil ? 0 : 1
}

/// A multipart POST of one file part, streamed from disk.
func multipartUpload(_ url: URL, file: String) -> Int32 {
    let request: URLRequest
    do {
        request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: url.absoluteString, parameters: nil) { form in
            try form.appendPart(withFileURL: URL(fileURLWithPath: file), name: "file")
        }
    } catch {
        FileHandle.standardError.write(Data("cannot build the request: \(error)\n".utf8))
        return 1
    }
    let operation = HTTPRequestOperation(request: request)
    operation.completionQueue = callbacks
    let done = DispatchSemaphore(value: 0)
    operation.setCompletionBlockWithSuccess({ _, _ in done.signal() }, failure: { _, _ in done.signal() })
    let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
    let started = Date()
    operation.start()
    done.wait()
    let wall = Date().timeIntervalSince(started)
    if let error = operation.error { FileHandle.standardError.write(Data("upload failed: \(error)\n".utf8)) }
    print(String(format: "bytes=%d wall=%.3f mb_per_s=%.1f peak_rss_mib=%.1f failed=%d", size, wall,
                 Double(size) / wall / 1_000_000, peakRSSMiB(), operation.error == nil ? 0 : 1))
    return operation.error == nil ? 0 : 1
}

/// GET latency with nothing else running, then while a multipart upload
/// throttled to 16 KiB every 50 ms (about 4 s for 1.25 MiB) is under way.
func latencyDuringThrottledUpload(_ url: URL, upload: URL, count: Int) -> Int32 {
    let idle = sequentialLatency(url, count: count, bypass: true)
    let request: URLRequest
    do {
        request = try HTTPRequestSerializer().multipartFormRequest(withMethod: "POST", urlString: upload.absoluteString, parameters: nil) { form in
            form.appendPart(withFileData: Data(repeating: 7, count: 1_250_000), name: "file", fileName: "f.bin", mimeType: "application/octet-stream")
            form.throttleBandwidth(withPacketSize: 16 * 1024, delay: 0.05)
        }
    } catch {
        FileHandle.standardError.write(Data("cannot build the upload: \(error)\n".utf8))
        return 1
    }
    let uploading = HTTPRequestOperation(request: request)
    uploading.completionQueue = callbacks
    uploading.start()
    Thread.sleep(forTimeInterval: 0.2)
    let loaded = sequentialLatency(url, count: count, bypass: true)
    let stillRunning = uploading.isExecuting
    uploading.cancel()
    print(String(format: "idle_p50_us=%.1f loaded_p50_us=%.1f idle_p90_us=%.1f loaded_p90_us=%.1f idle_mean_us=%.1f loaded_mean_us=%.1f idle_wall_s=%.3f loaded_wall_s=%.3f upload_still_running=%d",
                 idle.p50, loaded.p50, idle.p90, loaded.p90, idle.mean, loaded.mean, idle.wall, loaded.wall, stillRunning ? 1 : 0))
    return 0
}

/// Leaves in `URLCache.shared` what an earlier run of a program would have
/// left for `url`: an entry, stale by now, with a validator — so the next
/// run's first request revalidates it.
func primeStaleEntry(_ url: URL) -> Int32 {
    let old = "Mon, 02 Jan 2023 10:00:00 GMT"
    guard let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: [
        "Content-Type": "application/octet-stream", "Date": old, "Last-Modified": old, "ETag": "\"earlier-run\"", "Cache-Control": "max-age=60",
    ]) else { return 1 }
    let cached = CachedURLResponse(response: response, data: Data(repeating: 1, count: 1024), userInfo: nil, storagePolicy: .allowed)
    URLCache.shared.storeCachedResponse(cached, for: URLRequest(url: url))
    // corelibs writes the entry asynchronously; give it a moment before exiting.
    let deadline = Date().addingTimeInterval(5)
    while URLCache.shared.cachedResponse(for: URLRequest(url: url)) == nil && Date() < deadline { usleep(10_000) }
    Thread.sleep(forTimeInterval: 0.5)
    print("primed=1")
    return 0
}

/// Stores `url`'s answer in `URLCache.shared` through one request, and waits
/// for the entry to reach the disk (corelibs writes it asynchronously): the
/// next run's requests are all hits.
func primeFreshEntry(_ url: URL) -> Int32 {
    let operation = HTTPRequestOperation(request: URLRequest(url: url))
    operation.completionQueue = callbacks
    let done = DispatchSemaphore(value: 0)
    operation.setCompletionBlockWithSuccess({ _, _ in done.signal() }, failure: { _, _ in done.signal() })
    operation.start()
    done.wait()
    guard operation.error == nil else { return 1 }
    let deadline = Date().addingTimeInterval(5)
    while URLCache.shared.cachedResponse(for: URLRequest(url: url)) == nil && Date() < deadline { usleep(10_000) }
    Thread.sleep(forTimeInterval: 0.5)
    print("primed=1")
    return 0
}

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[2]) else {
    FileHandle.standardError.write(Data("usage: afn-bench s1 URL COUNT CONCURRENCY [bypass] | s2 URL COUNT [bypass] | s3 URL FILE | s4 URL FILE | s5 URL UPLOAD_URL COUNT | s6 URL COUNT CONCURRENCY CA | prime-stale URL | session-s1 URL COUNT CONCURRENCY | session-s2 URL COUNT | session-s3 URL FILE\n".utf8))
    exit(2)
}
let bypass = arguments.last == "bypass"
switch arguments[1] {
case "s1" where arguments.count >= 5:
    exit(throughput(url, count: Int(arguments[3]) ?? 20_000, concurrency: Int(arguments[4]) ?? 8, bypass: bypass))
case "s2" where arguments.count >= 4:
    exit(latency(url, count: Int(arguments[3]) ?? 2_000, bypass: bypass))
case "s3" where arguments.count >= 4:
    exit(download(url, to: arguments[3]))
case "s4" where arguments.count >= 4:
    exit(multipartUpload(url, file: arguments[3]))
case "s5" where arguments.count >= 5:
    exit(latencyDuringThrottledUpload(url, upload: URL(string: arguments[3]) ?? url, count: Int(arguments[4]) ?? 200))
case "s6" where arguments.count >= 6:
    exit(tlsThroughput(url, count: Int(arguments[3]) ?? 10_000, concurrency: Int(arguments[4]) ?? 64, caFile: arguments[5]))
case "idle":
    // The program with its libraries loaded and nothing sent (S3's floor row).
    print(String(format: "peak_rss_mib=%.1f", peakRSSMiB()))
    exit(0)
case "soak" where arguments.count >= 4:
    exit(soak(url, count: Int(arguments[3]) ?? 3_000))
case "queue-scale" where arguments.count >= 4:
    exit(queueScale(url, count: Int(arguments[3]) ?? 100_000))
case "kept-scale" where arguments.count >= 4:
    exit(keptScale(url, count: Int(arguments[3]) ?? 10_000))
case "prime-fresh":
    exit(primeFreshEntry(url))
case "prime-stale":
    exit(primeStaleEntry(url))
case "session-s1" where arguments.count >= 5:
    exit(sessionThroughput(url, count: Int(arguments[3]) ?? 20_000, concurrency: Int(arguments[4]) ?? 8))
case "session-s2" where arguments.count >= 4:
    exit(sessionLatency(url, count: Int(arguments[3]) ?? 2_000))
case "session-s3" where arguments.count >= 4:
    exit(sessionDownload(url, to: arguments[3]))
default:
    FileHandle.standardError.write(Data("unknown scenario \(arguments[1])\n".utf8))
    exit(2)
}
