@testable import AFNetworkingTransport
import XCTest

/// The engine trims the heap once per quiet period that follows work, and
/// wakes for it: transitions only, no I/O.
final class IdleHeapTrimTests: XCTestCase {
    private let second = IdleHeapTrim.quiet

    func testNothingIsTrimmedBeforeAnyTransfer() {
        var trim = IdleHeapTrim()
        XCTAssertFalse(trim.passEnded(active: false, now: 0))
        XCTAssertFalse(trim.passEnded(active: false, now: 10 * second))
        XCTAssertNil(trim.millisecondsUntilDue(now: 10 * second))
    }

    func testOneTrimAQuietSecondAfterTheLastTransfer() {
        var trim = IdleHeapTrim()
        XCTAssertFalse(trim.passEnded(active: true, now: 0))
        XCTAssertNil(trim.millisecondsUntilDue(now: 0), "no wake-up while transfers run")
        XCTAssertFalse(trim.passEnded(active: false, now: 5 * second))
        XCTAssertEqual(trim.millisecondsUntilDue(now: 5 * second), 1001)
        XCTAssertEqual(trim.millisecondsUntilDue(now: 5 * second + second / 2), 501)
        XCTAssertFalse(trim.passEnded(active: false, now: 5 * second + second / 2))
        XCTAssertEqual(trim.millisecondsUntilDue(now: 6 * second), 0)
        XCTAssertTrue(trim.passEnded(active: false, now: 6 * second))
        // Once per quiet period.
        XCTAssertFalse(trim.passEnded(active: false, now: 9 * second))
        XCTAssertNil(trim.millisecondsUntilDue(now: 9 * second))
    }

    func testATransferDuringTheQuietSecondStartsItOver() {
        var trim = IdleHeapTrim()
        _ = trim.passEnded(active: true, now: 0)
        _ = trim.passEnded(active: false, now: second)
        XCTAssertFalse(trim.passEnded(active: true, now: second + second / 2))
        XCTAssertFalse(trim.passEnded(active: false, now: 2 * second + second / 4))
        XCTAssertFalse(trim.passEnded(active: false, now: 3 * second), "quiet for 0.75 s only")
        XCTAssertTrue(trim.passEnded(active: false, now: 3 * second + second / 4))
    }
}
