import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The session path of S1–S3: the same requests through `HTTPSessionManager`
// / `URLSessionManager` tasks, as users write them (default configuration,
// its URL cache, the default cache policy). The response serializer is
// `HTTPResponseSerializer()` because the bodies are not JSON.
//
//   afn-bench session-s1 URL COUNT CONCURRENCY   (httpMaximumConnectionsPerHost = CONCURRENCY, every task resumed at once)
//   afn-bench session-s2 URL COUNT
//   afn-bench session-s3 URL FILE               (download task moved to FILE)

func sessionManager(connections: Int = 6) -> HTTPSessionManager {
    let configuration = URLSessionConfiguration.default
    configuration.httpMaximumConnectionsPerHost = connections
    let manager = HTTPSessionManager(baseURL: nil, sessionConfiguration: configuration)
    manager.responseSerializer = HTTPResponseSerializer()
    manager.completionQueue = callbacks
    return manager
}

func sessionThroughput(_ url: URL, count: Int, concurrency: Int) -> Int32 {
    let manager = sessionManager(connections: concurrency)
    let done = DispatchSemaphore(value: 0)
    let tally = Tally(count: count, done: done)
    let started = Date(), cpu0 = cpuSeconds()
    for _ in 0..<count {
        manager.dataTask(with: URLRequest(url: url)) { _, _, error in tally.record(failed: error != nil) }.resume()
    }
    done.wait()
    let wall = Date().timeIntervalSince(started), cpu = cpuSeconds() - cpu0
    let failures = tally.failures
    print(String(format: "requests=%d failed=%d wall=%.3f req_per_s=%.0f cpu_s=%.3f", count, failures, wall, Double(count) / wall, cpu))
    manager.invalidateSessionCancelingTasks(true)
    return failures == 0 ? 0 : 1
}

func sessionLatency(_ url: URL, count: Int) -> Int32 {
    let manager = sessionManager()
    var samples: [Double] = []
    samples.reserveCapacity(count)
    let failures = Tally(count: count, done: DispatchSemaphore(value: 0))
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<count {
        let started = DispatchTime.now().uptimeNanoseconds
        manager.dataTask(with: URLRequest(url: url)) { _, _, error in
            failures.record(failed: error != nil)
            done.signal()
        }.resume()
        done.wait()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1000)
    }
    samples.sort()
    print(String(format: "requests=%d failed=%d p50_us=%.1f p99_us=%.1f", count, failures.failures, samples[count / 2], samples[count * 99 / 100]))
    manager.invalidateSessionCancelingTasks(true)
    return failures.failures == 0 ? 0 : 1
}

func sessionDownload(_ url: URL, to path: String) -> Int32 {
    let manager = sessionManager()
    let destination = URL(fileURLWithPath: path)
    let done = DispatchSemaphore(value: 0)
    let failure = Tally(count: 1, done: done)
    let started = Date()
    manager.downloadTask(with: URLRequest(url: url), progress: nil, destination: { _, _ in destination }) { _, _, error in
        if let error { FileHandle.standardError.write(Data("download failed: \(error)\n".utf8)) }
        failure.record(failed: error != nil)
    }.resume()
    done.wait()
    let wall = Date().timeIntervalSince(started)
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    print(String(format: "bytes=%d wall=%.3f mb_per_s=%.1f peak_rss_mib=%.1f failed=%d", size, wall,
                 Double(size) / wall / 1_000_000, peakRSSMiB(), failure.failures))
    manager.invalidateSessionCancelingTasks(true)
    return failure.failures == 0 ? 0 : 1
}
