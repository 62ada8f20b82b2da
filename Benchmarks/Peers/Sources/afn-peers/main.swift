import AsyncHTTPClient
import Foundation
import NIOSSL
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The same S1/S2 workloads as afn-bench, through AsyncHTTPClient and through
// FoundationNetworking's URLSession, each used as its documentation shows
// (a shared client / the shared session, default configuration).
//
//   afn-peers ahc s1 URL COUNT CONCURRENCY      afn-peers ahc s2 URL COUNT
//   afn-peers urlsession s1 URL COUNT CONCURRENCY
//   afn-peers urlsession s2 URL COUNT
//   afn-peers ahc s6 URL COUNT CONCURRENCY CA_PEM   (HTTPS; a client whose TLS configuration trusts CA_PEM)

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

func report(throughput count: Int, failures: Int, started: Date, cpu0: Double) {
    let wall = Date().timeIntervalSince(started), cpu = cpuSeconds() - cpu0
    print(String(format: "requests=%d failed=%d wall=%.3f req_per_s=%.0f cpu_s=%.3f peak_rss_mib=%.1f", count, failures, wall,
                 Double(count) / wall, cpu, peakRSSMiB()))
}

func report(latency samples: [Double], failures: Int) {
    let sorted = samples.sorted()
    print(String(format: "requests=%d failed=%d p50_us=%.1f p99_us=%.1f", sorted.count, failures, sorted[sorted.count / 2], sorted[sorted.count * 99 / 100]))
}

// MARK: - AsyncHTTPClient

func ahcOnce(_ client: HTTPClient, _ url: String) async -> Bool {
    do {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 20)
        return response.status == .ok
    } catch {
        return false
    }
}

func ahcThroughput(_ url: String, count: Int, concurrency: Int, client: HTTPClient = .shared) async -> Int32 {
    let started = Date(), cpu0 = cpuSeconds()
    let failures = await withTaskGroup(of: Int.self) { group in
        let perWorker = count / concurrency
        for worker in 0..<concurrency {
            let share = worker == concurrency - 1 ? count - perWorker * (concurrency - 1) : perWorker
            group.addTask {
                var failed = 0
                for _ in 0..<share where await !ahcOnce(client, url) { failed += 1 }
                return failed
            }
        }
        return await group.reduce(0, +)
    }
    report(throughput: count, failures: failures, started: started, cpu0: cpu0)
    return failures == 0 ? 0 : 1
}

/// S6: a client of its own whose TLS configuration trusts the private CA, as AHC's documentation shows.
func ahcTLSThroughput(_ url: String, count: Int, concurrency: Int, caFile: String) async -> Int32 {
    var tls = TLSConfiguration.makeClientConfiguration()
    do {
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
    } catch {
        FileHandle.standardError.write(Data("cannot read the CA certificate \(caFile): \(error)\n".utf8))
        return 2
    }
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
    let status = await ahcThroughput(url, count: count, concurrency: concurrency, client: client)
    try? await client.shutdown()
    return status
}

func ahcLatency(_ url: String, count: Int) async -> Int32 {
    let client = HTTPClient.shared
    var samples: [Double] = [], failures = 0
    for _ in 0..<count {
        let started = DispatchTime.now().uptimeNanoseconds
        if await !ahcOnce(client, url) { failures += 1 }
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1000)
    }
    report(latency: samples, failures: failures)
    return failures == 0 ? 0 : 1
}

// MARK: - URLSession

final class Counter: @unchecked Sendable {
    // @unchecked: `failed` is only touched under `lock`.
    private let lock = NSLock()
    private var failed = 0
    func fail() { lock.lock(); failed += 1; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return failed }
}

func sessionThroughput(_ url: URL, count: Int, concurrency: Int) -> Int32 {
    let session = URLSession.shared
    let slots = DispatchSemaphore(value: concurrency)
    let group = DispatchGroup()
    let failures = Counter()
    let started = Date(), cpu0 = cpuSeconds()
    for _ in 0..<count {
        slots.wait()
        group.enter()
        session.dataTask(with: URLRequest(url: url)) { _, response, error in
            if error != nil || (response as? HTTPURLResponse)?.statusCode != 200 { failures.fail() }
            slots.signal()
            group.leave()
        }.resume()
    }
    group.wait()
    report(throughput: count, failures: failures.value, started: started, cpu0: cpu0)
    return failures.value == 0 ? 0 : 1
}

func sessionLatency(_ url: URL, count: Int) -> Int32 {
    let session = URLSession.shared
    var samples: [Double] = []
    let failures = Counter()
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<count {
        let started = DispatchTime.now().uptimeNanoseconds
        session.dataTask(with: URLRequest(url: url)) { _, response, error in
            if error != nil || (response as? HTTPURLResponse)?.statusCode != 200 { failures.fail() }
            done.signal()
        }.resume()
        done.wait()
        samples.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1000)
    }
    report(latency: samples, failures: failures.value)
    return failures.value == 0 ? 0 : 1
}

// MARK: - Main

let arguments = CommandLine.arguments
guard arguments.count >= 5, let url = URL(string: arguments[3]), let count = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: afn-peers ahc|urlsession s1 URL COUNT CONCURRENCY | s2 URL COUNT | ahc s6 URL COUNT CONCURRENCY CA_PEM\n".utf8))
    exit(2)
}
let concurrency = arguments.count >= 6 ? Int(arguments[5]) ?? 8 : 8
let status: Int32
switch (arguments[1], arguments[2]) {
case ("ahc", "s1"): status = await ahcThroughput(url.absoluteString, count: count, concurrency: concurrency)
case ("ahc", "s2"): status = await ahcLatency(url.absoluteString, count: count)
case ("ahc", "s6") where arguments.count >= 7:
    status = await ahcTLSThroughput(url.absoluteString, count: count, concurrency: concurrency, caFile: arguments[6])
case ("urlsession", "s1"): status = sessionThroughput(url, count: count, concurrency: concurrency)
case ("urlsession", "s2"): status = sessionLatency(url, count: count)
default:
    FileHandle.standardError.write(Data("unknown peer or scenario\n".utf8))
    status = 2
}
exit(status)
