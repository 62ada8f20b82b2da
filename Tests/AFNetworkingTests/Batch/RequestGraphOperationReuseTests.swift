import AFNetworking
import Foundation
import XCTest

/// A graph remembers which operations are in a graph by address; once a
/// finished node's operation is freed, a builder's new operation may get the
/// same address, and must still be taken (it was refused as
/// `alreadyEnqueued`, failing long chains of built nodes such as a
/// `ResumableBatch`'s).
final class RequestGraphOperationReuseTests: XCTestCase {
    func testBuiltOperationsAtAFreedOperationsAddressAreTaken() throws {
        let graph = RequestGraph()
        var previous: RequestGraphNode?
        for index in 0..<200 {
            previous = try graph.add(name: "n\(index)", dependencies: previous.map { [$0] } ?? []) { _ in BlockOperation {} }
        }
        let report = Locked<RequestGraphReport?>(nil)
        let done = expectation(description: "graph")
        graph.setCompletionBlock(queue: .global()) { report.value = $0; done.fulfill() }
        graph.start()
        wait(for: [done], timeout: 30)
        let outcomes = try XCTUnwrap(report.value).outcomes
        XCTAssertEqual(outcomes.count, 200)
        let failed = outcomes.filter { if case .succeeded = $0.value { return false }; return true }
        XCTAssertEqual(failed.count, 0, "\(failed.map { "\($0.key): \($0.value)" }.sorted().prefix(3))")
    }

    /// An operation in a graph that is alive is still refused by another.
    func testALiveOperationIsStillInOneGraphOnly() throws {
        let operation = BlockOperation {}
        let first = RequestGraph(), second = RequestGraph()
        try first.add(operation)
        XCTAssertThrowsError(try second.add(operation)) { XCTAssertEqual($0 as? RequestGraphError, .alreadyEnqueued) }
    }
}
