@testable import AFNetworking
import Foundation
import XCTest

/// The graph's state alone: events in, actions out, no queue and no I/O.
final class RequestGraphStateTests: XCTestCase {
    private let graph = ObjectIdentifier(NSObject.self)

    private func node(_ index: Int) -> RequestGraphNode { RequestGraphNode(name: "n\(index)", graph: graph, index: index) }

    private func enqueued(_ actions: [RequestGraphState.Action]) -> [Int] {
        actions.compactMap { if case .enqueue(let index, _) = $0 { return index } else { return nil } }
    }

    private func settled(_ actions: [RequestGraphState.Action]) -> [Int] {
        actions.compactMap { if case .cancelAndSettle(let index, _) = $0 { return index } else { return nil } }
    }

    private func report(_ actions: [RequestGraphState.Action]) -> RequestGraphReport? {
        actions.lazy.compactMap { if case .complete(let report) = $0 { return report } else { return nil } }.first
    }

    /// Adds `dependencies.count` operation nodes (node i depends on `dependencies[i]`).
    private func state(_ dependencies: [[Int]], hosts: [String?]? = nil, maxConcurrent: Int = 6, maxPerHost: Int = 0) -> RequestGraphState {
        var state = RequestGraphState()
        state.maxConcurrent = maxConcurrent
        state.maxPerHost = maxPerHost
        for (index, list) in dependencies.enumerated() {
            _ = state.add(node(index), dependencies: list, policy: .cancel, work: .operation(BlockOperation {}), host: hosts?[index] ?? nil)
        }
        return state
    }

    func testNothingStartsBeforeStartThenRootsStartInOrder() {
        var state = state([[], [0], []])
        XCTAssertEqual(enqueued(state.start()), [0, 2])
        XCTAssertEqual(enqueued(state.operationFinished(0, outcome: .succeeded)), [1])
        _ = state.operationFinished(2, outcome: .succeeded)
        let last = state.operationFinished(1, outcome: .succeeded)
        XCTAssertEqual(report(last)?.allSucceeded, true)
        XCTAssertTrue(state.isFinished)
    }

    /// A running node keeps what its operation did when the graph is
    /// cancelled meanwhile: one whose answer was already complete succeeded.
    func testARunningNodeThatSucceededDuringTheCancelStaysASuccess() {
        var state = state([[], []])
        _ = state.start()
        _ = state.cancel()
        _ = state.operationFinished(0, outcome: .succeeded)
        let last = state.operationFinished(1, outcome: .cancelled)
        guard case .done(.succeeded) = state.nodes[0].phase else { return XCTFail("\(state.nodes[0].phase)") }
        guard case .done(.cancelled) = state.nodes[1].phase else { return XCTFail("\(state.nodes[1].phase)") }
        XCTAssertNotNil(report(last))
    }

    func testCancelMakesWaitingNodesCancelledNotSkippedUnlessADependencyHadFailedFirst() {
        var state = state([[], [0], [1], []])
        _ = state.start()
        _ = state.operationFinished(3, outcome: .failed(URLError(.badServerResponse)))
        var more = state
        // n0 running; n1 and n2 waiting on it: the cancel ends them cancelled.
        let actions = state.cancel()
        XCTAssertEqual(settled(actions), [1, 2])
        guard case .settling(_, .cancelled) = state.nodes[2].phase else { return XCTFail("\(state.nodes[2].phase)") }
        // A node one of whose dependencies had failed before the cancel (the
        // other still running) is skipped, naming it.
        XCTAssertTrue(enqueued(more.add(node(4), dependencies: [3, 0], policy: .cancel, work: .operation(BlockOperation {}), host: nil)).isEmpty)
        XCTAssertEqual(settled(more.cancel()), [1, 2, 4])
        guard case .settling(_, .skipped(let because)) = more.nodes[4].phase, because == node(3) else {
            return XCTFail("\(more.nodes[4].phase)")
        }
    }

    /// A node's fate under a cancel does not depend on the order nodes were
    /// added: a builder the cancel ends is not a failure its dependents are
    /// skipped for, and a node skipped before the cancel (its operation still
    /// settling) is one.
    func testCancelDecidesFromWhatHadEndedBeforeItNotFromTheOrderOfNodes() {
        var state = RequestGraphState()
        _ = state.add(node(0), dependencies: [], policy: .cancel, work: .operation(BlockOperation {}), host: nil)
        _ = state.add(node(1), dependencies: [0], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        _ = state.add(node(2), dependencies: [1], policy: .cancel, work: .operation(BlockOperation {}), host: nil)
        _ = state.start()
        _ = state.cancel()
        guard case .done(.cancelled) = state.nodes[1].phase else { return XCTFail("\(state.nodes[1].phase)") }
        guard case .settling(_, .cancelled) = state.nodes[2].phase else { return XCTFail("n2 is cancelled, not skipped: \(state.nodes[2].phase)") }

        var skippedFirst = self.state([[], [0], [1]])
        _ = skippedFirst.start()
        _ = skippedFirst.operationFinished(0, outcome: .failed(URLError(.badServerResponse)))
        guard case .settling(_, .skipped) = skippedFirst.nodes[1].phase else { return XCTFail("\(skippedFirst.nodes[1].phase)") }
        // n2 waits on n1, skipped but still settling when the cancel comes.
        var beforeSettled = RequestGraphState()
        _ = beforeSettled.add(node(0), dependencies: [], policy: .cancel, work: .operation(BlockOperation {}), host: nil)
        _ = beforeSettled.add(node(1), dependencies: [0], policy: .cancel, work: .operation(BlockOperation {}), host: nil)
        _ = beforeSettled.add(node(2), dependencies: [1], policy: .runAnyway, work: .operation(BlockOperation {}), host: nil)
        _ = beforeSettled.add(node(3), dependencies: [1], policy: .cancel, work: .operation(BlockOperation {}), host: nil)
        _ = beforeSettled.start()
        _ = beforeSettled.operationFinished(0, outcome: .failed(URLError(.badServerResponse)))
        _ = beforeSettled.cancel()
        guard case .settling(_, .skipped(let because)) = beforeSettled.nodes[3].phase, because == node(1) else {
            return XCTFail("n3's dependency was skipped before the cancel: \(beforeSettled.nodes[3].phase)")
        }
    }

    /// `.runAnyway` after a builder that threw: the dependent's builder reads
    /// a finished, cancelled stand-in for it, not a trap.
    func testADependencyWithoutAnOperationIsAFinishedCancelledStandIn() {
        var state = RequestGraphState()
        _ = state.add(node(0), dependencies: [], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        _ = state.add(node(1), dependencies: [0], policy: .runAnyway, work: .builder { _ in BlockOperation {} }, host: nil)
        _ = state.start()
        let actions = state.built(0, .failure(URLError(.badURL)), host: nil)
        let results = actions.lazy.compactMap { action -> RequestGraphResults? in
            if case .build(1, _, let results) = action { return results } else { return nil }
        }.first
        guard let operation = results?[node(0)] else { return XCTFail("n1 is built: \(actions)") }
        XCTAssertTrue(operation.isFinished)
        XCTAssertTrue(operation.isCancelled)
    }

    /// A builder that throws after the graph's cancel reached it ends cancelled.
    func testABuilderThatThrowsAfterTheCancelEndsCancelled() {
        var state = RequestGraphState()
        _ = state.add(node(0), dependencies: [], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        _ = state.start()
        _ = state.cancel()
        let last = state.built(0, .failure(URLError(.cancelled)), host: nil)
        guard case .done(.cancelled) = state.nodes[0].phase else { return XCTFail("\(state.nodes[0].phase)") }
        XCTAssertNotNil(report(last))
    }

    /// Paused, nothing new starts: a request built meanwhile waits for `resume()`.
    func testARequestBuiltWhilePausedStartsOnlyOnResume() {
        var state = RequestGraphState()
        _ = state.add(node(0), dependencies: [], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        _ = state.start()
        _ = state.pause()
        XCTAssertEqual(enqueued(state.built(0, .success(BlockOperation {}), host: nil)), [])
        guard case .built = state.nodes[0].phase else { return XCTFail("\(state.nodes[0].phase)") }
        XCTAssertEqual(enqueued(state.resume()), [0])
    }

    /// A graph cancelled before it was started still ends, once.
    func testAGraphCancelledBeforeStartEnds() {
        var state = RequestGraphState()
        _ = state.add(node(0), dependencies: [], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        XCTAssertNotNil(report(state.cancel()))
        XCTAssertTrue(state.isFinished)
        XCTAssertTrue(state.start().isEmpty)
    }

    func testTheCapsHoldNodesBackUntilASlotFrees() {
        var state = state([[], [], [], []], hosts: ["a", "a", "b", "b"], maxConcurrent: 3, maxPerHost: 1)
        XCTAssertEqual(enqueued(state.start()), [0, 2])
        XCTAssertEqual(enqueued(state.operationFinished(0, outcome: .succeeded)), [1])
        state.maxConcurrent = 1
        XCTAssertEqual(enqueued(state.operationFinished(2, outcome: .succeeded)), [])
        XCTAssertEqual(enqueued(state.operationFinished(1, outcome: .succeeded)), [3])
    }

    func testABuiltRequestWaitsForRoomOnItsHost() {
        var state = state([[]], hosts: ["a"], maxPerHost: 1)
        _ = state.add(node(1), dependencies: [], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        _ = state.add(node(2), dependencies: [], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        XCTAssertEqual(enqueued(state.start()), [0], "the builders are asked, n0 runs")
        // n1 builds a request for the busy host: it waits, counted as running.
        XCTAssertEqual(enqueued(state.built(1, .success(BlockOperation {}), host: "a")), [])
        guard case .built = state.nodes[1].phase else { return XCTFail("\(state.nodes[1].phase)") }
        XCTAssertEqual(state.runningCount, 3)
        XCTAssertEqual(enqueued(state.built(2, .success(BlockOperation {}), host: "b")), [2], "another host has room")
        XCTAssertEqual(enqueued(state.operationFinished(0, outcome: .succeeded)), [1])
        // A cancel settles a built request that was still waiting.
        var waiting = state
        _ = waiting.operationFinished(2, outcome: .succeeded)
        _ = waiting.add(node(3), dependencies: [], policy: .cancel, work: .builder { _ in BlockOperation {} }, host: nil)
        _ = waiting.built(3, .success(BlockOperation {}), host: "a")
        XCTAssertEqual(settled(waiting.cancel()), [3])
    }

    func testACycleIsNamedFromTheNodeBeingAdded() {
        let state = state([[], [0], [1]])
        XCTAssertEqual(state.cycle(adding: "new", dependencies: [2], dependents: [0]), ["new", "n2", "n1", "n0"])
        XCTAssertNil(state.cycle(adding: "new", dependencies: [2], dependents: []))
        XCTAssertNil(state.cycle(adding: "new", dependencies: [], dependents: [0]))
    }

    func testASecondFinishOfANodeChangesNothing() {
        var state = state([[]])
        _ = state.start()
        XCTAssertNotNil(report(state.operationFinished(0, outcome: .succeeded)))
        XCTAssertTrue(state.operationFinished(0, outcome: .cancelled).isEmpty)
    }
}
