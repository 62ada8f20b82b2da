import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// Transfers run on one thread named AFNetworking, which sleeps when idle.
final class NetworkThreadTests: OperationTestCase {
    private func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    private func networkThreadCPUTicks() -> Int? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
            guard comm == "AFNetworking", let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            // utime and stime are fields 14 and 15 of stat; 12 and 13 after the comm.
            guard fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
            return user + system
        }
        return nil
    }

    func testExactlyOneNetworkThreadNamedAFNetworking() {
        server.respond("/t", body: Data("t".utf8))
        for _ in 0..<3 { XCTAssertNil(get("/t").1.error) }
        XCTAssertEqual(threadNames().filter { $0 == "AFNetworking" }.count, 1, "\(threadNames())")
    }

    func testIdleNetworkThreadSleeps() throws {
        server.respond("/t", body: Data("t".utf8))
        XCTAssertNil(get("/t").1.error)
        let before = try XCTUnwrap(networkThreadCPUTicks())
        Thread.sleep(forTimeInterval: 1.0)
        let after = try XCTUnwrap(networkThreadCPUTicks())
        XCTAssertLessThanOrEqual(after - before, 2, "the idle network thread used CPU: no busy loop allowed")
    }

    func testCallbacksNeverRunOnTheNetworkThread() {
        server.respond("/t", body: Data("t".utf8))
        let operation = HTTPRequestOperation(request: request("/t"))
        operation.completionQueue = DispatchQueue.global()
        let threadName = Locked<String?>(nil)
        let progressThread = Locked<String?>(nil)
        operation.setDownloadProgressBlock { _, _, _ in progressThread.value = Thread.current.name }
        let done = expectation(description: "done")
        operation.setCompletionBlockWithSuccess({ _, _ in threadName.value = Thread.current.name; done.fulfill() }, failure: nil)
        operation.start()
        wait(for: [done], timeout: 10)
        XCTAssertNotEqual(threadName.value, "AFNetworking")
        XCTAssertTrue(spin { progressThread.value != nil })
        XCTAssertNotEqual(progressThread.value, "AFNetworking")
    }
}
