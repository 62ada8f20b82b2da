@testable import AFNetworking
import Foundation
import XCTest

/// The total time budget as a value: the clock is given, not read.
final class ResourceBudgetTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000

    func testNoBudgetForZeroNegativeInfiniteOrLongerThanAYear() {
        for limit in [0, -1, .infinity, 366 * 24 * 3600.0, Date.distantFuture.timeIntervalSinceNow] {
            XCTAssertNil(ResourceBudget(limit: limit, url: nil, description: "x"), "\(limit)")
        }
        XCTAssertNotNil(ResourceBudget(limit: 0.001, url: nil, description: "x"))
    }

    func testTheClockRunsOnlyWhileExecutingAndResumesWhereItStopped() throws {
        var budget = try XCTUnwrap(ResourceBudget(limit: 10, url: nil, description: "x"))
        XCTAssertEqual(budget.phaseChanged(from: .ready, to: .executing, now: 100 * second), .arm(run: 1, delay: 10))
        XCTAssertEqual(budget.phaseChanged(from: .executing, to: .paused, now: 104 * second), .disarm)
        XCTAssertEqual(budget.remaining, 6, accuracy: 1e-9)
        // Paused for an hour: none of it is spent.
        XCTAssertEqual(budget.phaseChanged(from: .paused, to: .executing, now: 3700 * second), .arm(run: 2, delay: 6))
        XCTAssertFalse(budget.isCurrent(run: 1), "the first run's timer is stale")
        XCTAssertTrue(budget.isCurrent(run: 2))
    }

    func testOnlyTheCurrentRunsTimerExpiresItAndOnlyOnce() throws {
        var budget = try XCTUnwrap(ResourceBudget(limit: 1, url: URL(string: "http://127.0.0.1/x"), description: "x"))
        _ = budget.phaseChanged(from: .ready, to: .executing, now: 0)
        _ = budget.phaseChanged(from: .executing, to: .paused, now: second / 2)
        XCTAssertFalse(budget.expire(run: 1), "stopped: a timer that fires anyway changes nothing")
        _ = budget.phaseChanged(from: .paused, to: .executing, now: second)
        XCTAssertTrue(budget.expire(run: 2))
        XCTAssertFalse(budget.expire(run: 2))
        XCTAssertEqual(budget.phaseChanged(from: .executing, to: .finished, now: 2 * second), .none, "spent: nothing to stop")
        XCTAssertEqual(budget.error.code, NSURLErrorTimedOut)
        XCTAssertEqual((budget.error.userInfo[NSURLErrorFailingURLErrorKey] as? URL)?.absoluteString, "http://127.0.0.1/x")
    }

    func testFinishingStopsTheClock() throws {
        var budget = try XCTUnwrap(ResourceBudget(limit: 5, url: nil, description: "x"))
        _ = budget.phaseChanged(from: .ready, to: .executing, now: 0)
        XCTAssertEqual(budget.phaseChanged(from: .executing, to: .finished, now: second), .disarm)
        XCTAssertFalse(budget.isCurrent(run: 1))
    }
}
