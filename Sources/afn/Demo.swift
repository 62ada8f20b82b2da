import AFNetworking
@_spi(AFNetworkingInternal) import AFNetworkingTransport
import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `afn demo`: a batch with a small dependency graph, then a file download with
/// a progress bar, then a report.
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the demo scenario against a local server.")

    @Option(help: "Base URL of a server with users.json, posts.json, comments.json, likes.json and archive.bin.") var base: String
    @Option(help: "Where to store the downloaded archive.") var output: String

    func run() throws {
        guard let baseURL = URL(string: base) else { throw ValidationError("bad base URL: \(base)") }
        let started = Date()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 4

        say("1. A batch of four requests with a dependency graph: users → posts → {comments, likes}")
        let names = ["users", "posts", "comments", "likes"]
        let log = Log()
        let operations = names.map { name -> HTTPRequestOperation in
            let operation = HTTPRequestOperation(request: URLRequest(url: baseURL.appendingPathComponent("\(name).json")))
            operation.completionQueue = callbackQueue
            operation.setCompletionBlockWithSuccess({ op, _ in
                log.add("   ✓ \(name).json  \(op.response?.statusCode ?? 0)  \(op.responseData?.count ?? 0) bytes")
            }, failure: { _, error in
                log.add("   ✗ \(name).json  \(error.localizedDescription)")
            })
            return operation
        }
        operations[1].addDependency(operations[0])
        operations[2].addDependency(operations[1])
        operations[3].addDependency(operations[1])
        let batchDone = DispatchSemaphore(value: 0)
        let batch = URLConnectionOperation.batch(ofRequestOperations: operations, progressBlock: { finished, total in
            log.add("   batch progress \(finished)/\(total)")
        }, completionBlock: { _ in batchDone.signal() })
        queue.addOperations(batch, waitUntilFinished: false)
        // The batch completion is delivered on the main queue: serve it while waiting.
        while batchDone.wait(timeout: .now()) == .timedOut {
            _ = RunLoop.main.run(mode: .default, before: Date().addingTimeInterval(0.01))
        }
        log.flush()
        let batchTime = Date().timeIntervalSince(started)

        say("2. A download to a file through outputStream, with progress on stderr")
        let downloadStart = Date()
        let download = HTTPRequestOperation(request: URLRequest(url: baseURL.appendingPathComponent("archive.bin")))
        download.completionQueue = callbackQueue
        download.outputStream = OutputStream(toFileAtPath: output, append: false)
        let bar = ProgressBar(label: "   archive.bin")
        download.setDownloadProgressBlock { _, total, expected in bar.update(total, of: expected) }
        queue.addOperation(download)
        download.waitUntilFinished()
        bar.finish()
        let downloadTime = Date().timeIntervalSince(downloadStart)
        let size = (try? FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0

        say("3. Report")
        let failures = (operations + [download]).filter { $0.error != nil }
        say(String(format: "   batch: %d requests in %.0f ms (dependency order respected)", operations.count, batchTime * 1000))
        say(String(format: "   download: %.1f MiB in %.2f s = %.1f MiB/s, written to %@", Double(size) / 1_048_576, downloadTime,
                     Double(size) / 1_048_576 / max(downloadTime, 0.001), output))
        say("   failures: \(failures.count)")
        if !failures.isEmpty { throw ExitCode(1) }
    }
}

/// Prints a line and flushes it at once, so the demo's steps show as they
/// happen even when stdout is a pipe.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// Lines printed in the order they were produced, from any queue.
final class Log: Sendable {
    private let lines = LockedState<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }
    /// Prints the lines so far (taken under the lock, printed after it).
    func flush() {
        let taken = lines.withLock { lines in
            defer { lines.removeAll() }
            return lines
        }
        taken.forEach { say($0) }
    }
}
