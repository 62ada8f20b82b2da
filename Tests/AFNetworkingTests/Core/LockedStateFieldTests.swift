@_spi(AFNetworkingInternal) import AFNetworkingTransport
import Foundation
import XCTest

/// The one-field accessors of `LockedState` (`state[\.x]`, `state.set(\.x, to:)`)
/// that the managers', serializers' and policy's settings are declared with.
/// Run under ThreadSanitizer by `make stress`.
final class LockedStateFieldTests: XCTestCase {
    /// A settings object declared the way the library declares its own.
    final class Settings: Sendable {
        struct State {
            var timeout: TimeInterval = 60
            var name = "initial"
            var table: [String: Int] = [:]
        }
        let state = LockedState(State())

        var timeout: TimeInterval {
            get { state[\.timeout] } set { state.set(\.timeout, to: newValue) }
        }
        var name: String {
            get { state[\.name] } set { state.set(\.name, to: newValue) }
        }
    }

    private static let workers = 4
    private static let rounds = 2_000

    func testASetIsSeenByTheNextReadAndLeavesTheOtherFieldsAlone() {
        let settings = Settings()
        settings.timeout = 5
        settings.name = "changed"
        XCTAssertEqual(settings.timeout, 5)
        XCTAssertEqual(settings.name, "changed")
        XCTAssertEqual(settings.state[\.table], [:])
        XCTAssertEqual(settings.state[\.name.count], 7, "a path through a field reads under the same lock")
    }

    /// Writers on one field while others read it: every read is a value some
    /// writer set (never a torn string), and the last write of the field that
    /// each writer owns alone is the one left.
    func testConcurrentSetsAndReadsOfFieldsAreSerialized() {
        let settings = Settings()
        let allowed = Set(["initial"] + (0..<Self.workers).map { "writer \($0)" })
        let unexpected = Locked(0)
        DispatchQueue.concurrentPerform(iterations: Self.workers * 2) { worker in
            if worker < Self.workers {
                for round in 1...Self.rounds {
                    settings.name = "writer \(worker)"
                    // Each writer has a key of its own in one shared table: a set
                    // that were not a single locked write of the whole state
                    // would put back a stale table and lose other writers' keys.
                    settings.state.set(\.table["key \(worker)"], to: round)
                    if settings.state[\.table["key \(worker)"]] != round { unexpected.increment() }
                }
            } else {
                for _ in 0..<Self.rounds where !allowed.contains(settings.name) {
                    unexpected.increment()
                }
            }
        }
        XCTAssertEqual(unexpected.value, 0)
        XCTAssertTrue(allowed.contains(settings.name))
        let table = settings.state[\.table]
        XCTAssertEqual(table.count, Self.workers)
        for worker in 0..<Self.workers {
            XCTAssertEqual(table["key \(worker)"], Self.rounds)
        }
    }

    /// Distinct fields set from distinct threads: a set rewrites only its own
    /// field, so none of the others' last values is lost.
    func testSetsOfDifferentFieldsFromDifferentThreadsAreAllKept() {
        let settings = Settings()
        let lost = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            for round in 1...Self.rounds {
                // Each thread is the only writer of its field, so it reads back what it set.
                if worker == 0 {
                    settings.timeout = TimeInterval(round)
                    if settings.timeout != TimeInterval(round) { lost.increment() }
                } else {
                    settings.name = "round \(round)"
                    if settings.name != "round \(round)" { lost.increment() }
                }
            }
        }
        XCTAssertEqual(lost.value, 0)
        XCTAssertEqual(settings.timeout, TimeInterval(Self.rounds))
        XCTAssertEqual(settings.name, "round \(Self.rounds)")
    }
}
