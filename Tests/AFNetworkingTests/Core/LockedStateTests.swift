@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import XCTest

/// The lock primitive every component uses.
final class LockedStateTests: XCTestCase {
    final class Tracked: @unchecked Sendable {
        let onDeinit: @Sendable () -> Void
        init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
        deinit { onDeinit() }
    }

    func testTheStateIsReleasedWithTheLockExactlyOnce() {
        let deinits = Locked(0)
        do {
            let state = LockedState(Tracked { deinits.increment() })
            let copy = state   // a copy shares the storage
            copy.withLock { _ in }
        }
        XCTAssertEqual(deinits.value, 1)
    }

    func testConcurrentIncrementsAreNotLost() {
        let counter = LockedState(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        XCTAssertEqual(counter.value, 80_000)
    }
}
