@testable import AFNetworking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

/// What one storm task goes through (chosen up front from a seeded generator,
/// so a failing run reproduces with its seed).
private enum StormPlan: CaseIterable, Sendable {
    case resume
    case resumeSuspendResume
    case cancelThenResume
    case resumeThenCancel
    case suspendThenResume
    case resumeSuspendCancel
    case redundantCalls

    /// Plans that never cancel: such a task must succeed unless another thread cancels it.
    var cancels: Bool { [.cancelThenResume, .resumeThenCancel, .resumeSuspendCancel].contains(self) }
}

private struct StormStep: Sendable {
    var slow: Bool
    var plan: StormPlan
    var pause: UInt32
}

/// Holds the manager weakly, so a test can drop it and still invalidate it
/// at teardown if something else kept it alive.
private final class WeakManagerBox: @unchecked Sendable {
    // @unchecked: only the test's own thread touches `value`.
    weak var value: URLSessionManager?
}

/// Many session tasks resumed, suspended and cancelled from several threads at
/// once (run under ThreadSanitizer by `make stress`): every completion handler
/// exactly once, identifiers unique, nothing left behind, and invalidation
/// afterwards; plus completions for a manager nobody holds.
final class SessionStormTests: SessionTransferTestCase {
    func testThousandTasksWithRandomResumeSuspendCancelFromManyThreads() throws {
        let nginx = try SharedServers.nginx()
        let environment = ProcessInfo.processInfo.environment
        let seed = UInt64(environment["AFN_STORM_SEED"] ?? "") ?? 0x5E55_1014
        let total = Int(environment["AFN_STORM_COUNT"] ?? "") ?? 1000
        print("SessionStormTests: seed \(seed), \(total) tasks (AFN_STORM_SEED / AFN_STORM_COUNT reproduce a run)")
        var generator = SeededGenerator(seed: seed)
        let steps: [StormStep] = (0..<total).map { index in
            let slow = index % 50 == 7
            var plan = StormPlan.allCases.randomElement(using: &generator)!
            if slow && !plan.cancels { plan = .resumeThenCancel }  // a slow body would take 8 s: always cancelled
            return StormStep(slow: slow, plan: plan, pause: UInt32.random(in: 0...300, using: &generator))
        }
        // A fifth thread cancels some tasks at random moments, racing the plans.
        let victims: [(index: Int, pause: UInt32)] = (0..<(total / 10)).map { _ in
            (Int.random(in: 0..<total, using: &generator), UInt32.random(in: 0...400, using: &generator))
        }

        let configuration = URLSessionConfiguration.default
        configuration.httpMaximumConnectionsPerHost = 8
        configuration.urlCache = nil
        let manager = makeManager(configuration)
        manager.responseSerializer = HTTPResponseSerializer()
        manager.completionQueue = DispatchQueue(label: "session-storm-completions", attributes: .concurrent)
        let group = DispatchGroup()
        manager.completionGroup = group

        struct StormOutcome { var calls = 0; var error: NSError?; var bytes: Int? }
        let outcomes = Locked<[Int: StormOutcome]>([:])
        let small = nginx.httpURL.appendingPathComponent("1k.bin")
        let slow = nginx.httpURL.appendingPathComponent("slow/4m.bin")

        // Created from several threads at once (rdar 17029580: duplicate identifiers).
        let created = Locked<[Int: URLSessionDataTask]>([:])
        let workers = 4
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for index in stride(from: worker, to: total, by: workers) {
                var request = URLRequest(url: steps[index].slow ? slow : small)
                request.timeoutInterval = 30
                let task = manager.dataTask(with: request, uploadProgress: nil, downloadProgress: nil) { _, object, error in
                    outcomes.withLock {
                        $0[index, default: StormOutcome()].calls += 1
                        $0[index]?.error = error.map { $0 as NSError }
                        $0[index]?.bytes = (object as? Data)?.count
                    }
                }
                created.withLock { $0[index] = task }
            }
        }
        let byIndex = created.value
        XCTAssertEqual(byIndex.count, total)
        let tasks: [URLSessionDataTask] = (0..<total).compactMap { byIndex[$0] }
        guard tasks.count == total else { return }

        let identifiers = tasks.map(\.taskIdentifier)
        XCTAssertEqual(Set(identifiers).count, total, "task identifiers are unique")
        XCTAssertTrue(identifiers.allSatisfy { $0 > 0 })
        for worker in 0..<workers {
            let mine = stride(from: worker, to: total, by: workers).map { identifiers[$0] }
            XCTAssertEqual(mine, mine.sorted(), "identifiers increase in creation order on each thread")
        }
        XCTAssertTrue(tasks.allSatisfy { $0.state == .suspended })
        XCTAssertEqual(manager.tasks.count, total)

        DispatchQueue.concurrentPerform(iterations: workers + 1) { worker in
            if worker == workers {
                for victim in victims {
                    usleep(victim.pause)
                    tasks[victim.index].cancel()
                }
                return
            }
            for index in stride(from: worker, to: total, by: workers) {
                let task = tasks[index]
                let pause = steps[index].pause
                switch steps[index].plan {
                case .resume:
                    task.resume()
                case .resumeSuspendResume:
                    task.resume(); usleep(pause); task.suspend(); usleep(pause); task.resume()
                case .cancelThenResume:
                    task.cancel(); task.resume()
                case .resumeThenCancel:
                    task.resume(); usleep(pause); task.cancel()
                case .suspendThenResume:
                    task.suspend(); task.resume()
                case .resumeSuspendCancel:
                    task.resume(); usleep(pause); task.suspend(); task.cancel()
                case .redundantCalls:
                    task.resume(); task.resume(); task.suspend(); task.suspend(); task.resume(); task.resume()
                }
            }
        }

        // No rescue: every plan ends in resume() or cancel(), so a task still suspended here is a lost resume.
        let settled = eventually(timeout: 60) { outcomes.value.count == total }
        let stuck = tasks.indices.filter { tasks[$0].state == .suspended }
        XCTAssertTrue(settled, "every task completed in time (seed \(seed))")
        XCTAssertEqual(stuck, [], "tasks left suspended: \(stuck.map { steps[$0].plan }) (seed \(seed))")
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success, "the completion group empties")

        let victimSet = Set(victims.map(\.index))
        let final = outcomes.value
        XCTAssertEqual(final.count, total, "every task completed (seed \(seed))")
        XCTAssertTrue(final.values.allSatisfy { $0.calls == 1 }, "every completion handler exactly once (seed \(seed))")
        for (index, task) in tasks.enumerated() {
            XCTAssertEqual(task.state, .completed, "task \(index) (seed \(seed))")
            guard let outcome = final[index] else { continue }
            if let error = outcome.error {
                XCTAssertEqual(error.domain, NSURLErrorDomain, "task \(index): \(error) (seed \(seed))")
                XCTAssertEqual(error.code, NSURLErrorCancelled, "only cancellation fails a task here: \(index) (seed \(seed))")
                XCTAssertTrue(steps[index].plan.cancels || victimSet.contains(index),
                              "task \(index) (\(steps[index].plan)) failed though nobody cancelled it (seed \(seed))")
            } else {
                XCTAssertFalse(steps[index].slow, "a slow task is always cancelled before its 8 s")
                XCTAssertEqual(outcome.bytes, 1024, "task \(index): suspend/resume keeps the body whole (seed \(seed))")
            }
        }
        XCTAssertTrue(eventually(timeout: 5) { manager.tasks.isEmpty }, "no task left in manager.tasks")

        let invalidated = expectation(description: "session invalidated")
        manager.setSessionDidBecomeInvalidBlock { _, _ in invalidated.fulfill() }
        manager.invalidateSessionCancelingTasks(false)
        wait(for: [invalidated], timeout: 10)
        XCTAssertTrue(outcomes.value.values.allSatisfy { $0.calls == 1 }, "still exactly once after invalidation")
    }

    func testCompletionsArriveExactlyOnceWithoutAStrongReferenceToTheManager() throws {
        let nginx = try SharedServers.nginx()
        server.route("/late") { _ in [.wait(0.3), .head(status: 200, headers: [("Content-Length", "4")]), .body(Data("late".utf8)), .end] }
        let box = WeakManagerBox()
        addTeardownBlock { box.value?.invalidateSessionCancelingTasks(true) }
        let total = 40
        let counts = Locked<[Int: Int]>([:])
        let errors = Locked<[Int: NSError]>([:])
        let duplicate = expectation(description: "a second completion of one task")
        duplicate.isInverted = true
        do {
            let manager = URLSessionManager(sessionConfiguration: nil)
            manager.responseSerializer = HTTPResponseSerializer()
            manager.completionQueue = DispatchQueue.global()
            box.value = manager
            for index in 0..<total {
                let target = index.isMultiple(of: 2) ? nginx.httpURL.appendingPathComponent("1k.bin") : url("/late")
                manager.dataTask(with: URLRequest(url: target), uploadProgress: nil, downloadProgress: nil) { _, _, error in
                    let calls = counts.withLock { table -> Int in
                        table[index, default: 0] += 1
                        return table[index] ?? 0
                    }
                    if let error { errors.withLock { $0[index] = error as NSError } }
                    if calls > 1 { duplicate.fulfill() }
                }.resume()
            }
        }
        // No strong reference to the manager from here on (the session may keep it, as 2.7's did).
        XCTAssertTrue(eventually(timeout: 30) { counts.value.count == total }, "every task completes")
        wait(for: [duplicate], timeout: 0.5)  // the window in which a second call would show
        XCTAssertTrue(counts.value.values.allSatisfy { $0 == 1 })
        XCTAssertTrue(errors.value.isEmpty, "\(errors.value)")
    }
}
