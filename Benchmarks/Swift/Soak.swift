import AFNetworking
import CAFSystem
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The resident memory of the process now (not its peak), from /proc/self/statm
/// (size, resident, … in pages).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
          let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func residentMiB() -> Double { Double(residentBytes()) / 1_048_576 }

/// The bodies the soak cycles through (files `soak-NAME.bin` under URL), in
/// an order that mixes small and large: 1 KiB to 8 MiB.
let soakBodies = ["1k", "64k", "1m", "8m", "16k", "256k", "4m", "2k", "512k", "2m"]

/// Soak: `count` GETs with in-memory bodies of 1 KiB–8 MiB, 8 at a time and
/// at most 64 handed to the queue, each operation released when it ends
/// (the main thread blocks meanwhile, as a tool's or server's does).
/// Resident memory at rest after a warm-up round, at rest after the run,
/// and then after the harness's own `malloc_trim` — a client whose memory
/// does not grow with the work shows the same figure at all three.
func soak(_ base: URL, count: Int) -> Int32 {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = 8
    let failures = Failures()
    func run(_ count: Int) {
        let group = DispatchGroup()
        let inFlight = DispatchSemaphore(value: 64)
        for index in 0..<count {
            inFlight.wait()
            group.enter()
            let url = base.appendingPathComponent("soak-\(soakBodies[index % soakBodies.count]).bin")
            let operation = HTTPRequestOperation(request: URLRequest(url: url))
            operation.completionQueue = callbacks
            operation.setCompletionBlockWithSuccess({ _, _ in
                inFlight.signal()
                group.leave()
            }, failure: { _, _ in
                failures.add()
                inFlight.signal()
                group.leave()
            })
            queue.addOperation(operation)
        }
        group.wait()
        queue.waitUntilAllOperationsAreFinished()
    }
    // Read at rest: past the engine's quiet second, when it gives freed heap back.
    let rest = 1.5
    run(soakBodies.count * 10)
    Thread.sleep(forTimeInterval: rest)
    let warm = residentMiB()
    let started = Date()
    run(count)
    let wall = Date().timeIntervalSince(started)
    Thread.sleep(forTimeInterval: rest)
    let end = residentMiB()
    cafsys_trim_heap()
    let trimmed = residentMiB()
    print(String(format: "requests=%d failed=%d wall=%.3f rss_warm_mib=%.1f rss_end_mib=%.1f rss_trimmed_mib=%.1f growth_mib=%.1f growth_trimmed_mib=%.1f peak_rss_mib=%.1f",
                 count, failures.count, wall, warm, end, trimmed, end - warm, trimmed - warm, peakRSSMiB()))
    return failures.count == 0 ? 0 : 1
}

/// Failed requests, counted from the callback queue.
final class Failures: @unchecked Sendable {
    // @unchecked: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = 0
    func add() { lock.lock(); value += 1; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}
