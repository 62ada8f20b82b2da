@testable import AFNetworking
import Foundation
import XCTest

/// What waits for a main queue that is not serviced stays bounded, and what
/// observers see once it is stays consistent: no end without its beginning.
/// The test body holds the main thread, as a tool blocking on a semaphore
/// does, so nothing posted is delivered until the test lets the run loop turn.
final class MainQueueNotifierTests: XCTestCase {
    private static let begins = Notification.Name("MainQueueNotifierTests.begins")
    private static let ends = Notification.Name("MainQueueNotifierTests.ends")

    /// An object a notification holds, as a finished operation holding its body.
    private final class Subject: @unchecked Sendable {
        // @unchecked: never mutated.
        let id: Int
        init(_ id: Int) { self.id = id }
    }

    /// Every notification of the test's two names, in delivery order.
    private final class Seen: @unchecked Sendable {
        // @unchecked: only touched on the main thread (observers run where posted: the main queue).
        var events: [(id: Int, begins: Bool)] = []
    }

    private func observe(_ seen: Seen) -> [NSObjectProtocol] {
        [Self.begins, Self.ends].map { name in
            NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { note in
                guard let subject = note.object as? Subject else { return }
                seen.events.append((subject.id, name == Self.begins))
            }
        }
    }

    /// Lets the main queue drain what the notifier scheduled.
    private func serviceMainQueue(until done: () -> Bool) {
        let deadline = Date().addingTimeInterval(10)
        while !done() && Date() < deadline { RunLoop.main.run(until: Date().addingTimeInterval(0.01)) }
    }

    /// Each subject's notifications, as delivered, alternate beginning first.
    private func assertConsistent(_ seen: Seen, file: StaticString = #filePath, line: UInt = #line) {
        var open: [Int: Bool] = [:]
        for event in seen.events {
            XCTAssertNotEqual(open[event.id] ?? false, event.begins,
                              "subject \(event.id): \(event.begins ? "a second beginning" : "an end without its beginning")",
                              file: file, line: line)
            open[event.id] = event.begins
        }
    }

    func testBodyBytesWaitingForABlockedMainQueueStayBoundedAndFreedRequestsAreLetGo() {
        let notifier = MainQueueNotifier()
        let seen = Seen()
        let observers = observe(seen)
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        let body = 1 << 20
        weak var first: Subject?
        // 300 requests of 1 MiB each start and finish while the main queue is held.
        for id in 0..<300 {
            let subject = Subject(id)
            if id == 0 { first = subject }
            notifier.post(Self.begins, object: subject, marks: .begins)
            notifier.post(Self.ends, object: subject, marks: .ends, cost: body)
            XCTAssertLessThanOrEqual(notifier.waiting.cost, 2 * MainQueueNotifier.costLimit + body + MainQueueNotifier.objectCost)
        }
        // Dropped entries are released on a utility queue, not the posting thread.
        let deadline = Date().addingTimeInterval(10)
        for _ in 0..<1000 where first != nil && Date() < deadline { usleep(10_000) }
        XCTAssertNil(first, "the first request, dropped in pair, is let go without the main queue turning")
        XCTAssertLessThan(notifier.waiting.cost, 300 * body / 4)
        serviceMainQueue { notifier.waiting.count == 0 }
        XCTAssertEqual(notifier.waiting.count, 0)
        XCTAssertFalse(seen.events.isEmpty)
        assertConsistent(seen)
        // The newest pairs are the ones kept.
        XCTAssertEqual(seen.events.last?.id, 299)
    }

    func testAnEndWhoseBeginningWasDeliveredIsNeverDropped() {
        let notifier = MainQueueNotifier()
        let seen = Seen()
        let observers = observe(seen)
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        // A long request starts while the main queue is serviced…
        let long = Subject(-1)
        notifier.post(Self.begins, object: long, marks: .begins)
        serviceMainQueue { notifier.waiting.count == 0 }
        XCTAssertEqual(seen.events.count, 1)
        // …then the main queue is held while it ends and many others run whole.
        notifier.post(Self.ends, object: long, marks: .ends, cost: 1 << 20)
        for id in 0..<(MainQueueNotifier.capacity + 10) {
            let subject = Subject(id)
            notifier.post(Self.begins, object: subject, marks: .begins)
            notifier.post(Self.ends, object: subject, marks: .ends, cost: 64 << 10)
        }
        XCTAssertLessThan(notifier.waiting.count, MainQueueNotifier.capacity)
        serviceMainQueue { notifier.waiting.count == 0 }
        assertConsistent(seen)
        XCTAssertTrue(seen.events.contains { $0.id == -1 && !$0.begins }, "the long request's end was delivered")
    }

    func testRequestsStillRunningKeepTheirBeginnings() {
        let notifier = MainQueueNotifier()
        let seen = Seen()
        let observers = observe(seen)
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        // Eight requests start and stay running while 100 MiB of others finish.
        let running = (0..<8).map { Subject(1000 + $0) }
        for subject in running { notifier.post(Self.begins, object: subject, marks: .begins) }
        for id in 0..<100 {
            let subject = Subject(id)
            notifier.post(Self.begins, object: subject, marks: .begins)
            notifier.post(Self.ends, object: subject, marks: .ends, cost: 1 << 20)
        }
        serviceMainQueue { notifier.waiting.count == 0 }
        assertConsistent(seen)
        XCTAssertEqual(Set(seen.events.filter { $0.begins && $0.id >= 1000 }.map(\.id)), Set(1000..<1008))
        // Their ends, later, are delivered after their beginnings.
        for subject in running { notifier.post(Self.ends, object: subject, marks: .ends) }
        serviceMainQueue { notifier.waiting.count == 0 }
        assertConsistent(seen)
        XCTAssertEqual(seen.events.filter { !$0.begins && $0.id >= 1000 }.count, 8)
    }

    func testAServicedMainQueueGetsEveryNotificationInOrder() {
        let notifier = MainQueueNotifier()
        let seen = Seen()
        let observers = observe(seen)
        defer { observers.forEach(NotificationCenter.default.removeObserver) }
        for id in 0..<50 {
            let subject = Subject(id)
            notifier.post(Self.begins, object: subject, marks: .begins)
            notifier.post(Self.ends, object: subject, marks: .ends, cost: 1 << 10)
        }
        serviceMainQueue { notifier.waiting.count == 0 }
        XCTAssertEqual(seen.events.count, 100)
        XCTAssertEqual(seen.events.map(\.id), (0..<50).flatMap { [$0, $0] })
        assertConsistent(seen)
    }
}
