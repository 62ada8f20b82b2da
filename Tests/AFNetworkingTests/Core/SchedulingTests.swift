@testable import AFNetworking
@_spi(AFNetworkingInternal) @testable import AFNetworkingTransport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// The engine's per-host waiting line and the session's deadline heap:
/// ordering, early removal and bounded storage, without a network.
final class SchedulingTests: XCTestCase {
    private func transfers(_ count: Int) throws -> [Transfer] {
        try (0..<count).map { index in
            var options = TransferOptions(request: URLRequest(url: URL(string: "http://127.0.0.1:9/\(index)")!))
            options.tag = UInt64(index)
            return try Transfer(options: options, delegate: RecordingDelegate())
        }
    }

    func testTheWaitingLineIsFirstInFirstOutAndSkipsTransfersThatLeftIt() throws {
        let slots = HostSlots()
        let waiting = try transfers(5)
        waiting.forEach(slots.enqueue)
        XCTAssertTrue(slots.remove(waiting[1]))
        XCTAssertFalse(slots.remove(waiting[1]), "already gone")
        XCTAssertTrue(slots.dequeue() === waiting[0])
        XCTAssertTrue(slots.dequeue() === waiting[2], "the one that left is skipped")
        XCTAssertTrue(slots.remove(waiting[4]))
        XCTAssertTrue(slots.dequeue() === waiting[3])
        XCTAssertNil(slots.dequeue())
        XCTAssertTrue(slots.isIdle)
        waiting.forEach { $0.releaseResources() }
    }

    func testTheWaitingLineStaysOrderedAcrossCompaction() throws {
        let slots = HostSlots()
        let waiting = try transfers(300)
        waiting.forEach(slots.enqueue)
        for index in 0..<200 { XCTAssertTrue(slots.dequeue() === waiting[index]) }
        XCTAssertTrue(slots.remove(waiting[250]), "positions survive compaction")
        var rest: [Transfer] = []
        while let next = slots.dequeue() { rest.append(next) }
        XCTAssertEqual(rest.count, 99)
        XCTAssertTrue(rest.first === waiting[200])
        XCTAssertFalse(rest.contains { $0 === waiting[250] })
        waiting.forEach { $0.releaseResources() }
    }

    func testDeadlinesFireInOrderAndCancelledOnesNever() {
        let fired = Locked<[Int]>([])
        let done = expectation(description: "the last deadline fires")
        let deadlines = Deadlines.shared
        let late = deadlines.add(at: .now() + 0.15) { fired.withLock { $0.append(3) }; done.fulfill() }
        _ = late
        _ = deadlines.add(at: .now() + 0.05) { fired.withLock { $0.append(1) } }
        let cancelled = deadlines.add(at: .now() + 0.1) { fired.withLock { $0.append(2) } }
        deadlines.cancel(cancelled)
        wait(for: [done], timeout: 5)
        XCTAssertEqual(fired.value, [1, 3])
    }

    func testCancellingManyDeadlinesKeepsTheHeapSmall() {
        let tokens = (0..<1000).map { _ in Deadlines.shared.add(at: .now() + 3600) {} }
        tokens.forEach(Deadlines.shared.cancel)
        XCTAssertLessThanOrEqual(Deadlines.shared.pendingCount, 64 + 1, "cancelled entries do not pile up")
    }
}
